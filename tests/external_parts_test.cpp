// The parts an external client's run is made of, each on its own: the
// storage server (live/external/storage_server.hpp) over real sockets, and
// the Redis observer (live/external/redis_observer.hpp) between a client and
// a real redis-server. A small hub stands in for the live run.
#include <utility>  // before Asio (Boost 1.74)

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>
#include <thread>

#include "live/blocking_client.hpp"
#include "live/external/adapter_process.hpp"
#include "live/external/redis_observer.hpp"
#include "live/external/storage_server.hpp"
#include "live/servers.hpp"
#include "tests/live_support.hpp"

namespace external_parts_test {

using namespace locksim;
using namespace locksim::live;
using namespace locksim::live::external;
namespace asio = boost::asio;
using json = nlohmann::json;
using locksim::live::testing::eventually;
using locksim::live::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// The live run's side, as little of it as the parts need: a counter for a
// storage (no fencing), each reply after `reply_delay` (the first request's
// only, if `first_only`), or never for a request while `dropping`.
class Hub final : public LiveHub {
 public:
  Hub() {
    client1 = trace_.add_process("client1", ProcessRole::Client);
    client2 = trace_.add_process("client2", ProcessRole::Client);
    storage = trace_.add_process("storage", ProcessRole::Storage);
    node = trace_.add_process("redis1", ProcessRole::LockNode);
    trace_.want_details();
  }
  asio::io_context& io() override { return io_; }
  const ScenarioClock& clock() const override { return clock_; }
  Trace& trace() override { return trace_; }
  Kind kind_of(ProcId p) const override { return p == storage ? Kind::Storage : p == node ? Kind::Node : Kind::Other; }
  std::uint16_t port_for(ProcId, ProcId) const override { return 0; }
  const resp::Names& names() const override { return names_; }
  void call_storage(ProcId client, const storage::Request& req, std::uint64_t,
                    std::function<void(storage::Reply, std::uint64_t)> done) override {
    asked.push_back(client);
    if (dropping) return;
    storage::Reply reply{true, counter, {}};
    if (req.op == storage::Request::Op::Write) counter = reply.value = req.value;
    const bool slow = reply_delay > std::chrono::milliseconds(0) && (!first_only || asked.size() == 1);
    auto timer = std::make_shared<asio::steady_timer>(io_, slow ? reply_delay : std::chrono::milliseconds(0));
    timer->async_wait([timer, reply, done, this](const boost::system::error_code&) { done(reply, next_message()); });
  }
  std::uint64_t observed(ProcId, ProcId, std::uint64_t, const redis::Request&, const redis::Reply&) override { return 0; }
  std::uint64_t next_message() override { return next_id_++; }
  // No coordination service here (etcd's hooks: nothing to learn, no revision to wait for).
  void coord_sent(ProcId, ProcId, const coord::Request&) override {}
  std::uint64_t observed_coord(ProcId, ProcId, std::uint64_t, const coord::Request*, const Payload&) override {
    return next_message();
  }
  void after_revision(ProcId, std::int64_t, std::function<void()> f) override { f(); }

  // Runs the context on a thread of its own until stop().
  void start() {
    thread_ = std::thread([this] {
      auto work = asio::make_work_guard(io_);
      io_.run();
    });
  }
  void stop() {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }
  ~Hub() override { stop(); }

  std::vector<const TraceEvent*> events(Ev kind, ProcId at) const {
    std::vector<const TraceEvent*> out;
    for (const TraceEvent& e : trace_.events())
      if (e.kind == kind && e.process == at) out.push_back(&e);
    return out;
  }

  ProcId client1, client2, storage, node;
  std::int64_t counter = 0;
  bool dropping = false;
  std::chrono::milliseconds reply_delay{0};
  bool first_only = false;
  std::vector<ProcId> asked;

 private:
  asio::io_context io_;
  ScenarioClock clock_{RealClock::now(), 1};
  Trace trace_;
  resp::Names names_;
  std::uint64_t next_id_ = 1;
  std::thread thread_;
};

// A line-at-a-time connection to a port, as an adapter's storage client.
class LineClient {
 public:
  explicit LineClient(std::uint16_t port) : socket_(io_) {
    socket_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  void send(const std::string& line) { asio::write(socket_, asio::buffer(line + "\n")); }
  json receive() {
    asio::read_until(socket_, buffer_, '\n');
    std::istream in(&buffer_);
    std::string line;
    std::getline(in, line);
    return json::parse(line);
  }
  // Whether the server closed the connection (within a second).
  bool closed_by_server() {
    socket_.non_blocking(false);
    timeval tv{1, 0};
    ::setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char c;
    boost::system::error_code ec;
    socket_.read_some(asio::buffer(&c, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::socket socket_;
  asio::streambuf buffer_;
};

}  // namespace

TEST_CASE("the storage server answers an adapter's reads and writes, and knows the client by its port") {
  Hub hub;
  std::vector<std::string> failures;
  StorageServer server(hub, hub.storage, [&](ProcId, const std::string& why) { failures.push_back(why); });
  const std::uint16_t p1 = server.port_for(hub.client1), p2 = server.port_for(hub.client2);
  CHECK(p1 != p2);
  CHECK(server.port_for(hub.client1) == p1);
  hub.start();
  LineClient c1(p1), c2(p2);
  c1.send(R"({"op":"read"})");
  CHECK(c1.receive() == json{{"ok", true}, {"value", 0}});
  c2.send(R"({"op":"write","value":5,"token":3})");
  CHECK(c2.receive()["value"] == 5);
  c1.send(R"({"op":"read"})");
  CHECK(c1.receive()["value"] == 5);
  hub.stop();
  CHECK(hub.asked == std::vector<ProcId>{hub.client1, hub.client2, hub.client1});
  CHECK(failures.empty());
  // The client's side of each exchange: its request sent, its reply delivered.
  CHECK(hub.events(Ev::Sent, hub.client1).size() == 2);
  CHECK(hub.events(Ev::Delivered, hub.client1).size() == 2);
  REQUIRE(hub.events(Ev::Sent, hub.client2).size() == 1);
  CHECK(hub.events(Ev::Sent, hub.client2)[0]->peer == hub.storage);
}

TEST_CASE("the storage server's replies keep the order of a connection's requests, however late the storage answers") {
  Hub hub;
  hub.reply_delay = std::chrono::milliseconds(200);
  hub.first_only = true;
  StorageServer server(hub, hub.storage, [](ProcId, const std::string&) {});
  const std::uint16_t port = server.port_for(hub.client1);
  hub.start();
  LineClient c(port);
  c.send(R"({"op":"write","value":1})");  // answered 200 ms late
  c.send(R"({"op":"write","value":2})");  // answered at once, written second
  CHECK(c.receive()["value"] == 1);
  CHECK(c.receive()["value"] == 2);
}

TEST_CASE("a storage request that is not the protocol stops the run, naming the client, and closes its connection") {
  Hub hub;
  std::vector<std::pair<ProcId, std::string>> failures;
  StorageServer server(hub, hub.storage, [&](ProcId p, const std::string& why) { failures.push_back({p, why}); });
  const std::uint16_t port = server.port_for(hub.client2);
  hub.start();
  LineClient c(port);
  c.send("WRITE 5");
  CHECK(c.closed_by_server());
  hub.stop();
  REQUIRE(failures.size() == 1);
  CHECK(failures[0].first == hub.client2);
  CHECK(failures[0].second.find("not a JSON object") != std::string::npos);
  CHECK(hub.asked.empty());
}

TEST_CASE("a storage request the storage never answers gets no reply, and drop_connections closes the client's") {
  Hub hub;
  hub.dropping = true;
  StorageServer server(hub, hub.storage, [](ProcId, const std::string&) {});
  const std::uint16_t port = server.port_for(hub.client1);
  hub.start();
  LineClient c(port);
  c.send(R"({"op":"read"})");
  CHECK(eventually([&] { return hub.asked.size() == 1; }, Duration::s(5)));
  asio::post(hub.io(), [&] { server.drop_connections(hub.client1); });
  CHECK(c.closed_by_server());
}

namespace {

// A real redis-server, its observer for client1, and the hub's context on a thread.
struct ObservedNode {
  ObservedNode() : port(sup.start_server("redis1")) {
    keys = std::make_unique<NodeKeys>(hub, hub.node, "lock", false);
    keys->record();
    observer = std::make_unique<RedisObserver>(hub, hub.client1, *keys, Endpoint{"127.0.0.1", port}, ids1);
    observer2 = std::make_unique<RedisObserver>(hub, hub.client2, *keys, Endpoint{"127.0.0.1", port}, ids2);
    hub.start();
  }
  ~ObservedNode() { hub.stop(); }
  std::vector<const TraceEvent*> commands() const { return hub.events(Ev::Command, hub.node); }

  Supervisor sup;
  std::uint16_t port;
  Hub hub;
  std::unique_ptr<NodeKeys> keys;
  LinkIds ids1, ids2;
  std::unique_ptr<RedisObserver> observer, observer2;
};

}  // namespace

TEST_CASE("through the observer a client gets its own replies, and the trace says whose value the key holds") {
  ObservedNode n;
  BlockingClient c1(n.observer->port(), Duration::s(5)), c2(n.observer2->port(), Duration::s(5));
  CHECK(c1.command({"SET", "lock", "v1", "NX", "PX", "30000"}, Duration::s(5)).str == "OK");
  CHECK(c2.command({"SET", "lock", "v2", "NX", "PX", "30000"}, Duration::s(5)).type == resp::Value::Type::Nil);
  CHECK(c1.command({"PING"}, Duration::s(5)).str == "PONG");  // not about the key: passed as it is
  CHECK(c2.command({"GET", "lock"}, Duration::s(5)).str == "v1");
  // A script naming the key in KEYS: its value travels in ARGV, as every library sends it.
  const std::string del = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
  CHECK(c2.command({"EVAL", del, "1", "lock", "v2"}, Duration::s(5)).integer == 0);
  CHECK(c1.command({"EVAL", del, "1", "lock", "v1"}, Duration::s(5)).integer == 1);
  // An error at queue time reaches the client as the request's own reply.
  const resp::Value wrong = c1.command({"SET", "lock"}, Duration::s(5));
  CHECK(wrong.type == resp::Value::Type::Error);
  CHECK(wrong.str.find("wrong number of arguments") != std::string::npos);
  // The client's own transaction passes unwrapped.
  CHECK(c2.command({"MULTI"}, Duration::s(5)).str == "OK");
  CHECK(c2.command({"SET", "lock", "v3"}, Duration::s(5)).str == "QUEUED");
  const resp::Value exec = c2.command({"EXEC"}, Duration::s(5));
  REQUIRE(exec.type == resp::Value::Type::Array);
  CHECK(exec.elements.at(0).str == "OK");
  CHECK(c1.command({"GET", "lock"}, Duration::s(5)).str == "v3");  // a value no observed request carried: nobody's
  n.hub.stop();

  const auto commands = n.commands();
  REQUIRE(commands.size() >= 7);
  CHECK(commands[0]->peer == n.hub.client1);
  CHECK(commands[0]->owner == n.hub.client1);  // its SET NX took the key
  CHECK(commands[1]->owner == n.hub.client1);  // client2's SET NX left it client1's
  CHECK(commands[1]->peer == n.hub.client2);
  CHECK(commands[2]->owner == kNoProc);        // PING: nothing about the key
  const auto deleted = n.hub.events(Ev::KeyDeleted, n.hub.node);
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0]->peer == n.hub.client1);
  CHECK(deleted[0]->owner == n.hub.client1);
  CHECK(commands.back()->peer == n.hub.client1);
  CHECK(commands.back()->owner == kNoProc);
  CHECK(n.keys->holder() == kNoProc);  // client2's own MULTI went unobserved: nothing claimed for it
  CHECK(n.hub.events(Ev::Expired, n.hub.node).empty());
}

TEST_CASE("a key that expired is told once, whether a command finds it gone or the node's notification says so") {
  ObservedNode n;
  BlockingClient c1(n.observer->port(), Duration::s(5)), c2(n.observer2->port(), Duration::s(5));
  CHECK(c1.command({"SET", "lock", "v1", "NX", "PX", "100"}, Duration::s(5)).str == "OK");
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  CHECK(c2.command({"SET", "lock", "v2", "NX", "PX", "100"}, Duration::s(5)).str == "OK");  // found client1's gone
  asio::post(n.hub.io(), [&] { n.keys->expired(); });  // client1's notification, arriving after: told already
  // Read on the hub's thread, after it: client2 still holds, and nothing more was told.
  std::optional<std::pair<ProcId, std::size_t>> after_notice;
  asio::post(n.hub.io(), [&] { after_notice.emplace(n.keys->holder(), n.hub.events(Ev::Expired, n.hub.node).size()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(250));
  n.hub.stop();
  REQUIRE(after_notice);
  CHECK(after_notice->first == n.hub.client2);
  CHECK(after_notice->second == 1);
  n.keys->expired();  // client2's, with nobody's command in between
  const auto expired = n.hub.events(Ev::Expired, n.hub.node);
  REQUIRE(expired.size() == 2);
  CHECK(expired[0]->owner == n.hub.client1);
  CHECK(expired[0]->detail.find("client2's command found") != std::string::npos);
  CHECK(expired[1]->owner == n.hub.client2);
  CHECK(n.hub.events(Ev::KeyDeleted, n.hub.node).empty());
}

TEST_CASE("before the run a node's key is known, not told: the trace hears nothing until record()") {
  Hub hub;
  NodeKeys keys(hub, hub.node, "lock", false);
  keys.after(hub.client1, {"SET", "lock", "v1", "NX", "PX", "30000"}, std::nullopt, "v1", 30000, "SET lock v1 NX PX 30000");
  keys.command(hub.client1, "PING");
  CHECK(keys.holder() == hub.client1);
  CHECK(hub.events(Ev::Command, hub.node).empty());
  keys.record();
  keys.command(hub.client1, "PING");
  CHECK(hub.events(Ev::Command, hub.node).size() == 1);
}

TEST_CASE("on a node whose wall clock the scenario moves, a holder's key taken before its TTL ran out had expired") {
  // Redis judges expiry by the wall clock (db.c keyIsExpired): a step
  // forward ends a key early. Elsewhere the key was a request's to take.
  for (const bool moves : {true, false}) {
    CAPTURE(moves);
    Hub hub;
    NodeKeys keys(hub, hub.node, "lock", moves);
    keys.record();
    keys.after(hub.client1, {"SET", "lock", "v1", "NX", "PX", "30000"}, std::nullopt, "v1", 30000, "SET lock v1 NX PX 30000");
    keys.after(hub.client2, {"SET", "lock", "v2", "NX", "PX", "30000"}, std::nullopt, "v2", 30000, "SET lock v2 NX PX 30000");
    CHECK(hub.events(Ev::Expired, hub.node).size() == (moves ? 1u : 0u));
    CHECK(keys.holder() == hub.client2);
  }
}

TEST_CASE("a key another request removed before this one ran is not this request's removal") {
  // node-redlock 4.2.0's client-clock-step cell, live: client2 released its
  // own key, and the observer read client1's release (which found no key)
  // first; it took client1 for the remover of client2's key: a foreign
  // release that never was. Here the other removal goes around the observer
  // altogether, as a reply not yet read.
  ObservedNode n;
  BlockingClient c1(n.observer->port(), Duration::s(5)), c2(n.observer2->port(), Duration::s(5));
  CHECK(c2.command({"SET", "lock", "v2", "NX", "PX", "30000"}, Duration::s(5)).str == "OK");
  CHECK(call(n.port, {"DEL", "lock"}).integer == 1);
  const std::string del = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";
  CHECK(c1.command({"EVAL", del, "1", "lock", "v1"}, Duration::s(5)).integer == 0);
  // And a request that does remove a key is told with the owner it found.
  CHECK(c2.command({"SET", "lock", "v3", "NX", "PX", "30000"}, Duration::s(5)).str == "OK");
  CHECK(c2.command({"EVAL", del, "1", "lock", "v3"}, Duration::s(5)).integer == 1);
  n.hub.stop();
  const auto deleted = n.hub.events(Ev::KeyDeleted, n.hub.node);
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0]->peer == n.hub.client2);
  CHECK(deleted[0]->owner == n.hub.client2);
}

TEST_CASE("a node that is gone resets the client's connection through the observer") {
  ObservedNode n;
  BlockingClient c1(n.observer->port(), Duration::s(5));
  CHECK(c1.command({"PING"}, Duration::s(5)).str == "PONG");
  n.sup.crash("redis1");
  CHECK_THROWS_AS(c1.command({"PING"}, Duration::s(2)), Error);
  CHECK_THROWS_AS(BlockingClient(n.observer->port(), Duration::s(2)).command({"PING"}, Duration::s(2)), Error);
}

TEST_CASE("an adapter's process: lines out, lines in, and a stopped one is killed without running again") {
  TempDir dir;
  const fs::path ticks = dir.path() / "ticks";
  asio::io_context io;
  std::vector<std::string> lines;
  bool ended = false;
  // Echoes one line, then appends to `ticks` every 10 ms until killed, in
  // one process: a shell's loop runs `sleep` through vfork, and a SIGSTOP
  // that lands between the vfork and the exec stops the child before it
  // runs and leaves the shell waiting for it uninterruptibly ('D', not 'T'):
  // the group is stopped, but its leader never says so (6 of 200 tries on a
  // loaded 2-core machine).
  const std::string script =
      "$| = 1; my $line = <STDIN>; chomp $line; print \"got $line\\n\"; "
      "while (1) { open(my $f, '>>', $ARGV[0]) or die; print $f \"x\\n\"; close $f; select(undef, undef, undef, 0.01) }";
  AdapterProcess p(io, Command{"/usr/bin/perl", {"-e", script, ticks.string()}}, {}, dir.path() / "stderr",
                   {[&](std::string l) { lines.push_back(std::move(l)); }, [&] { ended = true; }});
  p.send("hello\n");
  const Deadline deadline(Duration::s(10));
  while (lines.empty() && !deadline.passed()) io.run_for(std::chrono::milliseconds(10));
  REQUIRE(lines == std::vector<std::string>{"got hello"});
  CHECK(eventually([&] { return fs::exists(ticks) && fs::file_size(ticks) > 0; }, Duration::s(5)));
  const pid_t pid = p.pid();
  p.stop();
  CHECK(eventually([&] { return p.stopped(); }, Duration::s(10)));  // 2 s was too short under ASan at -j2 (failed once)
  const auto size = fs::file_size(ticks);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(fs::file_size(ticks) == size);  // stopped: nothing runs
  p.kill();
  CHECK(!p.running());
  CHECK(!process_alive(pid));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(fs::file_size(ticks) == size);  // killed before anything continued it
  while (!ended && !deadline.passed()) io.run_for(std::chrono::milliseconds(10));
  CHECK(ended);
}

TEST_CASE("an adapter that exits on its own is reaped with its status, and its stderr's last line is kept") {
  TempDir dir;
  asio::io_context io;
  bool ended = false;
  AdapterProcess p(io, Command{"/bin/sh", {"-c", "echo 'ImportError: no module' >&2; echo >&2; exit 4"}}, {},
                   dir.path() / "stderr", {[](std::string) {}, [&] { ended = true; }});
  const Deadline deadline(Duration::s(10));
  while (!ended && !deadline.passed()) io.run_for(std::chrono::milliseconds(10));
  REQUIRE(ended);
  std::optional<int> status;
  CHECK(eventually([&] { return (status = p.try_reap()).has_value(); }, Duration::s(2)));
  REQUIRE(status);
  CHECK(exit_text(*status) == "exited with status 4");
  CHECK(p.last_error_line() == "ImportError: no module");
}

}  // namespace external_parts_test
