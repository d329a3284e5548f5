// A live client's calls over one connection to a Redis node (live/client_env.cpp),
// against a server in this test that answers the way a test needs: replies
// are matched to requests by their order on the connection, so a request
// whose reply never comes (the run's proxy dropped it) must not leave the
// next request's reply taken for its own.
#include <utility>  // before Asio (Boost 1.74)

#include <boost/asio.hpp>
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <string>

#include "live/client_env.hpp"
#include "live/resp.hpp"
#include "sim/trace.hpp"

namespace live_client_env_test {

using namespace locksim;
using namespace locksim::live;
namespace asio = boost::asio;
using asio::ip::tcp;

// The hub of one client and one node: the node is at `port`; no storage, no
// coordination service.
class OneNodeHub final : public LiveHub {
 public:
  OneNodeHub(asio::io_context& io, std::uint16_t port) : io_(io), clock_(RealClock::now(), 1), port_(port) {
    client = trace_.add_process("client1", ProcessRole::Client);
    node = trace_.add_process("redis1", ProcessRole::LockNode);
  }
  asio::io_context& io() override { return io_; }
  const ScenarioClock& clock() const override { return clock_; }
  Trace& trace() override { return trace_; }
  Kind kind_of(ProcId p) const override { return p == node ? Kind::Node : Kind::Other; }
  std::uint16_t port_for(ProcId, ProcId) const override { return port_; }
  const resp::Names& names() const override { return names_; }
  void call_storage(ProcId, const storage::Request&, std::uint64_t,
                    std::function<void(storage::Reply, std::uint64_t)>) override {
    FAIL("no storage here");
  }
  std::uint64_t observed(ProcId, ProcId, std::uint64_t, const redis::Request&, const redis::Reply&) override {
    return next_message();
  }
  std::uint64_t next_message() override { return ++messages_; }
  void coord_sent(ProcId, ProcId, const coord::Request&) override {}
  std::uint64_t observed_coord(ProcId, ProcId, std::uint64_t, const coord::Request*, const Payload&) override {
    return next_message();
  }
  void after_revision(ProcId, std::int64_t, std::function<void()> f) override { f(); }

  ProcId client = 0, node = 0;

 private:
  asio::io_context& io_;
  ScenarioClock clock_;
  Trace trace_;
  resp::Names names_;
  std::uint16_t port_;
  std::uint64_t messages_ = 0;
};

// A node that never answers the first command it is sent (as if the proxy
// had dropped it) and answers every later one, on any connection, with the
// bulk string "seen N": N counts the commands it has read.
class DroppingNode {
 public:
  explicit DroppingNode(asio::io_context& io) : acceptor_(io, tcp::endpoint(asio::ip::make_address_v4("127.0.0.1"), 0)) {
    accept();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  int connections = 0;

 private:
  struct Peer {
    explicit Peer(tcp::socket s) : socket(std::move(s)) {}
    tcp::socket socket;
    resp::Decoder decoder;
    std::array<char, 4096> buffer{};
    std::string out;
  };
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket s) {
      if (ec) return;
      ++connections;
      read(std::make_shared<Peer>(std::move(s)));
      accept();
    });
  }
  void read(const std::shared_ptr<Peer>& p) {
    p->socket.async_read_some(asio::buffer(p->buffer), [this, p](const boost::system::error_code& ec, std::size_t n) {
      if (ec) return;
      p->decoder.feed(std::string_view(p->buffer.data(), n));
      std::string replies;
      while (std::optional<resp::Value> command = p->decoder.next()) {
        if (++commands_ == 1) continue;  // dropped
        const std::string text = "seen " + std::to_string(commands_);
        replies += "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
      }
      if (!replies.empty()) {
        p->out = std::move(replies);
        boost::system::error_code ignored;
        asio::write(p->socket, asio::buffer(p->out), ignored);
      }
      read(p);
    });
  }
  tcp::acceptor acceptor_;
  int commands_ = 0;
};

// What a call ended with: nothing yet, no answer (timed out), or the reply.
struct Outcome final : ReplySink {
  bool ended = false;
  std::optional<redis::Reply> reply;
  void on_reply(std::uint32_t, Payload* r) override {
    ended = true;
    if (r) reply = std::get<redis::Reply>(*r);
  }
};

redis::Request get(const std::string& key) {
  redis::Request r;
  r.op = redis::Op::Get;
  r.key = key;
  return r;
}

// Runs the hub's loop until `done` holds or ten real seconds pass.
void run_until(OneNodeHub& hub, const std::function<bool()>& done) {
  const auto deadline = RealClock::now() + std::chrono::seconds(10);
  while (!done() && RealClock::now() < deadline) hub.io().run_one_for(std::chrono::milliseconds(50));
}

TEST_CASE("a live call whose reply never comes times out, and the next call on that node gets its own reply") {
  asio::io_context io;
  DroppingNode server(io);
  OneNodeHub hub(io, server.port());
  LiveClientEnv env(hub, hub.client, ClockSpec{}, Rng(1));

  Outcome first;
  env.start_call(hub.node, Payload(get("lock")), Duration::ms(200), first, 0);
  run_until(hub, [&] { return first.ended; });
  REQUIRE(first.ended);
  CHECK_FALSE(first.reply);  // no answer: timed out

  Outcome second;
  env.start_call(hub.node, Payload(get("lock")), Duration::s(5), second, 0);
  run_until(hub, [&] { return second.ended; });
  REQUIRE(second.ended);
  REQUIRE(second.reply);
  CHECK(second.reply->str == "seen 2");
  // The timed-out connection was closed: the second call took a new one.
  CHECK(server.connections == 2);
}

}  // namespace live_client_env_test
