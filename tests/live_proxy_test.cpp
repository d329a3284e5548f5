// The fault-injecting proxy (live/proxy.hpp) between a client and a real
// redis-server: messages pass, wait for a heal in order, are dropped, are
// delayed. One io_context, one thread: the test's client runs on it too.
#include <utility>  // before any Asio header (Boost 1.74 with g++ 12)

#include <doctest/doctest.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <functional>
#include <tuple>

#include "live/blocking_client.hpp"
#include "live/proxy.hpp"
#include "live/resp.hpp"
#include "live/servers.hpp"

namespace live_proxy_test {

using namespace locksim;
using namespace locksim::live;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// A client on the test's io_context: sends commands, collects every reply.
struct Client {
  Client(asio::io_context& io, std::uint16_t port) : socket(io) {
    socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    read();
  }
  void send(const std::vector<std::string>& argv) { asio::write(socket, asio::buffer(resp::encode(argv))); }
  void read() {
    socket.async_read_some(asio::buffer(buf), [this](const boost::system::error_code& ec, std::size_t n) {
      if (ec) {
        closed = true;
        return;
      }
      decoder.feed(std::string_view(buf.data(), n));
      while (auto v = decoder.next()) replies.push_back(*v);
      read();
    });
  }
  tcp::socket socket;
  std::array<char, 4096> buf{};
  resp::Decoder decoder;
  std::vector<resp::Value> replies;
  bool closed = false;
};

// Runs the context until `done` holds or `within` passes; whether it held.
bool run_until(asio::io_context& io, const std::function<bool()>& done, Duration within) {
  const Deadline deadline(within);
  while (!done()) {
    if (deadline.passed()) return false;
    io.restart();
    io.run_one_for(std::chrono::milliseconds(10));
  }
  return true;
}

void run_for(asio::io_context& io, Duration d) { run_until(io, [] { return false; }, d); }

// A server and a proxy in front of it (the context first: it outlives both).
struct Link {
  asio::io_context io;
  Supervisor sup;
  std::uint16_t node = sup.start_server("redis1");
  Proxy proxy{io, Endpoint{"127.0.0.1", node}};
  std::string direct_get(const std::string& key) {
    const resp::Value v = call(node, {"GET", key});
    return v.type == resp::Value::Type::Bulk ? v.str : "(nil)";
  }
};

}  // namespace

TEST_CASE("a GET through the proxy gets the node's answer") {
  Link l;
  CHECK(call(l.node, {"SET", "k", "v"}).str == "OK");
  Client c(l.io, l.proxy.port());
  c.send({"GET", "k"});
  REQUIRE(run_until(l.io, [&] { return !c.replies.empty(); }, Duration::s(5)));
  CHECK(c.replies[0].str == "v");
  CHECK(l.proxy.stats(Direction::ToServer).forwarded == 1);
  CHECK(l.proxy.stats(Direction::ToClient).forwarded == 1);
  CHECK(l.proxy.connections() == 1);
}

TEST_CASE("held requests reach the node in order when the partition heals") {
  Link l;
  Client c(l.io, l.proxy.port());
  l.proxy.hold(Direction::ToServer);
  for (int i = 0; i < 5; ++i) c.send({"INCR", "counter"});
  c.send({"GET", "counter"});
  run_for(l.io, Duration::ms(300));
  CHECK(c.replies.empty());
  CHECK(l.direct_get("counter") == "(nil)");  // nothing reached the node
  CHECK(l.proxy.stats(Direction::ToServer).queued == 6);
  l.proxy.heal();
  REQUIRE(run_until(l.io, [&] { return c.replies.size() == 6; }, Duration::s(5)));
  for (int i = 0; i < 5; ++i) CHECK(c.replies[i].integer == i + 1);
  CHECK(c.replies[5].str == "5");
}

TEST_CASE("a one-way partition lets the request through and holds its reply") {
  Link l;
  Client c(l.io, l.proxy.port());
  l.proxy.hold(Direction::ToClient);
  c.send({"SET", "k", "v"});
  CHECK(run_until(l.io, [&] { return l.direct_get("k") == "v"; }, Duration::s(5)));  // applied
  run_for(l.io, Duration::ms(200));
  CHECK(c.replies.empty());  // but the client does not know
  l.proxy.heal(Direction::ToClient);
  REQUIRE(run_until(l.io, [&] { return !c.replies.empty(); }, Duration::s(5)));
  CHECK(c.replies[0].str == "OK");
}

TEST_CASE("a dropped request leaves the client without a reply") {
  Link l;
  Client c(l.io, l.proxy.port());
  l.proxy.drop_next(Direction::ToServer);
  c.send({"SET", "k", "v"});
  run_for(l.io, Duration::ms(500));
  CHECK(c.replies.empty());
  CHECK(l.direct_get("k") == "(nil)");
  CHECK(l.proxy.stats(Direction::ToServer).dropped == 1);
  // Only that one: the next request is answered, and the answer is its own.
  c.send({"GET", "k"});
  REQUIRE(run_until(l.io, [&] { return !c.replies.empty(); }, Duration::s(5)));
  CHECK(c.replies[0].type == resp::Value::Type::Nil);
}

TEST_CASE("after a dropped reply every later reply answers the request before it") {
  // Why a LIVE client must close its connection after a timeout: on a stream,
  // replies are matched to requests only by their order.
  Link l;
  CHECK(call(l.node, {"SET", "a", "1"}).str == "OK");
  CHECK(call(l.node, {"SET", "b", "2"}).str == "OK");
  Client c(l.io, l.proxy.port());
  l.proxy.drop_next(Direction::ToClient);
  c.send({"GET", "a"});
  run_for(l.io, Duration::ms(300));
  c.send({"GET", "b"});
  REQUIRE(run_until(l.io, [&] { return !c.replies.empty(); }, Duration::s(5)));
  CHECK(c.replies[0].str == "2");  // the answer to GET b: a client counting replies would take it for a's
}

TEST_CASE("a proxy delay of 200 ms is seen by the client and is lifted") {
  Link l;
  Client c(l.io, l.proxy.port());
  const auto round_trip = [&] {
    const std::size_t before = c.replies.size();
    const auto start = RealClock::now();
    c.send({"PING"});
    REQUIRE(run_until(l.io, [&] { return c.replies.size() > before; }, Duration::s(5)));
    return std::chrono::duration_cast<std::chrono::milliseconds>(RealClock::now() - start).count();
  };
  l.proxy.set_delay(Direction::ToServer, Duration::ms(200));
  const auto delayed = round_trip();
  CHECK(delayed >= 195);
  CHECK(delayed < 2'000);
  l.proxy.set_delay(Direction::ToServer, Duration::zero());
  CHECK(round_trip() < 190);  // well under the delay: it is gone
}

TEST_CASE("delay_next holds back only the next messages, by the extra given") {
  Link l;
  Client c(l.io, l.proxy.port());
  const auto round_trip = [&] {
    const std::size_t before = c.replies.size();
    const auto start = RealClock::now();
    c.send({"PING"});
    REQUIRE(run_until(l.io, [&] { return c.replies.size() > before; }, Duration::s(5)));
    return std::chrono::duration_cast<std::chrono::milliseconds>(RealClock::now() - start).count();
  };
  l.proxy.delay_next(Direction::ToClient, 2, Duration::ms(200));
  for (int i = 0; i < 2; ++i) {
    const auto delayed = round_trip();
    CHECK(delayed >= 195);
    CHECK(delayed < 2'000);
  }
  CHECK(round_trip() < 190);  // the third reply: not delayed
  l.proxy.delay_next(Direction::ToClient, 1, Duration::ms(200));
  l.proxy.delay_next(Direction::ToClient, 0, Duration::zero());  // none after all
  CHECK(round_trip() < 190);
}

TEST_CASE("a proxy's tap sees each message arrive, and be dropped or forwarded, on its connection") {
  Link l;
  std::vector<std::tuple<std::uint64_t, Direction, Proxy::Seen, std::string>> seen;
  l.proxy.set_tap([&](std::uint64_t c, Direction d, Proxy::Seen s, std::string_view bytes) {
    seen.emplace_back(c, d, s, std::string(bytes));
  });
  Client c(l.io, l.proxy.port());
  l.proxy.drop_next(Direction::ToServer);
  c.send({"PING", "lost"});
  c.send({"PING", "kept"});
  REQUIRE(run_until(l.io, [&] { return c.replies.size() == 1; }, Duration::s(5)));
  using S = Proxy::Seen;
  const std::string lost = resp::encode({"PING", "lost"}), kept = resp::encode({"PING", "kept"});
  const std::vector<std::tuple<std::uint64_t, Direction, Proxy::Seen, std::string>> want{
      {0, Direction::ToServer, S::Arrived, lost},  {0, Direction::ToServer, S::Dropped, lost},
      {0, Direction::ToServer, S::Arrived, kept},  {0, Direction::ToServer, S::Forwarded, kept},
      {0, Direction::ToClient, S::Arrived, "$4\r\nkept\r\n"}, {0, Direction::ToClient, S::Forwarded, "$4\r\nkept\r\n"}};
  CHECK(seen == want);
  Client second(l.io, l.proxy.port());
  second.send({"PING"});
  REQUIRE(run_until(l.io, [&] { return second.replies.size() == 1; }, Duration::s(5)));
  CHECK(std::get<0>(seen.back()) == 1);  // the proxy's second connection
}

TEST_CASE("a proxy's tap tells a message forwarded before its sink can read a byte of it") {
  // An external client's observer sits behind the proxy on the same
  // io_context and takes each request's id from what the tap recorded: told
  // at the write's completion, the observer's read could come first (a
  // Delivered with an id nobody Sent). Here the sink is our own socket: when
  // the tap says a message is forwarded, the sink has read or can read the
  // messages before it, and not a byte of this one.
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  Proxy proxy{io, Endpoint{"127.0.0.1", acceptor.local_endpoint().port()}};
  tcp::socket sink(io);
  bool accepted = false;
  std::string got;
  std::array<char, 256> buf{};
  std::function<void()> read = [&] {
    sink.async_read_some(asio::buffer(buf), [&](const boost::system::error_code& ec, std::size_t n) {
      if (ec) return;
      got.append(buf.data(), n);
      read();
    });
  };
  acceptor.async_accept(sink, [&](const boost::system::error_code& ec) {
    accepted = !ec;
    if (accepted) read();
  });
  std::vector<std::size_t> at_sink;  // bytes the sink has read or can read, as the tap says Forwarded
  proxy.set_tap([&](std::uint64_t, Direction d, Proxy::Seen s, std::string_view) {
    if (d != Direction::ToServer || s != Proxy::Seen::Forwarded) return;
    boost::system::error_code ec;
    at_sink.push_back(got.size() + (accepted ? sink.available(ec) : 0));
  });
  Client c(io, proxy.port());
  REQUIRE(run_until(io, [&] { return accepted; }, Duration::s(5)));
  const std::string one = resp::encode({"PING", "one"}), two = resp::encode({"PING", "two"});
  c.send({"PING", "one"});
  REQUIRE(run_until(io, [&] { return got.size() >= one.size(); }, Duration::s(5)));
  c.send({"PING", "two"});
  REQUIRE(run_until(io, [&] { return got.size() >= one.size() + two.size(); }, Duration::s(5)));
  CHECK(got == one + two);
  CHECK(at_sink == std::vector<std::size_t>{0, one.size()});
}

TEST_CASE("a message never overtakes the one ahead of it when the delay shrinks") {
  Link l;
  Client c(l.io, l.proxy.port());
  l.proxy.set_delay(Direction::ToServer, Duration::ms(300));
  c.send({"INCR", "n"});
  run_for(l.io, Duration::ms(20));  // the proxy has cut the first message
  l.proxy.set_delay(Direction::ToServer, Duration::zero());
  c.send({"INCR", "n"});
  REQUIRE(run_until(l.io, [&] { return c.replies.size() == 2; }, Duration::s(5)));
  CHECK(c.replies[0].integer == 1);
  CHECK(c.replies[1].integer == 2);
}

TEST_CASE("sever resets the client's connection and a new connection works") {
  Link l;
  Client c(l.io, l.proxy.port());
  c.send({"PING"});
  REQUIRE(run_until(l.io, [&] { return !c.replies.empty(); }, Duration::s(5)));
  l.proxy.sever();
  CHECK(run_until(l.io, [&] { return c.closed; }, Duration::s(5)));
  CHECK(l.proxy.connections() == 0);
  Client again(l.io, l.proxy.port());
  again.send({"PING"});
  REQUIRE(run_until(l.io, [&] { return !again.replies.empty(); }, Duration::s(5)));
  CHECK(again.replies[0].str == "PONG");
  CHECK(l.proxy.accepted() == 2);
}

TEST_CASE("a node's crash closes the client's connection and the proxy reaches the node again after its restart") {
  Link l;
  Client c(l.io, l.proxy.port());
  c.send({"PING"});
  REQUIRE(run_until(l.io, [&] { return !c.replies.empty(); }, Duration::s(5)));
  l.sup.crash("redis1");
  CHECK(run_until(l.io, [&] { return c.closed; }, Duration::s(5)));
  Client while_down(l.io, l.proxy.port());  // accepted by the proxy, then reset: the node refuses
  CHECK(run_until(l.io, [&] { return while_down.closed; }, Duration::s(5)));
  l.sup.restart("redis1");
  Client after(l.io, l.proxy.port());
  after.send({"PING"});
  REQUIRE(run_until(l.io, [&] { return !after.replies.empty(); }, Duration::s(5)));
  CHECK(after.replies[0].str == "PONG");
}

// --- Byte-stream framings: length-prefixed frames (ZooKeeper's), raw chunks --------------

namespace {

// A 4-byte big-endian length and the body.
std::string frame(const std::string& body) {
  const auto n = static_cast<std::uint32_t>(body.size());
  std::string out{static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n)};
  return out + body;
}

// A peer on the test's context, either end of a link: it keeps every byte it
// reads and writes what it is told to.
struct Peer {
  explicit Peer(tcp::socket s) : socket(std::move(s)) { read(); }
  void read() {
    socket.async_read_some(asio::buffer(buf), [this](const boost::system::error_code& ec, std::size_t n) {
      if (ec) {
        (ec == asio::error::eof ? ended : reset) = true;
        return;
      }
      got.append(buf.data(), n);
      read();
    });
  }
  void write(const std::string& bytes) { asio::write(socket, asio::buffer(bytes)); }
  tcp::socket socket;
  std::array<char, 4096> buf{};
  std::string got;
  bool ended = false;  // read a FIN
  bool reset = false;  // read an error (a reset)
};

// A node that is nothing but a listening socket of the test's own, and a
// proxy in front of it cutting length-prefixed frames.
struct FramedLink {
  FramedLink() {
    acceptor.open(tcp::v4());
    acceptor.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor.listen();
    proxy = std::make_unique<Proxy>(io, Endpoint{"127.0.0.1", acceptor.local_endpoint().port()});
    proxy->set_framing(framing::length_prefixed());
  }
  // A client connected through the proxy, and the node's end of its connection.
  std::pair<std::unique_ptr<Peer>, std::unique_ptr<Peer>> connect() {
    tcp::socket c(io);
    c.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), proxy->port()));
    std::unique_ptr<Peer> server;
    acceptor.async_accept([&](const boost::system::error_code& ec, tcp::socket s) {
      if (!ec) server = std::make_unique<Peer>(std::move(s));
    });
    REQUIRE(run_until(io, [&] { return server != nullptr; }, Duration::s(5)));
    return {std::make_unique<Peer>(std::move(c)), std::move(server)};
  }
  asio::io_context io;
  tcp::acceptor acceptor{io};
  std::unique_ptr<Proxy> proxy;
};

}  // namespace

TEST_CASE("length-prefixed framing: a frame split across writes, and frames sharing one, are each one message") {
  FramedLink l;
  auto [client, server] = l.connect();
  const std::string first = frame("first frame"), second = frame("second"), third = frame("");
  l.proxy->drop_next(Direction::ToServer, 1);
  client->write(first.substr(0, 2));  // not even the length yet
  run_for(l.io, Duration::ms(50));
  client->write(first.substr(2, 7));
  run_for(l.io, Duration::ms(50));
  client->write(first.substr(9) + second + third);
  REQUIRE(run_until(l.io, [&] {
    return server->got.size() == second.size() + third.size() && l.proxy->stats(Direction::ToServer).forwarded == 2;
  }, Duration::s(5)));
  CHECK(server->got == second + third);  // the dropped message was the whole first frame, no more, no less
  CHECK(l.proxy->stats(Direction::ToServer).dropped == 1);
}

TEST_CASE("length-prefixed framing: held frames cross in order at the heal, per direction") {
  FramedLink l;
  auto [client, server] = l.connect();
  l.proxy->hold(Direction::ToClient);
  server->write(frame("a") + frame("bb"));
  server->write(frame("ccc"));
  client->write(frame("request"));  // the other direction is open
  REQUIRE(run_until(l.io, [&] { return server->got == frame("request"); }, Duration::s(5)));
  run_for(l.io, Duration::ms(100));
  CHECK(client->got.empty());
  CHECK(l.proxy->stats(Direction::ToClient).queued == 3);
  l.proxy->heal(Direction::ToClient);
  REQUIRE(run_until(l.io, [&] { return client->got.size() == 3 * 4 + 6; }, Duration::s(5)));
  CHECK(client->got == frame("a") + frame("bb") + frame("ccc"));
}

TEST_CASE("length-prefixed framing: a delay of 200 ms holds each frame back that long") {
  FramedLink l;
  auto [client, server] = l.connect();
  l.proxy->set_delay(Direction::ToServer, Duration::ms(200));
  const auto start = RealClock::now();
  client->write(frame("ping"));
  REQUIRE(run_until(l.io, [&] { return !server->got.empty(); }, Duration::s(5)));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(RealClock::now() - start).count();
  CHECK(took >= 195);
  CHECK(took < 2'000);
}

TEST_CASE("a FIN does not cross a dropping path until it heals, and on an open path it crosses at once") {
  FramedLink l;
  auto [client, server] = l.connect();
  l.proxy->drop(Direction::ToClient);
  server->write(frame("lost"));
  server->socket.shutdown(tcp::socket::shutdown_send);  // the server closes its side (a ZooKeeper session's end)
  run_for(l.io, Duration::ms(200));
  CHECK(client->got.empty());
  CHECK_FALSE(client->ended);  // a partitioned client does not hear of it
  l.proxy->heal(Direction::ToClient);
  CHECK(run_until(l.io, [&] { return client->ended; }, Duration::s(5)));
  CHECK(client->got.empty());  // what was dropped stays lost
  // The other direction, never partitioned: its FIN crosses at once.
  client->socket.shutdown(tcp::socket::shutdown_send);
  CHECK(run_until(l.io, [&] { return server->ended; }, Duration::s(5)));
}

TEST_CASE("a reset waits out a hold, then resets the other side") {
  FramedLink l;
  auto [client, server] = l.connect();
  l.proxy->hold(Direction::ToClient);
  server->socket.set_option(asio::socket_base::linger(true, 0));
  server->socket.close();  // an RST
  run_for(l.io, Duration::ms(200));
  CHECK_FALSE(client->reset);
  CHECK(l.proxy->connections() == 1);
  l.proxy->heal();
  CHECK(run_until(l.io, [&] { return client->reset; }, Duration::s(5)));
  CHECK(l.proxy->connections() == 0);
}

TEST_CASE("a length beyond the framing's maximum is not of the protocol: the link closes") {
  FramedLink l;
  auto [client, server] = l.connect();
  client->write(std::string("\x7f\xff\xff\xff", 4) + "x");  // 2 GB announced
  CHECK(run_until(l.io, [&] { return client->ended || client->reset; }, Duration::s(5)));
  CHECK(server->got.empty());
  CHECK(l.proxy->connections() == 0);
  // A negative length (Java reads an int) is refused the same way.
  CHECK_THROWS_AS(framing::length_prefixed()(std::string("\xff\xff\xff\xfe", 4)), Error);
  CHECK(framing::length_prefixed()(std::string("\0\0\0\x05" "abcd", 8)) == std::nullopt);
  CHECK(framing::length_prefixed()(std::string("\0\0\0\x04" "abcdEXTRA", 13)) == 8u);
  CHECK(framing::length_prefixed(16)(std::string("\0\0\0\x10", 4)) == std::nullopt);  // 16 is allowed, not there yet
  CHECK_THROWS_AS(framing::length_prefixed(16)(std::string("\0\0\0\x11", 4)), Error);
  // By default a frame up to ZooKeeper's jute.maxbuffer (0xfffff, ZooKeeper
  // 3.8.0 BinaryInputArchive.maxBuffer) is taken: 1 MiB announced, awaited.
  CHECK(framing::length_prefixed()(std::string("\0\x0f\xff\xff", 4)) == std::nullopt);
}

TEST_CASE("sever resets both ends of a framed link") {
  FramedLink l;
  auto [client, server] = l.connect();
  client->write(frame("x"));
  REQUIRE(run_until(l.io, [&] { return !server->got.empty(); }, Duration::s(5)));
  l.proxy->sever();
  CHECK(run_until(l.io, [&] { return client->reset && server->reset; }, Duration::s(5)));
}

TEST_CASE("raw framing: each chunk read is one message") {
  FramedLink l;
  l.proxy->set_framing(Direction::ToServer, framing::raw());
  auto [client, server] = l.connect();
  l.proxy->drop_next(Direction::ToServer, 1);
  client->write("no length prefix here");  // one write, one read on loopback
  run_for(l.io, Duration::ms(100));
  client->write("second");
  REQUIRE(run_until(l.io, [&] { return server->got == "second"; }, Duration::s(5)));
  CHECK(l.proxy->stats(Direction::ToServer).dropped == 1);
  CHECK(framing::raw()("") == std::nullopt);
  CHECK(framing::raw()("abc") == 3u);
}

}  // namespace live_proxy_test
