#include <utility>  // before any Asio header: Boost 1.74's Asio uses std::exchange without it (g++ 12)

#include "live/zookeeper/connection.hpp"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <string>

namespace locksim::live::zk {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

struct Waiting {
  std::int32_t xid;
  OpCode op;
  std::function<void(std::optional<Response>)> done;
};

}  // namespace

struct Connection::State : std::enable_shared_from_this<Connection::State> {
  explicit State(asio::io_context& io) : io(io), socket(io) {}
  asio::io_context& io;
  tcp::socket socket;
  Handlers handlers;
  std::array<char, 16384> buf{};
  std::string in;       // bytes read, not yet a whole packet
  std::string outbox;   // to write once the one in flight is written
  std::string writing_now;
  bool writing = false, connected = false, closed = false;
  bool answered = false;  // the ConnectResponse came
  bool ready = false;     // ... with a valid session
  std::int32_t next_xid = 1;
  std::int64_t last_zxid = 0;
  std::deque<Waiting> waiting;                    // requests, in the order sent
  std::deque<std::function<void(bool)>> pings;    // pings, in the order sent

  void post(std::function<void()> f) { asio::post(io, std::move(f)); }

  void send(std::string bytes) {
    outbox += bytes;
    flush();
  }

  void flush() {
    if (closed || !connected || writing || outbox.empty()) return;
    writing = true;
    writing_now = std::exchange(outbox, {});
    asio::async_write(socket, asio::buffer(writing_now), [self = shared_from_this()](const error_code& ec, std::size_t) {
      self->writing = false;
      if (self->closed) return;
      if (ec) return self->end();
      self->flush();
    });
  }

  void read() {
    socket.async_read_some(asio::buffer(buf), [self = shared_from_this()](const error_code& ec, std::size_t n) {
      if (self->closed) return;
      if (ec) return self->end();  // EOF (the server closed it: an expired or closed session) or a reset
      self->in.append(self->buf.data(), n);
      try {
        while (!self->closed) {
          std::optional<std::string> body = next_packet(self->in);
          if (!body) break;
          self->on_packet(*body);
        }
      } catch (const Error&) {
        return self->end();  // not ZooKeeper's bytes: the connection is useless
      }
      if (!self->closed) self->read();
    });
  }

  void on_packet(const std::string& body) {
    if (!answered) {
      answered = true;
      const ConnectResponse r = decode_connect_response(body);
      ready = r.timeout_ms > 0;
      if (handlers.connected) handlers.connected(r);
      return;
    }
    const ReplyHeader h = decode_reply_header(body);
    if (h.xid == kNotificationXid) {
      if (handlers.event) handlers.event(decode_event(body));
      return;
    }
    if (h.zxid > 0) last_zxid = h.zxid;  // ClientCnxn.readResponse
    if (h.xid == kPingXid) {
      if (pings.empty()) return;  // an answer to nobody: ignore it, as ClientCnxn does
      auto done = std::move(pings.front());
      pings.pop_front();
      if (done) done(true);
      return;
    }
    if (waiting.empty() || waiting.front().xid != h.xid) return end();  // Xid out of order
    Waiting w = std::move(waiting.front());
    waiting.pop_front();
    const Response r = decode_response(w.op, body);
    if (w.done) w.done(r);
  }

  // The connection is over: everyone waiting hears so, later.
  void end() {
    if (closed) return;
    closed = true;
    error_code ec;
    socket.close(ec);
    std::deque<Waiting> requests = std::move(waiting);
    std::deque<std::function<void(bool)>> lost_pings = std::move(pings);
    waiting.clear();
    pings.clear();
    const bool was_answered = answered;
    Handlers h = handlers;
    post([requests = std::move(requests), lost_pings = std::move(lost_pings), was_answered, h]() mutable {
      if (!was_answered && h.connected) h.connected(std::nullopt);
      for (Waiting& w : requests)
        if (w.done) w.done(std::nullopt);
      for (auto& p : lost_pings)
        if (p) p(false);
      if (h.closed) h.closed();
    });
  }
};

std::shared_ptr<Connection> Connection::open(asio::io_context& io, const Endpoint& to, const ConnectRequest& hello,
                                             Handlers handlers) {
  auto s = std::make_shared<State>(io);
  s->handlers = std::move(handlers);
  s->outbox = encode(hello);
  const tcp::endpoint at(asio::ip::make_address(to.host), to.port);
  s->socket.async_connect(at, [s](const error_code& ec) {
    if (s->closed) return;
    if (ec) return s->end();  // refused: the server is down
    error_code ignored;
    s->socket.set_option(tcp::no_delay(true), ignored);
    s->connected = true;
    s->flush();
    s->read();
  });
  return std::shared_ptr<Connection>(new Connection(std::move(s)));
}

// Nobody listens any more: the socket closes and nothing is told.
Connection::~Connection() {
  State& s = *state_;
  s.handlers = {};
  s.waiting.clear();
  s.pings.clear();
  s.end();
}

std::int32_t Connection::request(const Request& r, std::function<void(std::optional<Response>)> done) {
  State& s = *state_;
  const std::int32_t xid = s.next_xid++;
  if (s.closed) {
    s.post([done = std::move(done)] {
      if (done) done(std::nullopt);
    });
    return xid;
  }
  s.waiting.push_back({xid, r.op, std::move(done)});
  s.send(encode(xid, r));
  return xid;
}

void Connection::ping(std::function<void(bool)> done) {
  State& s = *state_;
  if (s.closed) {
    s.post([done = std::move(done)] {
      if (done) done(false);
    });
    return;
  }
  s.pings.push_back(std::move(done));
  s.send(encode_ping());
}

void Connection::close() { state_->end(); }
bool Connection::closed() const { return state_->closed; }
bool Connection::session_ready() const { return state_->ready; }
std::int64_t Connection::last_zxid() const { return state_->last_zxid; }
std::size_t Connection::pending() const { return state_->waiting.size() + state_->pings.size(); }

}  // namespace locksim::live::zk
