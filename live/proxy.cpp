#include <utility>  // before any Asio header: Boost 1.74's Asio uses std::exchange without it (g++ 12)

#include "live/proxy.hpp"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <list>
#include <string>

#include "live/resp.hpp"

namespace locksim::live {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

struct Rules {
  bool hold = false;
  bool drop = false;
  int drop_next = 0;
  Duration delay = Duration::zero();
  int delay_next = 0;                     // the next n messages wait `next_delay` more
  Duration next_delay = Duration::zero();
};

int index(Direction d) { return d == Direction::ToServer ? 0 : 1; }

struct Link;

}  // namespace

struct Proxy::State {
  State(asio::io_context& io, Endpoint to) : io(io), node(std::move(to)), acceptor(io) {}
  asio::io_context& io;
  Endpoint node;
  tcp::acceptor acceptor;
  std::uint16_t port = 0;
  Rules rules[2];
  std::uint64_t forwarded[2] = {0, 0};
  std::uint64_t dropped[2] = {0, 0};
  std::uint64_t accepted = 0;
  Framing framing[2] = {framing::resp(), framing::resp()};
  Proxy::Tap tap;  // set_tap
  // Open links. A link leaves the list when it closes, which breaks the
  // link -> state -> link cycle; in-flight handlers keep it alive until they run.
  std::list<std::shared_ptr<Link>> links;
  bool closed = false;
};

namespace {

struct Message {
  std::string bytes;
  RealClock::time_point due;
};

// One direction of a link: reads from one socket, cuts messages, queues them, writes them to the other.
struct Pipe {
  explicit Pipe(asio::io_context& io) : timer(io) {}
  std::array<char, 16384> buf{};
  std::string pending;             // bytes read that do not make a whole message yet
  std::deque<Message> queue;       // cut, waiting for their time (or for a heal), sent in order:
                                   // a message never leaves before the one ahead of it
  asio::steady_timer timer;
  bool writing = false;
  bool ended = false;  // the source sent EOF: after the queue, the sink is shut down for writing
  bool reset = false;  // the source was reset: after the queue, the link is reset
  bool shut = false;
};

struct Link : std::enable_shared_from_this<Link> {
  Link(std::shared_ptr<Proxy::State> s, tcp::socket c, std::uint64_t n)
      : state(std::move(s)), client(std::move(c)), server(state->io), pipes{Pipe(state->io), Pipe(state->io)}, number(n) {}

  std::shared_ptr<Proxy::State> state;
  tcp::socket client;
  tcp::socket server;
  Pipe pipes[2];  // [ToServer]: client -> server, [ToClient]: server -> client
  std::uint64_t number;  // in the order the proxy accepted its connections (Proxy::Tap)
  bool connected = false;
  bool closed = false;

  tcp::socket& source(Direction d) { return d == Direction::ToServer ? client : server; }
  tcp::socket& sink(Direction d) { return d == Direction::ToServer ? server : client; }

  void start() {
    error_code ec;
    client.set_option(tcp::no_delay(true), ec);
    auto self = shared_from_this();
    const tcp::endpoint to(asio::ip::make_address(state->node.host), state->node.port);
    server.async_connect(to, [self](const error_code& ec) {
      if (self->closed) return;
      if (ec) return self->close(true);  // the node is down: the client sees a reset, as if refused
      error_code ignored;
      self->server.set_option(tcp::no_delay(true), ignored);
      self->connected = true;
      self->read(Direction::ToClient);
      self->pump(Direction::ToServer);
    });
    read(Direction::ToServer);  // the client's first messages queue until the node is connected
  }

  void read(Direction d) {
    Pipe& p = pipes[index(d)];
    auto self = shared_from_this();
    source(d).async_read_some(asio::buffer(p.buf), [self, d](const error_code& ec, std::size_t n) {
      if (self->closed) return;
      Pipe& p = self->pipes[index(d)];
      if (ec) {
        // A FIN, or a reset (or worse): passed on after what is queued, when the path is open.
        (ec == asio::error::eof ? p.ended : p.reset) = true;
        self->pump(d);
        return;
      }
      p.pending.append(p.buf.data(), n);
      if (!self->cut(d)) return;
      self->pump(d);
      self->read(d);
    });
  }

  // Cuts the whole messages out of `pending` and applies the rules to each.
  // False: not of the framing's protocol, closed.
  bool cut(Direction d) {
    Pipe& p = pipes[index(d)];
    Rules& rules = state->rules[index(d)];
    const auto now = RealClock::now();
    while (!p.pending.empty()) {
      std::optional<std::size_t> len;
      try {
        len = state->framing[index(d)](p.pending);
        if (len && (*len == 0 || *len > p.pending.size())) throw Error("a framing cut outside the bytes it was given");
      } catch (const Error&) {
        close();
        return false;
      }
      if (!len) return true;
      std::string bytes = p.pending.substr(0, *len);
      p.pending.erase(0, *len);
      if (state->tap) state->tap(number, d, Proxy::Seen::Arrived, bytes);
      if (rules.drop || rules.drop_next > 0) {
        if (!rules.drop) --rules.drop_next;
        ++state->dropped[index(d)];
        if (state->tap) state->tap(number, d, Proxy::Seen::Dropped, bytes);
        continue;
      }
      Duration extra = rules.delay;
      if (rules.delay_next > 0) {
        --rules.delay_next;
        extra += rules.next_delay;
      }
      p.queue.push_back({std::move(bytes), now + real(extra)});
    }
    return true;
  }

  // Writes the next message of direction `d` if it may go now, or arranges to.
  void pump(Direction d) {
    Pipe& p = pipes[index(d)];
    const Rules& rules = state->rules[index(d)];
    if (closed || p.writing || !connected || rules.hold) return;
    if (p.queue.empty()) {
      if (rules.drop) return;  // the end of the stream waits for the path too
      if (p.reset) return close(true);  // a reset from one side: reset the other
      if (p.ended && !p.shut) {
        error_code ec;
        sink(d).shutdown(tcp::socket::shutdown_send, ec);
        p.shut = true;
        if (pipes[0].shut && pipes[1].shut) close();
      }
      return;
    }
    auto self = shared_from_this();
    if (p.queue.front().due > RealClock::now()) {
      p.timer.expires_at(p.queue.front().due);  // cancels an earlier wait, whose handler then does nothing
      p.timer.async_wait([self, d](const error_code& ec) {
        if (!ec) self->pump(d);
      });
      return;
    }
    p.writing = true;
    // Told as the write starts, not when it completes: the peer (an external
    // client's observer, on this same io_context) can read these bytes and
    // run its handler before this write's completion handler runs, and it
    // takes the message's id from what the tap has recorded (a Delivered with
    // an id nobody Sent, seen once in the suite).
    if (state->tap) state->tap(number, d, Proxy::Seen::Forwarded, p.queue.front().bytes);
    asio::async_write(sink(d), asio::buffer(p.queue.front().bytes), [self, d](const error_code& ec, std::size_t) {
      Pipe& p = self->pipes[index(d)];
      p.writing = false;
      if (self->closed) return;
      if (ec) return self->close();
      p.queue.pop_front();
      ++self->state->forwarded[index(d)];
      self->pump(d);
    });
  }

  // Closes both sockets; `reset`: with an RST rather than a FIN.
  void close(bool reset = false) {
    if (closed) return;
    closed = true;
    auto self = shared_from_this();  // the list may hold the last reference
    error_code ec;
    for (tcp::socket* s : {&client, &server}) {
      if (reset && s->is_open()) s->set_option(asio::socket_base::linger(true, 0), ec);
      s->close(ec);
    }
    // The queues stay: a write in flight still points into the first message.
    for (Pipe& p : pipes) p.timer.cancel();
    state->links.remove(self);
  }
};

void accept(const std::shared_ptr<Proxy::State>& state) {
  state->acceptor.async_accept([state](const error_code& ec, tcp::socket socket) {
    if (state->closed || ec == asio::error::operation_aborted) return;
    if (!ec) {
      auto link = std::make_shared<Link>(state, std::move(socket), state->accepted++);
      state->links.push_back(link);
      link->start();
    }
    accept(state);
  });
}

// Applies `f` to every open link; safe if `f` closes one.
template <typename F>
void for_each_link(Proxy::State& s, F f) {
  const std::vector<std::shared_ptr<Link>> links(s.links.begin(), s.links.end());
  for (const auto& link : links) f(*link);
}

}  // namespace

Proxy::Proxy(asio::io_context& io, Endpoint node) : state_(std::make_shared<State>(io, std::move(node))) {
  const tcp::endpoint here(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(here.protocol());
  state_->acceptor.bind(here);
  state_->acceptor.listen();
  state_->port = state_->acceptor.local_endpoint().port();
  accept(state_);
}

Proxy::~Proxy() {
  state_->closed = true;
  error_code ec;
  state_->acceptor.close(ec);
  for_each_link(*state_, [](Link& l) { l.close(); });
}

std::uint16_t Proxy::port() const { return state_->port; }
const Endpoint& Proxy::node() const { return state_->node; }

void Proxy::hold(Direction d) { state_->rules[index(d)].hold = true; }

void Proxy::heal(Direction d) {
  Rules& r = state_->rules[index(d)];
  r.hold = false;
  r.drop = false;
  r.drop_next = 0;
  for_each_link(*state_, [d](Link& l) { l.pump(d); });
}

void Proxy::heal() {
  heal(Direction::ToServer);
  heal(Direction::ToClient);
}

void Proxy::drop(Direction d) { state_->rules[index(d)].drop = true; }
void Proxy::drop_next(Direction d, int n) { state_->rules[index(d)].drop_next += n; }
void Proxy::set_delay(Direction d, Duration extra) { state_->rules[index(d)].delay = extra; }
void Proxy::delay_next(Direction d, int n, Duration extra) {
  state_->rules[index(d)].delay_next = n;
  state_->rules[index(d)].next_delay = extra;
}

void Proxy::sever() {
  for_each_link(*state_, [](Link& l) { l.close(true); });
}

Proxy::Stats Proxy::stats(Direction d) const {
  Stats s{state_->forwarded[index(d)], state_->dropped[index(d)], 0};
  for (const auto& link : state_->links) s.queued += link->pipes[index(d)].queue.size();
  return s;
}

void Proxy::set_framing(Framing f) {
  state_->framing[0] = f;
  state_->framing[1] = std::move(f);
}
void Proxy::set_framing(Direction d, Framing f) { state_->framing[index(d)] = std::move(f); }
void Proxy::set_tap(Tap tap) { state_->tap = std::move(tap); }

void Proxy::set_raw(bool raw) { set_framing(raw ? framing::raw() : framing::resp()); }

namespace framing {

Framing resp() { return [](std::string_view pending) { return resp::frame_length(pending); }; }

Framing raw() {
  return [](std::string_view pending) -> std::optional<std::size_t> {
    if (pending.empty()) return std::nullopt;
    return pending.size();
  };
}

Framing length_prefixed(std::uint32_t max) {
  return [max](std::string_view pending) -> std::optional<std::size_t> {
    if (pending.size() < 4) return std::nullopt;
    const auto byte = [&](int i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(pending[i])); };
    const std::uint32_t len = byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
    // Java reads it as a signed int: a negative length is as wrong as a long one.
    if (len > max) throw Error("a frame of " + std::to_string(static_cast<std::int32_t>(len)) + " bytes");
    if (pending.size() - 4 < len) return std::nullopt;
    return std::size_t{4} + len;
  };
}

}  // namespace framing

std::size_t Proxy::connections() const { return state_->links.size(); }
std::uint64_t Proxy::accepted() const { return state_->accepted; }

}  // namespace locksim::live
