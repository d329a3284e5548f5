// etcd for real (live/etcd/, live/servers.hpp's etcd nodes): the gateway
// codec against the answers etcd 3.4.23 gives, and a real etcd started,
// asked, paused, crashed and restarted on loopback.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include <utility>  // before Asio (Boost 1.74)

#include <boost/asio.hpp>

#include "live/etcd/gateway.hpp"
#include "live/etcd/http.hpp"
#include "live/servers.hpp"
#include "lockalgos/coordination_common.hpp"
#include "tests/live_support.hpp"

namespace live_etcd_test {

using namespace locksim;
using namespace locksim::live;
using locksim::live::testing::Child;
using locksim::live::testing::eventually;
using nlohmann::json;

namespace fs = std::filesystem;

namespace {

coord::Request txn(const std::string& key, std::int64_t lease, const std::string& prefix = "/lock/") {
  coord::Request r = coord_request(coord::Op::PutIfAbsent, key, lease);
  r.data = prefix;
  return r;
}

coord::Request grant(Duration ttl) {
  coord::Request r = coord_request(coord::Op::LeaseGrant);
  r.ttl = ttl;
  return r;
}

// One exchange with a real etcd, as a live client makes it.
etcd::Answer ask(std::uint16_t port, const coord::Request& r, Duration timeout = Duration::s(5)) {
  const auto res = etcd::post({"127.0.0.1", port}, etcd::call_of(r), timeout);
  REQUIRE_MESSAGE(res.has_value(), "etcd did not answer " << coord::describe(r));
  return etcd::answer_of(r, res->status, res->body);
}

// The first `n` lines of a stream's answer (fewer if it ends, or `within` passes).
std::vector<std::string> stream_lines(std::uint16_t port, const etcd::HttpCall& call, std::size_t n, Duration within) {
  boost::asio::io_context io;
  std::vector<std::string> lines;
  bool ended = false;
  auto c = etcd::HttpConnection::open(io, {"127.0.0.1", port});
  c->stream(call, [&](std::string_view line) { lines.emplace_back(line); }, [&] { ended = true; });
  const Deadline deadline(within);
  while (lines.size() < n && !ended && !deadline.passed()) {
    io.restart();
    io.run_for(std::chrono::milliseconds(20));
  }
  c->close();
  return lines;
}

}  // namespace

// --- The codec, against answers etcd 3.4.23 gave (recorded with curl) ----------

TEST_CASE("base64 is RFC 4648's, padding and all, and anything else is refused") {
  CHECK(etcd::base64("") == "");
  CHECK(etcd::base64("/lock/abc") == "L2xvY2svYWJj");
  CHECK(etcd::base64("/w/k") == "L3cvaw==");
  CHECK(etcd::base64("v") == "dg==");
  CHECK(etcd::base64(std::string("\0\xff", 2)) == "AP8=");
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", "abcd", std::string("\0\x01\xfe\xff", 4)})
    CHECK(etcd::unbase64(etcd::base64(s)) == s);
  CHECK_THROWS_AS(etcd::unbase64("L2xvY2svYWJ"), Error);   // not a multiple of 4
  CHECK_THROWS_AS(etcd::unbase64("L2x*Y2svYWJj"), Error);  // not of the alphabet
  CHECK_THROWS_AS(etcd::unbase64("dg=a"), Error);          // padding then data
}

TEST_CASE("a prefix's range ends at its last byte below 0xff plus one, as clientv3's GetPrefixRangeEnd") {
  CHECK(etcd::prefix_end("/lock/") == "/lock0");
  CHECK(etcd::prefix_end("a\xff") == "b");
  CHECK(etcd::prefix_end(std::string("\xff\xff")) == std::string(1, '\0'));
}

TEST_CASE("the Mutex's Txn is sent as clientv3 builds it: compare create revision 0, put with the lease, get the first-created") {
  const etcd::HttpCall c = etcd::call_of(txn("/lock/694d", 0x694d));
  CHECK(c.target == "/v3/kv/txn");
  CHECK_FALSE(c.stream);
  const json j = json::parse(c.body);
  const json cmp = j["compare"][0];
  CHECK(cmp["target"] == "CREATE");
  CHECK(cmp["result"] == "EQUAL");
  CHECK(cmp["create_revision"] == "0");
  CHECK(cmp["key"] == etcd::base64("/lock/694d"));
  CHECK(j["success"][0]["request_put"]["lease"] == std::to_string(0x694d));
  CHECK(j["failure"][0]["request_range"]["key"] == etcd::base64("/lock/694d"));
  for (const char* branch : {"success", "failure"}) {
    const json owner = j[branch][1]["request_range"];
    CHECK(owner["key"] == etcd::base64("/lock/"));
    CHECK(owner["range_end"] == etcd::base64("/lock0"));
    CHECK(owner["sort_target"] == "CREATE");
    CHECK(owner["sort_order"] == "ASCEND");
    CHECK(owner["limit"] == "1");
  }
}

TEST_CASE("a watch starts at the revision the request names, and a lease TTL goes in whole seconds") {
  coord::Request w = coord_request(coord::Op::WatchDelete, "/lock/1", 42);
  const etcd::HttpCall c = etcd::call_of(w);
  CHECK(c.target == "/v3/watch");
  CHECK(c.stream);
  CHECK(json::parse(c.body)["create_request"]["start_revision"] == "42");
  CHECK_FALSE(json::parse(etcd::call_of(coord_request(coord::Op::WatchDelete, "/k")).body)["create_request"].contains("start_revision"));
  CHECK(json::parse(etcd::call_of(grant(Duration::s(10))).body)["TTL"] == "10");
  CHECK_THROWS_AS(etcd::call_of(coord_request(coord::Op::Create, "/zk")), Error);
}

TEST_CASE("etcd 3.4.23's answers read as the model's replies") {
  const std::string header = R"("header":{"cluster_id":"17765137548823575923","member_id":"6090535317558273548","revision":"2","raft_term":"2"})";
  const etcd::Answer granted = etcd::answer_of(grant(Duration::s(1)), 200, "{" + header + R"(,"ID":"2741744542614492934","TTL":"2"})");
  CHECK(granted.reply.ok);
  CHECK(granted.reply.id == 2741744542614492934);
  CHECK(granted.reply.ttl == Duration::s(2));
  CHECK(granted.revision == 2);

  // The Txn that created the key: myRev is the header's revision, the owner the first-created key.
  const etcd::Answer created = etcd::answer_of(txn("/lock/abc", 1), 200, "{" + header +
      R"(,"succeeded":true,"responses":[{"response_put":{"header":{"revision":"2"}}},{"response_range":{"header":{"revision":"2"},"kvs":[{"key":"L2xvY2svYWJj","create_revision":"2","mod_revision":"2","version":"1","lease":"2741744542614492937"}],"count":"1"}}]})");
  CHECK(created.reply.id == 2);
  REQUIRE(created.reply.nodes.size() == 1);
  CHECK(created.reply.nodes[0].path == "/lock/abc");
  CHECK(created.reply.nodes[0].revision == 2);
  // The Txn that found it there ("succeeded" left out): myRev is the key's create revision.
  const etcd::Answer found = etcd::answer_of(txn("/lock/abc", 1), 200, R"({"header":{"revision":"7"},"responses":[{"response_range":{"header":{"revision":"7"},"kvs":[{"key":"L2xvY2svYWJj","create_revision":"2","mod_revision":"2","version":"1","lease":"1"}],"count":"1"}},{"response_range":{"header":{"revision":"7"},"kvs":[{"key":"L2xvY2svYWJj","create_revision":"2","mod_revision":"2","version":"1","lease":"1"}],"count":"1"}}]})");
  CHECK(found.reply.id == 2);
  CHECK(found.revision == 7);

  const etcd::Answer renewed = etcd::answer_of(coord_request(coord::Op::KeepAlive, "", 5), 200,
      "{\"result\":{" + header + R"(,"ID":"2741744542614492937","TTL":"10"}})" + "\n");
  CHECK(renewed.reply.ok);
  CHECK(renewed.reply.ttl == Duration::s(10));
  // An unknown (or expired and revoked) lease: TTL left out.
  const etcd::Answer unknown = etcd::answer_of(coord_request(coord::Op::KeepAlive, "", 12345), 200,
      "{\"result\":{" + header + R"(,"ID":"12345"}})");
  CHECK_FALSE(unknown.reply.ok);
  CHECK(unknown.reply.error == "LEASE_NOT_FOUND");

  const etcd::Answer no_lease = etcd::answer_of(txn("/lock/abc", 999), 404,
      R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})");
  CHECK_FALSE(no_lease.reply.ok);
  CHECK(no_lease.reply.error == "LEASE_NOT_FOUND");

  CHECK(etcd::answer_of(coord_request(coord::Op::DeleteKey, "/lock/abc"), 200, "{" + header + R"(,"deleted":"1"})").reply.id == 1);
  CHECK(etcd::answer_of(coord_request(coord::Op::DeleteKey, "/lock/abc"), 200, "{" + header + "}").reply.id == 0);
  const etcd::Answer range = etcd::answer_of(coord_request(coord::Op::Range, "/lock/"), 200, "{" + header +
      R"(,"kvs":[{"key":"L2xvY2svYWJj","create_revision":"2","mod_revision":"2","version":"1","lease":"1"}],"count":"1"})");
  CHECK(range.reply.id == 2);  // the header's revision: where a watch of these keys starts
  REQUIRE(range.reply.nodes.size() == 1);
  CHECK(range.reply.nodes[0].path == "/lock/abc");
  CHECK_THROWS_AS(etcd::answer_of(coord_request(coord::Op::Range, "/lock/"), 200, "<html>"), Error);
}

TEST_CASE("a watch stream's messages: created, then each event with its type and revisions") {
  const etcd::WatchMessage created = etcd::watch_message_of(
      R"({"result":{"header":{"cluster_id":"1","member_id":"2","revision":"4","raft_term":"2"},"created":true}})");
  CHECK(created.created);
  CHECK(created.events.empty());
  const etcd::WatchMessage put = etcd::watch_message_of(
      R"({"result":{"header":{"revision":"4"},"events":[{"kv":{"key":"L3cvaw==","create_revision":"4","mod_revision":"4","version":"1","value":"dg=="}}]}})");
  REQUIRE(put.events.size() == 1);
  CHECK_FALSE(put.events[0].deleted);
  CHECK(put.events[0].key == "/w/k");
  CHECK(put.events[0].create_revision == 4);
  const etcd::WatchMessage del = etcd::watch_message_of(
      R"({"result":{"header":{"revision":"5"},"events":[{"type":"DELETE","kv":{"key":"L3cvaw==","mod_revision":"5"},"prev_kv":{"key":"L3cvaw==","create_revision":"4","mod_revision":"4","version":"1","lease":"77"}}]}})");
  REQUIRE(del.events.size() == 1);
  CHECK(del.events[0].deleted);
  CHECK(del.events[0].mod_revision == 5);
  CHECK(del.events[0].create_revision == 4);  // from prev_kv
  CHECK(del.events[0].lease == 77);
  CHECK_THROWS_AS(etcd::watch_message_of(R"({"error":{"grpc_code":14,"message":"etcdserver: no leader"}})"), Error);
}

// --- A real etcd ------------------------------------------------------------------

TEST_CASE("a real etcd answers the Mutex's requests as the codec reads them") {
  Supervisor sup;
  const std::uint16_t port = sup.start_etcd("etcd1");
  for (const Endpoint& e : listening_addresses(sup.pid("etcd1"))) CHECK(e.host == "127.0.0.1");
  // The shortest lease, with the default 1 s election timeout: 1 s asked, 2 s granted.
  const etcd::Answer lease = ask(port, grant(Duration::s(1)));
  REQUIRE(lease.reply.ok);
  CHECK(lease.reply.ttl == Duration::s(2));
  CHECK(lease.revision == 1);  // a fresh store
  const std::int64_t id = lease.reply.id;
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(id));
  const std::string key = std::string("/lock/") + hex;

  const etcd::Answer first = ask(port, txn(key, id));
  REQUIRE(first.reply.ok);
  CHECK(first.reply.id == 2);  // the first key of a fresh store: revision 2
  REQUIRE(first.reply.nodes.size() == 1);
  CHECK(first.reply.nodes[0].path == key);
  const etcd::Answer again = ask(port, txn(key, id));
  CHECK(again.reply.id == 2);  // there already: its create revision, and no new revision
  CHECK(again.revision == 2);
  const etcd::Answer range = ask(port, coord_request(coord::Op::Range, "/lock/"));
  REQUIRE(range.reply.nodes.size() == 1);
  CHECK(range.reply.id == 2);

  const etcd::Answer renewed = ask(port, coord_request(coord::Op::KeepAlive, "", id));
  CHECK(renewed.reply.ok);
  CHECK(renewed.reply.ttl == Duration::s(2));
  const etcd::Answer unknown = ask(port, coord_request(coord::Op::KeepAlive, "", id + 1));
  CHECK_FALSE(unknown.reply.ok);
  CHECK(unknown.reply.error == "LEASE_NOT_FOUND");
  const etcd::Answer no_lease = ask(port, txn("/lock/other", id + 1));
  CHECK_FALSE(no_lease.reply.ok);
  CHECK(no_lease.reply.error == "LEASE_NOT_FOUND");

  CHECK(ask(port, coord_request(coord::Op::DeleteKey, key)).reply.id == 1);
  const etcd::Answer gone = ask(port, coord_request(coord::Op::DeleteKey, key));
  CHECK(gone.reply.id == 0);
  CHECK(gone.revision == 3);  // a delete of nothing moves no revision
}

TEST_CASE("an etcd node takes its flags from the supervisor alone, whatever ETCD_ variables the caller has") {
  ::setenv("ETCD_NAME", "someone-else", 1);
  ::setenv("ETCD_LISTEN_CLIENT_URLS", "http://0.0.0.0:2379", 1);
  Supervisor sup;
  std::uint16_t port = 0;
  CHECK_NOTHROW(port = sup.start_etcd("etcd1"));
  ::unsetenv("ETCD_NAME");
  ::unsetenv("ETCD_LISTEN_CLIENT_URLS");
  for (const Endpoint& e : listening_addresses(sup.pid("etcd1"))) CHECK(e.host == "127.0.0.1");
  CHECK(ask(port, grant(Duration::s(5))).reply.ok);
}

TEST_CASE("a paused etcd answers nothing until SIGCONT, and a crashed one restarts on its data with its lease") {
  Supervisor sup;
  const std::uint16_t port = sup.start_etcd("etcd1", {.heartbeat = Duration::ms(20), .election_timeout = Duration::ms(200)});
  const etcd::Answer lease = ask(port, grant(Duration::s(30)));
  REQUIRE(lease.reply.ok);
  REQUIRE(ask(port, txn("/lock/a", lease.reply.id)).reply.ok);
  sup.pause("etcd1");
  CHECK_FALSE(etcd::post({"127.0.0.1", port}, etcd::call_of(coord_request(coord::Op::Range, "/lock/")), Duration::ms(500)));
  sup.resume("etcd1");
  CHECK(ask(port, coord_request(coord::Op::Range, "/lock/")).reply.nodes.size() == 1);
  sup.crash("etcd1");
  CHECK_FALSE(etcd::post({"127.0.0.1", port}, etcd::call_of(coord_request(coord::Op::Range, "/lock/")), Duration::ms(300)));
  sup.restart("etcd1");
  CHECK(sup.port("etcd1") == port);
  const etcd::Answer after = ask(port, coord_request(coord::Op::Range, "/lock/"));
  REQUIRE(after.reply.nodes.size() == 1);  // the WAL kept the key and its lease
  CHECK(after.reply.nodes[0].revision == 2);
  CHECK(ask(port, coord_request(coord::Op::KeepAlive, "", lease.reply.id)).reply.ok);
}

TEST_CASE("a real etcd revokes an unrenewed lease and deletes its key, which a watch from the range's revision sees") {
  Supervisor sup;
  const std::uint16_t port = sup.start_etcd("etcd1");
  const etcd::Answer lease = ask(port, grant(Duration::s(2)));
  REQUIRE(lease.reply.ok);
  ask(port, txn("/lock/a", lease.reply.id));
  const std::int64_t seen_at = ask(port, coord_request(coord::Op::Range, "/lock/")).reply.id;
  const auto expired_within = Deadline(Duration::s(5));
  CHECK(eventually([&] { return ask(port, coord_request(coord::Op::Range, "/lock/")).reply.nodes.empty(); },
                   Duration::s(5), Duration::ms(50)));
  CHECK(expired_within.left() < Duration::s(3) + Duration::ms(100));  // 2 s and the revoke loop's 500 ms
  CHECK_FALSE(ask(port, coord_request(coord::Op::KeepAlive, "", lease.reply.id)).reply.ok);
  // Opened after the key is gone, from the revision it was seen at: the delete is not missed.
  const std::vector<std::string> lines =
      stream_lines(port, etcd::call_of(coord_request(coord::Op::WatchDelete, "/lock/a", seen_at)), 2, Duration::s(5));
  REQUIRE(lines.size() == 2);
  CHECK(etcd::watch_message_of(lines[0]).created);
  // From the range's revision, which is the key's creation: its PUT, then its DELETE.
  const etcd::WatchMessage m = etcd::watch_message_of(lines[1]);
  REQUIRE(m.events.size() == 2);
  CHECK_FALSE(m.events[0].deleted);
  CHECK(m.events[1].deleted);
  CHECK(m.events[1].key == "/lock/a");
  CHECK(m.events[1].mod_revision == seen_at + 1);
}

TEST_CASE("the proxy's HTTP/1.1 framing cuts a request with its body, a chunked answer chunk by chunk, and refuses what is not HTTP") {
  const Framing cut = etcd::http_framing();
  const std::string request = "POST /v3/kv/range HTTP/1.1\r\nHost: 127.0.0.1:1\r\nContent-Length: 13\r\n\r\n{\"key\":\"YQ\"}";
  CHECK(cut(request) == std::nullopt);  // 13 bytes announced, 12 there: not all there yet
  const std::string whole = "POST /v3/kv/range HTTP/1.1\r\ncontent-length: 12\r\n\r\n{\"key\":\"YQ\"}";
  CHECK(cut(whole + "POST") == std::optional<std::size_t>(whole.size()));
  CHECK(cut(whole.substr(0, whole.size() - 1)) == std::nullopt);  // not all there yet
  CHECK(cut("DELETE / HTTP/1.1\r\n\r\n") == std::optional<std::size_t>(21));  // a method of hex letters is a head
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  const std::string chunk = "1b\r\n{\"result\":{\"created\":true}}\r\n";
  CHECK(cut(head + chunk) == std::optional<std::size_t>(head.size()));
  CHECK(cut(chunk + "0\r\n\r\n") == std::optional<std::size_t>(chunk.size()));
  CHECK(cut(chunk.substr(0, 10)) == std::nullopt);
  CHECK(cut("0\r\n\r\nHTTP") == std::optional<std::size_t>(5));
  CHECK(cut("1b") == std::nullopt);  // a chunk's size, or a head's first letters: not yet known
  CHECK_THROWS_AS(cut("\x16\x03\x01 a TLS hello"), Error);
  CHECK_THROWS_AS(cut("5\r\nabcdeXX"), Error);  // a chunk without its CRLF
}

}  // namespace live_etcd_test
