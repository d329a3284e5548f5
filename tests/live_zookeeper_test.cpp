// ZooKeeper's wire protocol (live/zookeeper/jute.hpp) byte for byte against
// ZooKeeper's own jute classes, and the supervisor's ZooKeeper server, the
// connection and the lock recipes' mapping (live/zookeeper/coord_session.hpp)
// against a real one (Debian's zookeeper 3.8.0).
//
// The expected bytes were printed by tests/live_zookeeper_jute.java, which
// serializes each record with ZooKeeper's own classes (org.apache.zookeeper.proto,
// org.apache.jute.BinaryOutputArchive): `java -cp /usr/share/java/zookeeper.jar
// tests/live_zookeeper_jute.java`.
#include <utility>  // before any Asio header (Boost 1.74 with g++ 12)

#include <doctest/doctest.h>

#include <signal.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <filesystem>
#include <functional>
#include <map>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "harness/run.hpp"
#include "live/live_run.hpp"
#include "live/zookeeper/blocking_session.hpp"
#include "live/zookeeper/connection.hpp"
#include "live/zookeeper/coord_session.hpp"
#include "live/zookeeper/jute.hpp"
#include "live/zookeeper/server.hpp"
#include "reports/report.hpp"
#include "live/servers.hpp"
#include "tests/live_support.hpp"

namespace live_zookeeper_test {

using namespace locksim;
using namespace locksim::live;
using namespace locksim::live::zk;

namespace {

std::string hex(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string unhex(std::string_view h) {
  std::string out;
  for (std::size_t i = 0; i + 1 < h.size(); i += 2) out += static_cast<char>(std::stoi(std::string(h.substr(i, 2)), nullptr, 16));
  return out;
}

// A packet's body: its length prefix off.
std::string body_of(std::string_view packet_hex) { return unhex(packet_hex).substr(4); }

}  // namespace

TEST_CASE("jute: the session handshake is ZooKeeper's ConnectRequest and readOnly, framed") {
  ConnectRequest fresh;
  fresh.timeout_ms = 10000;
  CHECK(hex(encode(fresh)) ==
        "0000002d000000000000000000000000000027100000000000000000000000100000000000000000000000000000000000");
  ConnectRequest again;
  again.last_zxid_seen = 0x1234567890;
  again.timeout_ms = 4000;
  again.session_id = 0x0100001384e60000;
  again.passwd.clear();
  for (int i = 0; i < 16; ++i) again.passwd += static_cast<char>(i * 17);
  CHECK(hex(encode(again)) ==
        "0000002d00000000000000123456789000000fa00100001384e600000000001000112233445566778899aabbccddeeff00");
  const ConnectRequest back = decode_connect_request(body_of(hex(encode(again))));
  CHECK(back.session_id == again.session_id);
  CHECK(back.passwd == again.passwd);
  CHECK(back.timeout_ms == 4000);
}

TEST_CASE("jute: each request the recipes send is ZooKeeper's header and record") {
  Request create2{OpCode::Create2, "/lock/_c_ab12-lock-"};
  create2.mode = CreateMode::EphemeralSequential;
  CHECK(hex(encode(1, create2)) ==
        "00000042000000010000000f000000132f6c6f636b2f5f635f616231322d6c6f636b2d00000000000000010000001f00000005776f72"
        "6c6400000006616e796f6e6500000003");
  CHECK(hex(encode(2, Request{OpCode::Create, "/lock"})) ==
        "000000340000000200000001000000052f6c6f636b00000000000000010000001f00000005776f726c6400000006616e796f6e650000"
        "0000");
  Request children{OpCode::GetChildren, "/lock"};
  children.watch = true;
  CHECK(hex(encode(3, children)) == "000000120000000300000008000000052f6c6f636b01");
  CHECK(hex(encode(4, Request{OpCode::GetChildren2, "/lock"})) == "00000012000000040000000c000000052f6c6f636b00");
  Request get{OpCode::GetData, "/lock/n-0000000001"};
  get.watch = true;
  CHECK(hex(encode(5, get)) == "0000001f0000000500000004000000122f6c6f636b2f6e2d3030303030303030303101");
  CHECK(hex(encode(6, Request{OpCode::Exists, "/lock/n-0000000002"})) ==
        "0000001f0000000600000003000000122f6c6f636b2f6e2d3030303030303030303200");
  CHECK(hex(encode(7, Request{OpCode::Delete, "/lock/n-0000000001"})) ==
        "000000220000000700000002000000122f6c6f636b2f6e2d30303030303030303031ffffffff");
  Request add{OpCode::AddWatch, "/lock"};
  add.watch_mode = AddWatchMode::PersistentRecursive;
  CHECK(hex(encode(8, add)) == "00000015000000080000006a000000052f6c6f636b00000001");
  CHECK(hex(encode_ping()) == "00000008fffffffe0000000b");
  CHECK(hex(encode(9, Request{OpCode::CloseSession})) == "0000000800000009fffffff5");
}

TEST_CASE("jute: a client's requests read back as the server reads them (a real library's, through its proxy)") {
  // The bytes ZooKeeper's own classes wrote (the test above).
  const RequestPacket create2 = decode_request(body_of(
      "00000042000000010000000f000000132f6c6f636b2f5f635f616231322d6c6f636b2d00000000000000010000001f00000005776f72"
      "6c6400000006616e796f6e6500000003"));
  CHECK(create2.xid == 1);
  CHECK(create2.request.op == OpCode::Create2);
  CHECK(create2.request.path == "/lock/_c_ab12-lock-");
  CHECK(create2.request.mode == CreateMode::EphemeralSequential);
  const RequestPacket del = decode_request(body_of("000000220000000700000002000000122f6c6f636b2f6e2d30303030303030303031ffffffff"));
  CHECK(del.xid == 7);
  CHECK(del.request.op == OpCode::Delete);
  CHECK(del.request.path == "/lock/n-0000000001");
  CHECK(del.request.version == -1);
  const RequestPacket children = decode_request(body_of("000000120000000300000008000000052f6c6f636b01"));
  CHECK(children.request.op == OpCode::GetChildren);
  CHECK(children.request.watch);
  const RequestPacket close = decode_request(body_of("0000000800000009fffffff5"));
  CHECK(close.xid == 9);
  CHECK(close.request.op == OpCode::CloseSession);
  // kazoo's create (op 1) with data and two ACL entries: the flags come after them.
  Request kazoo{OpCode::Create, "/locks/lock/0123abcd__lock__", "client1"};
  kazoo.mode = CreateMode::EphemeralSequential;
  std::string bytes = encode(12, kazoo);
  const std::string one_acl = unhex("0000001f00000005776f726c6400000006616e796f6e65");
  const std::size_t acl = bytes.find(one_acl);
  REQUIRE(acl != std::string::npos);
  bytes.replace(acl - 4, 4, std::string("\0\0\0\x02", 4));  // the ACL's count: 2
  bytes.insert(acl + one_acl.size(), one_acl);
  const RequestPacket back = decode_request(std::string_view(bytes).substr(4));
  CHECK(back.xid == 12);
  CHECK(back.request.op == OpCode::Create);
  CHECK(back.request.path == "/locks/lock/0123abcd__lock__");
  CHECK(back.request.data == "client1");
  CHECK(back.request.mode == CreateMode::EphemeralSequential);
  // An op the recipes do not send (setWatches, 101): its header alone.
  const RequestPacket other = decode_request(unhex("fffffff800000065000000000000002a"));
  CHECK(other.xid == -8);
  CHECK(static_cast<std::int32_t>(other.request.op) == 101);
  CHECK(other.request.path.empty());
  CHECK_THROWS_AS(decode_request(unhex("00000001000000010000")), Error);  // a create cut short
}

TEST_CASE("jute: a server's packets read as ZooKeeper wrote them") {
  const ConnectResponse hello = decode_connect_response(
      body_of("0000002500000000000017700100001384e600010000001000112233445566778899aabbccddeeff00"));
  CHECK(hello.timeout_ms == 6000);
  CHECK(hello.session_id == 0x0100001384e60001);
  CHECK(hello.passwd.size() == 16);
  CHECK(hello.passwd[1] == '\x11');
  CHECK_FALSE(hello.read_only);

  const Response created = decode_response(
      OpCode::Create2,
      body_of("00000075000000010000000000000105000000000000001d2f6c6f636b2f5f635f616231322d6c6f636b2d303030303030303030"
              "37000000000000010500000000000001060000018bcfe5687b0000018bcfe569c80000000100000002000000030100001384e60001"
              "00000004000000050000000000000107"));
  CHECK(created.header.xid == 1);
  CHECK(created.header.zxid == 0x105);
  CHECK(created.path == "/lock/_c_ab12-lock-0000000007");
  REQUIRE(created.stat);
  CHECK(created.stat->czxid == 0x105);
  CHECK(created.stat->mzxid == 0x106);
  CHECK(created.stat->ctime == 1700000000123);
  CHECK(created.stat->cversion == 2);
  CHECK(created.stat->ephemeral_owner == 0x0100001384e60001);
  CHECK(created.stat->num_children == 5);
  CHECK(created.stat->pzxid == 0x107);

  const Response children = decode_response(
      OpCode::GetChildren,
      body_of("0000003400000003000000000000010a00000000000000020000000c6e2d303030303030303030320000000c6e2d303030303030"
              "30303031"));
  CHECK(children.children == std::vector<std::string>{"n-0000000002", "n-0000000001"});

  const Response data = decode_response(
      OpCode::GetData,
      body_of("0000005b00000005000000000000010b0000000000000003010203000000000000010500000000000001060000018bcfe5687b00"
              "00018bcfe569c80000000100000002000000030100001384e6000100000004000000050000000000000107"));
  CHECK(data.data == std::string("\x01\x02\x03", 3));
  CHECK(data.stat->czxid == 0x105);

  const Response missing = decode_response(OpCode::Delete, body_of("0000001000000007000000000000010cffffff9b"));
  CHECK(missing.header.err == static_cast<std::int32_t>(Err::NoNode));
  CHECK(err_name(missing.header.err) == "NONODE");

  const WatcherEvent e = decode_event(
      body_of("0000002effffffffffffffffffffffff000000000000000200000003000000122f6c6f636b2f6e2d30303030303030303031"));
  CHECK(e.type == EventType::NodeDeleted);
  CHECK(e.state == KeeperState::SyncConnected);
  CHECK(e.path == "/lock/n-0000000001");
}

TEST_CASE("jute: packets cut short, or too long, are not ZooKeeper's") {
  CHECK_THROWS_AS(decode_connect_response(body_of("0000000500000000")), Error);
  CHECK_THROWS_AS(decode_response(OpCode::Create2, body_of("00000010000000010000000000000105000000000000")), Error);
  // A vector that claims more elements than there are bytes.
  CHECK_THROWS_AS(decode_response(OpCode::GetChildren, body_of("000000140000000300000000000001000000000000100000")), Error);
  std::string buffer = unhex("0000000300ab");
  CHECK(next_packet(buffer) == std::nullopt);  // one byte short
  buffer += '\xcd';
  CHECK(hex(*next_packet(buffer)) == "00abcd");
  CHECK(buffer.empty());
  buffer = unhex("7fffffff");
  CHECK_THROWS_AS(next_packet(buffer), Error);
  buffer = unhex("ffffffff");  // -1
  CHECK_THROWS_AS(next_packet(buffer), Error);
}

// --- The server's zoo.cfg --------------------------------------------------------------

// A ZooKeeper reads its zoo.cfg's unknown keys as system properties
// (QuorumPeerConfig.parseProperties), and AdminServerFactory starts Jetty on
// port 8080 unless zookeeper.admin.enableServer is "false": two live runs
// at once, or anything else on 8080, would then collide. Debian's classpath
// as server_args gives it has no Jetty, so today the server starts without
// one either way: the file is what keeps it so when Jetty is installed too.
TEST_CASE("zoo.cfg: loopback only, the admin server off, srvr whitelisted, ticks in whole milliseconds") {
  locksim::live::testing::TempDir dir;
  ZooKeeperServerOptions o;
  o.tick_time = Duration::ms(250);
  o.max_session_timeout = Duration::s(3);
  write_config(dir.path() / "zoo.cfg", 2181, dir.path(), o);
  std::ifstream in(dir.path() / "zoo.cfg");
  std::map<std::string, std::string> keys;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') keys[line.substr(0, line.find('='))] = line.substr(line.find('=') + 1);
  CHECK(keys["admin.enableServer"] == "false");
  CHECK(keys["clientPortAddress"] == "127.0.0.1");
  CHECK(keys["clientPort"] == "2181");
  CHECK(keys["4lw.commands.whitelist"] == "srvr");
  CHECK(keys["tickTime"] == "250");
  CHECK(keys["maxSessionTimeout"] == "3000");
  CHECK(keys.count("minSessionTimeout") == 0);  // ZooKeeper's own: 2 ticks
  o.tick_time = Duration::us(1500);
  CHECK_THROWS_AS(write_config(dir.path() / "zoo.cfg", 2181, dir.path(), o), Error);
}

// --- A connection, against a server of the test's own ----------------------------------

namespace {

// A server that speaks just enough ZooKeeper: it answers the handshake with a
// session, then each request with a reply header carrying the xid `xid_of`
// picks for it.
struct FakeServer {
  explicit FakeServer(boost::asio::io_context& io) : io(io), acceptor(io) {
    using boost::asio::ip::tcp;
    acceptor.open(tcp::v4());
    acceptor.bind(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    acceptor.listen();
    acceptor.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
      if (ec) return;
      socket.emplace(std::move(s));
      read();
    });
  }
  Endpoint at() const { return {"127.0.0.1", acceptor.local_endpoint().port()}; }
  void read() {
    socket->async_read_some(boost::asio::buffer(buf), [this](const boost::system::error_code& ec, std::size_t n) {
      if (ec) return;
      in.append(buf.data(), n);
      while (std::optional<std::string> body = next_packet(in)) {
        std::string out;
        if (!greeted) {
          greeted = true;
          out = unhex("0000002500000000000017700100001384e600010000001000112233445566778899aabbccddeeff00");
        } else {
          const std::int32_t xid = xid_of(decode_reply_header(*body + std::string(12, '\0')).xid);
          out = unhex("00000010");
          for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(static_cast<std::uint32_t>(xid) >> shift);
          out += unhex("000000000000002a00000000");  // zxid 42, err 0
        }
        boost::asio::write(*socket, boost::asio::buffer(out));
      }
      read();
    });
  }
  boost::asio::io_context& io;
  boost::asio::ip::tcp::acceptor acceptor;
  std::optional<boost::asio::ip::tcp::socket> socket;
  std::array<char, 4096> buf{};
  std::string in;
  bool greeted = false;
  std::function<std::int32_t(std::int32_t)> xid_of = [](std::int32_t xid) { return xid; };
};

}  // namespace

TEST_CASE("a reply out of xid order drops the connection, as ClientCnxn does, and what waited hears no answer") {
  for (const bool in_order : {true, false}) {
    boost::asio::io_context io;
    FakeServer server(io);
    if (!in_order) server.xid_of = [](std::int32_t xid) { return xid + 1; };  // the reply to a request never sent
    std::optional<ConnectResponse> hello;
    bool closed = false;
    Connection::Handlers h;
    h.connected = [&](std::optional<ConnectResponse> r) { hello = r; };
    h.closed = [&] { closed = true; };
    auto c = Connection::open(io, server.at(), ConnectRequest{}, h);
    std::optional<std::optional<Response>> answer;
    c->request(Request{OpCode::Delete, "/x"}, [&](std::optional<Response> r) { answer.emplace(std::move(r)); });
    REQUIRE(BlockingSession::turn_until(io, [&] { return answer.has_value(); }, Duration::s(5)));
    REQUIRE(hello);
    CHECK(hello->timeout_ms == 6000);
    CHECK(c->session_ready());
    CHECK(answer->has_value() == in_order);
    if (in_order) CHECK(c->last_zxid() == 42);
    BlockingSession::turn_until(io, [&] { return closed; }, Duration::ms(200));
    CHECK(closed == !in_order);
    CHECK(c->closed() == !in_order);
  }
}

// --- Against a real server ------------------------------------------------------------

namespace {

// One real ZooKeeper server with a short tick, and a context for its sessions.
struct ZkServer {
  explicit ZkServer(Duration tick = Duration::ms(100)) {
    ZooKeeperServerOptions o;
    o.tick_time = tick;
    sup.start_zookeeper("zk", o);
    at = {"127.0.0.1", sup.port("zk")};
  }
  // The lock's parent, as the live run makes it.
  void make_lock() {
    BlockingSession setup(io, at, Duration::s(2));
    setup.request(Request{OpCode::Create, "/lock"});
    setup.close_session();
  }
  Supervisor sup;
  boost::asio::io_context io;
  Endpoint at;
};

Request create(std::string path, CreateMode mode = CreateMode::Persistent) {
  Request r{OpCode::Create2, std::move(path)};
  r.mode = mode;
  return r;
}

std::int32_t code(Err e) { return static_cast<std::int32_t>(e); }

}  // namespace

TEST_CASE("the supervisor's ZooKeeper listens on 127.0.0.1 alone, pauses, and restarts with its data") {
  ZkServer z;
  const pid_t pid = z.sup.pid("zk");
  const std::vector<Endpoint> listening = listening_addresses(pid);
  CHECK(listening.size() == 1);  // the client port: no admin server (8080), no JMX port
  for (const Endpoint& e : listening) CHECK(e == z.at);
  CHECK(std::filesystem::exists(z.sup.nodes().at(0).dir / "zoo.cfg"));
  // slf4j-simple on the classpath: the server logs to its stderr, the supervisor's output.log.
  CHECK(locksim::live::testing::eventually([&] {
    std::ifstream log(z.sup.nodes().at(0).dir / "output.log");
    const std::string text{std::istreambuf_iterator<char>(log), std::istreambuf_iterator<char>()};
    return text.find("INFO org.apache.zookeeper") != std::string::npos;
  }, Duration::s(5)));
  {
    BlockingSession s(z.io, z.at, Duration::s(2));
    CHECK(s.request(create("/kept")).header.err == 0);
    s.close_session();
  }
  z.sup.pause("zk");
  CHECK_FALSE(serving(z.at.port, Duration::ms(300)));  // stopped: the kernel accepts, nobody answers
  z.sup.resume("zk");
  CHECK(serving(z.at.port, Duration::s(10)));
  z.sup.crash("zk");
  CHECK_FALSE(process_alive(pid));
  z.sup.restart("zk");
  CHECK(z.sup.port("zk") == z.at.port);
  BlockingSession s(z.io, z.at, Duration::s(2));
  CHECK(s.request(Request{OpCode::Exists, "/kept"}).header.err == 0);  // the same data directory
}

TEST_CASE("a real ZooKeeper clamps the session timeout to 2 to 20 ticks and spends a zxid on every transaction") {
  ZkServer z;  // tick 100 ms
  BlockingSession low(z.io, z.at, Duration::ms(50));
  CHECK(low.handshake().timeout_ms == 200);
  BlockingSession high(z.io, z.at, Duration::s(60));
  CHECK(high.handshake().timeout_ms == 2000);
  // Closed at once: an expiry is a transaction too, and would take a zxid in
  // the middle of what follows. (On a loaded machine `low`'s 200 ms may be
  // over already: the server then closed its connection, its expiry done.)
  for (BlockingSession* done : {&low, &high}) {
    try {
      done->close_session();
    } catch (const Error&) {
      CHECK(done->closed());
    }
  }
  BlockingSession mid(z.io, z.at, Duration::ms(750));
  CHECK(mid.handshake().timeout_ms == 750);  // not rounded to the tick
  CHECK(mid.handshake().passwd.size() == 16);
  mid.close_session();

  // The longest sessions (20 ticks, 2 s): none expires while the test counts.
  BlockingSession s(z.io, z.at, Duration::s(2));
  const std::int64_t z0 = s.request(create("/z")).header.zxid;
  BlockingSession other(z.io, z.at, Duration::s(2));  // createSession: z0 + 1
  const Response e = other.request(create("/z/e-", CreateMode::EphemeralSequential));
  CHECK(e.path == "/z/e-0000000000");
  REQUIRE(e.stat);
  CHECK(e.stat->czxid == z0 + 2);
  CHECK(e.stat->mzxid == e.stat->czxid);
  CHECK(e.stat->ephemeral_owner == other.session_id());
  const Response missing = other.request(Request{OpCode::Delete, "/z/none"});
  CHECK(missing.header.err == code(Err::NoNode));
  CHECK(missing.header.zxid == z0 + 3);  // a failed write is an error transaction, with a zxid of its own
  CHECK(other.request(Request{OpCode::GetChildren, "/z"}).header.zxid == z0 + 3);  // a read takes none
  CHECK(other.close_session().header.zxid == z0 + 4);  // one transaction, however many ephemerals go with it
  CHECK(s.request(Request{OpCode::GetChildren, "/z"}).children.empty());
  const Response next = s.request(create("/z/e-", CreateMode::EphemeralSequential));
  CHECK(next.path == "/z/e-0000000001");  // numbered by creates, not by what is there
  CHECK(next.stat->czxid == z0 + 5);
}

TEST_CASE("a real ZooKeeper expires a silent session at a tick, deletes its node, fires the watch, and closes its connection") {
  ZkServer z;
  BlockingSession watcher(z.io, z.at, Duration::s(2));
  REQUIRE(watcher.request(create("/x")).header.err == 0);
  BlockingSession mortal(z.io, z.at, Duration::ms(200));
  const Response mine = mortal.request(create("/x/m-", CreateMode::EphemeralSequential));
  const auto silent_since = RealClock::now();  // last heard a moment before
  Request get{OpCode::GetData, mine.path};
  get.watch = true;
  REQUIRE(watcher.request(get).header.err == 0);
  REQUIRE(BlockingSession::turn_until(z.io, [&] { return mortal.closed(); }, Duration::s(5)));
  const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(RealClock::now() - silent_since).count();
  // Its 200 ms from when the server last heard it (a moment before the
  // reply), rounded up to the next tick: 200 to 300 ms; never much sooner.
  CHECK(after >= 180);
  BlockingSession::turn_until(z.io, [&] { return false; }, Duration::ms(100));
  const std::vector<WatcherEvent> events = watcher.take_events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].type == EventType::NodeDeleted);
  CHECK(events[0].path == mine.path);
  // The real client's reconnection: the same session, its password: the answer is "expired" (timeout 0).
  BlockingSession again(z.io, z.at, Duration::ms(200), Duration::s(5), mortal.session_id(), mortal.passwd());
  CHECK_FALSE(again.valid());
}

namespace {

// A recipe's client over CoordSession: each call run to its answer.
struct Client {
  Client(ZkServer& z, std::int64_t scale = 1) : z(z) {
    CoordSession::Options o;
    o.address = [&z](ProcId) { return z.at; };
    o.time_scale = scale;
    session = std::make_unique<CoordSession>(z.io, std::move(o));
    session->on_notify = [this](ProcId, coord::Notify n) { notified.push_back(std::move(n)); };
  }
  std::optional<coord::Reply> call(coord::Request req) {
    auto answer = std::make_shared<std::optional<std::optional<coord::Reply>>>();
    session->call(kNoProc, req, [answer](std::optional<coord::Reply> r) { answer->emplace(std::move(r)); });
    REQUIRE(BlockingSession::turn_until(z.io, [&] { return answer->has_value(); }, Duration::s(5)));
    return **answer;
  }
  coord::Request op(coord::Op o, std::string path = {}, std::string data = {}) {
    coord::Request r;
    r.op = o;
    r.path = std::move(path);
    r.data = std::move(data);
    return r;
  }
  ZkServer& z;
  std::unique_ptr<CoordSession> session;
  std::vector<coord::Notify> notified;
};

}  // namespace

TEST_CASE("the recipe's ops on a real ZooKeeper read as the simulator's replies") {
  ZkServer z;
  z.make_lock();
  Client a(z), b(z);
  coord::Request hello = a.op(coord::Op::Connect);
  hello.ttl = Duration::ms(450);
  const auto session = a.call(hello);
  REQUIRE(session);
  CHECK(session->ok);
  CHECK(session->ttl == Duration::ms(450));
  CHECK(session->id == a.session->session());
  hello.ttl = Duration::s(1);
  REQUIRE(b.call(hello)->ok);
  const auto first = a.call(a.op(coord::Op::Create, "/lock", "_c_a-lock-"));
  CHECK(first->path == "/lock/_c_a-lock-0000000000");
  const auto second = b.call(b.op(coord::Op::Create, "/lock", "_c_b-lock-"));
  CHECK(second->path == "/lock/_c_b-lock-0000000001");
  CHECK(second->id > first->id);  // czxids
  // b has not seen a's node made: its czxid is looked up.
  const auto children = b.call(b.op(coord::Op::GetChildren, "/lock"));
  REQUIRE(children->nodes.size() == 2);
  CHECK(children->nodes[0].path == first->path);
  CHECK(children->nodes[0].revision == first->id);
  CHECK(children->nodes[1].revision == second->id);
  coord::Request watch = b.op(coord::Op::Exists, first->path);
  watch.watch = true;
  CHECK(b.call(watch)->ok);
  CHECK(a.call(a.op(coord::Op::Delete, first->path))->ok);
  REQUIRE(BlockingSession::turn_until(z.io, [&] { return !b.notified.empty(); }, Duration::s(5)));
  CHECK(b.notified[0].path == first->path);
  CHECK(b.notified[0].what == "deleted");
  CHECK(b.notified[0].seq > children->seq);  // numbered in b's stream
  const auto gone = a.call(a.op(coord::Op::Exists, first->path));
  CHECK_FALSE(gone->ok);
  CHECK(gone->error == "NO_NODE");
  CHECK(a.call(a.op(coord::Op::Delete, first->path))->error == "NO_NODE");
  CHECK(a.call(a.op(coord::Op::CloseSession))->ok);
  CHECK(a.call(a.op(coord::Op::Ping))->error == "SESSION_EXPIRED");
  CHECK(b.call(b.op(coord::Op::Ping))->ok);
}

TEST_CASE("children are sorted by sequence number, as Curator sorts them, not by name") {
  ZkServer z;
  z.make_lock();
  Client a(z), b(z);
  coord::Request hello = a.op(coord::Op::Connect);
  hello.ttl = Duration::s(2);
  REQUIRE(a.call(hello)->ok);
  REQUIRE(b.call(hello)->ok);
  const auto first = a.call(a.op(coord::Op::Create, "/lock", "_c_zz-lock-"));   // ...0000000000
  const auto second = b.call(b.op(coord::Op::Create, "/lock", "_c_aa-lock-"));  // ...0000000001: first by name
  const auto children = a.call(a.op(coord::Op::GetChildren, "/lock"));
  REQUIRE(children->nodes.size() == 2);
  CHECK(children->nodes[0].path == first->path);
  CHECK(children->nodes[1].path == second->path);
}

TEST_CASE("the recipe's exists is getData: on a missing node it leaves no watch, so its later creation tells nothing") {
  ZkServer z;
  BlockingSession setup(z.io, z.at, Duration::s(2));
  setup.request(create("/lock"));
  Client a(z);
  coord::Request hello = a.op(coord::Op::Connect);
  hello.ttl = Duration::s(2);
  REQUIRE(a.call(hello)->ok);
  coord::Request look = a.op(coord::Op::Exists, "/lock/gone");
  look.watch = true;
  CHECK(a.call(look)->error == "NO_NODE");
  setup.request(create("/lock/gone"));  // an exists() watch would fire NodeCreated now
  CHECK(a.call(a.op(coord::Op::Ping))->ok);  // after the notification, if there were one
  CHECK(a.notified.empty());
}

TEST_CASE("a session the server expired answers SESSION_EXPIRED at the next request, after a gap in the stream") {
  ZkServer z;
  Client a(z);
  coord::Request hello = a.op(coord::Op::Connect);
  hello.ttl = Duration::ms(200);
  const auto session = a.call(hello);
  REQUIRE(session->ok);
  CHECK(a.call(a.op(coord::Op::Ping))->seq == session->seq + 1);
  BlockingSession::turn_until(z.io, [] { return false; }, Duration::ms(600));  // silent: expired and closed
  const auto expired = a.call(a.op(coord::Op::Ping));
  CHECK_FALSE(expired->ok);
  CHECK(expired->error == "SESSION_EXPIRED");
  CHECK(expired->seq == session->seq + 3);  // the closed connection counts as a lost message
}

TEST_CASE("a session's timeout leaves divided by the time scale and comes back multiplied") {
  ZkServer z;  // tick 100 ms: 2 to 20 ticks are 200 ms to 2 s real
  Client a(z, 10);
  coord::Request hello = a.op(coord::Op::Connect);
  hello.ttl = Duration::s(10);  // 1 s real
  CHECK(a.call(hello)->ttl == Duration::s(10));
  hello.ttl = Duration::s(60);  // 6 s real: clamped to 2 s, 20 s of scenario time
  CHECK(a.call(hello)->ttl == Duration::s(20));
}

// --- Whole runs -------------------------------------------------------------------------

namespace {

Scenario zookeeper_scenario(const std::string& name) {
  return load_scenario(std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/zookeeper/" + name);
}

}  // namespace

TEST_CASE("a live ZooKeeper session expires under a client's pause: overlap, stale write, lost update, as simulated") {
  LiveOptions o;
  o.time_scale = 5;  // 40 s in 8 s; the server's tick 400 ms
  const RunResult r = run_live(zookeeper_scenario("session-expiry-pause.toml"), o);
  INFO(text_report(r));
  CHECK(r.verdict == std::set<ViolationKind>{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate});
  // The server's own account, from the run's watcher: client1's node went with its session at a tick
  // 10 s (the timeout) after it was last heard from, about 1 s: at 12 s, as the model has it.
  const Trace& t = r.world->trace();
  std::optional<Instant> expired, handed_over;
  for (const TraceEvent& e : t.events()) {
    if (e.kind == Ev::Expired && e.owner != kNoProc && t.name(e.owner) == "client1") expired = e.at;
    if (e.kind == Ev::Holder && e.owner != kNoProc && t.name(e.owner) == "client2") handed_over = e.at;
  }
  REQUIRE(expired);
  CHECK(*expired >= Instant::zero() + Duration::ms(11'900));
  CHECK(*expired <= Instant::zero() + Duration::ms(12'600));
  REQUIRE(handed_over);
  CHECK(*handed_over >= *expired);
}

TEST_CASE("a live fenced twin: the czxid fences the paused holder's write") {
  LiveOptions o;
  o.time_scale = 5;
  const RunResult r = run_live(zookeeper_scenario("session-expiry-pause-fenced.toml"), o);
  INFO(text_report(r));
  CHECK(r.verdict == std::set<ViolationKind>{ViolationKind::Overlap});
}

TEST_CASE("a time scale that does not divide the tick into whole milliseconds is refused") {
  LiveOptions o;
  o.time_scale = 3;  // 2 s / 3
  CHECK_THROWS_AS(run_live(zookeeper_scenario("session-expiry-pause.toml"), o), ScenarioError);
  CHECK(live_scale_for(zookeeper_scenario("session-expiry-pause.toml"), {}, 3) == 2);
}

TEST_CASE("a ZooKeeper server's clock drift cannot run live: ZooKeeper times sessions by the monotonic clock") {
  Scenario s = zookeeper_scenario("session-expiry-pause.toml");
  s.nodes.front().clock.drift_ppb = 1'000'000;
  const auto why = live_unsupported(s);
  REQUIRE(why);
  CHECK(why->find("CLOCK_MONOTONIC") != std::string::npos);
}

TEST_CASE("a SIGKILLed locksim live leaves no ZooKeeper server (java) behind") {
  using locksim::live::testing::Child;
  using locksim::live::testing::eventually;
  Child locksim(LOCKSIM_BINARY, {"live", std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/zookeeper/session-expiry-pause.toml"});
  // The server: a child of locksim's running java (once exec'd: before, it is locksim's fork).
  pid_t java = 0;
  REQUIRE(eventually([&] {
    std::ifstream in("/proc/" + std::to_string(locksim.pid()) + "/task/" + std::to_string(locksim.pid()) + "/children");
    for (pid_t c; in >> c;) {
      std::error_code ec;
      if (std::filesystem::read_symlink("/proc/" + std::to_string(c) + "/exe", ec).filename() == "java") java = c;
    }
    return java != 0;
  }, Duration::s(30)));
  // It serves (a JVM forks nothing: its process group is itself).
  REQUIRE(eventually([&] { return !listening_addresses(java).empty(); }, Duration::s(60)));
  CHECK(::getpgid(java) == java);
  // Every process in its group: the JVM alone (its threads are not processes).
  int in_group = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;  // not a process
    std::ifstream stat(entry.path() / "stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(text.substr(paren + 2));
    std::string state;
    pid_t ppid = 0, pgrp = 0;
    rest >> state >> ppid >> pgrp;
    in_group += pgrp == java;
  }
  CHECK(in_group == 1);
  locksim.kill(SIGKILL);
  locksim.wait();
  CHECK(eventually([&] { return !process_alive(java); }, Duration::s(10)));
  if (process_alive(java)) ::kill(java, SIGKILL);  // never left behind, even when the test fails
}

TEST_CASE("the recipe's Connect naming its session reattaches it on a new connection, or hears it expired") {
  ZkServer z;
  z.make_lock();
  Client a(z);
  coord::Request hello = a.op(coord::Op::Connect);
  hello.ttl = Duration::ms(400);
  const auto session = a.call(hello);
  REQUIRE(session);
  REQUIRE(session->ok);
  const auto mine = a.call(a.op(coord::Op::Create, "/lock", "_c_a-lock-"));
  REQUIRE(mine->ok);
  // The recipe dropped its connection and reconnects naming its session
  // (lockalgos/zookeeper.cpp's reconnect): the same session, its node kept.
  coord::Request again = a.op(coord::Op::Connect);
  again.id = session->id;
  again.ttl = Duration::ms(400);
  const auto back = a.call(again);
  REQUIRE(back);
  CHECK(back->ok);
  CHECK(back->id == session->id);
  CHECK(back->ttl == Duration::ms(400));
  CHECK(a.session->session() == session->id);  // not a new session
  CHECK(a.call(a.op(coord::Op::Exists, mine->path))->ok);
  // Silent past its timeout (400 ms, rounded up to the 100 ms tick): the server ends it.
  BlockingSession::turn_until(z.io, [] { return false; }, Duration::ms(900));
  const auto late = a.call(again);
  REQUIRE(late);
  CHECK_FALSE(late->ok);
  CHECK(late->error == "SESSION_EXPIRED");
  CHECK(a.call(a.op(coord::Op::Ping))->error == "SESSION_EXPIRED");  // the handle is closed
}

}  // namespace live_zookeeper_test
