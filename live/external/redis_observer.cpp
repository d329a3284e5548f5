#include <utility>  // before Asio (Boost 1.74)

#include "live/external/redis_observer.hpp"

#include <algorithm>
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <list>

#include "live/external/storage_server.hpp"
#include "live/resp.hpp"

namespace locksim::live::external {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

namespace {

// A command name, upper case.
std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// Commands that cannot go inside MULTI, or that mean something else there.
bool never_wrapped(const std::string& command) {
  static const std::array<std::string_view, 11> kNever{"MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH", "SUBSCRIBE",
                                                       "PSUBSCRIBE", "MONITOR", "BLPOP", "BRPOP", "BLMOVE"};
  return std::find(kNever.begin(), kNever.end(), command) != kNever.end();
}

std::string describe_argv(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += a.size() > 40 ? a.substr(0, 37) + "..." : a;  // a script's text: its start
  }
  return out;
}

std::optional<resp::Value> decoded(std::string_view bytes) {
  try {
    resp::Decoder d;
    d.feed(bytes);
    return d.next();
  } catch (const Error&) {
    return std::nullopt;  // an inline command: passed on, not read
  }
}

// Element `index` of an EXEC reply (an array), as the bytes the node sent.
std::optional<std::string> element_at(const std::string& exec_reply, std::size_t index) {
  if (exec_reply.empty() || exec_reply[0] != '*') return std::nullopt;
  const auto header = exec_reply.find("\r\n");
  if (header == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(exec_reply).substr(header + 2);
  for (std::size_t i = 0;; ++i) {
    std::optional<std::size_t> len;
    try {
      len = resp::frame_length(rest);
    } catch (const Error&) {
      return std::nullopt;
    }
    if (!len) return std::nullopt;
    if (i == index) return std::string(rest.substr(0, *len));
    rest.remove_prefix(*len);
  }
}

}  // namespace

std::string request_text(std::string_view bytes) {
  const std::optional<resp::Value> v = decoded(bytes);
  if (!v || v->type != resp::Value::Type::Array) return "?";
  std::vector<std::string> argv;
  for (const resp::Value& a : v->elements) argv.push_back(a.str);
  return describe_argv(argv);
}

std::string reply_text(std::string_view bytes) {
  const std::optional<resp::Value> v = decoded(bytes);
  if (!v) return "?";
  if (v->type == resp::Value::Type::Error) return "(error) " + v->str;
  return resp::describe(*v);
}

// --- The key, across clients ----------------------------------------------------

ProcId NodeKeys::owner_of(ProcId client, const std::vector<std::string>& argv, const std::string& value) {
  // The request that put the value there carried it: that client's value.
  if (std::find(argv.begin() + 1, argv.end(), value) != argv.end()) owners_.emplace(value, client);
  return known_owner(value);
}

ProcId NodeKeys::known_owner(const std::string& value) const {
  const auto it = owners_.find(value);
  return it == owners_.end() ? kNoProc : it->second;
}

void NodeKeys::after(ProcId client, const std::vector<std::string>& argv, const std::optional<std::string>& before,
                     const std::optional<std::string>& value, std::int64_t pttl_ms, const std::string& detail) {
  const auto now = RealClock::now();
  const ProcId owner = value ? owner_of(client, argv, *value) : kNoProc;
  if (!recording_) {
    holder_ = owner;
    due_ = value && pttl_ms >= 0 ? now + std::chrono::milliseconds(pttl_ms) : RealClock::time_point::max();
    return;
  }
  if (holder_ != kNoProc && owner != holder_) {
    // The holder's key went: its TTL had run out (or its node's clock says
    // so), or this request removed it.
    const bool expired = clock_moves_ || now + std::chrono::milliseconds(2) >= due_;
    if (expired) {
      note_now(hub_, node_, Ev::Expired,
               {.owner = holder_, .key = key_, .detail = "as " + hub_.trace().name(client) + "'s command found"});
      told_ = now;
    } else if (!value && !before) {
      // Gone before this request ran (its MULTI read it first): another
      // client's request removed it, whose reply this observer has not yet
      // seen on that client's connection. That reply tells the removal.
      note_now(hub_, node_, Ev::Command,
               {.peer = client, .owner = kNoProc, .key = key_, .content = fnv1a64(detail), .detail = detail});
      return;
    } else if (!value) {
      // This request removed the key it found: its owner is the value's, read
      // in the same transaction, not the last one this observer saw.
      const ProcId removed = known_owner(*before);
      note_now(hub_, node_, Ev::KeyDeleted, {.peer = client, .owner = removed != kNoProc ? removed : holder_, .key = key_});
    }
  }
  note_now(hub_, node_, Ev::Command,
           {.peer = client, .owner = owner, .key = key_, .content = fnv1a64(detail), .detail = detail});
  holder_ = owner;
  due_ = value && pttl_ms >= 0 ? now + std::chrono::milliseconds(pttl_ms) : RealClock::time_point::max();
}

void NodeKeys::command(ProcId client, const std::string& detail) {
  if (!recording_) return;
  note_now(hub_, node_, Ev::Command, {.peer = client, .content = fnv1a64(detail), .detail = detail});
}

void NodeKeys::expired() {
  if (told_ != RealClock::time_point{} && RealClock::now() - told_ < std::chrono::seconds(1)) {
    told_ = {};  // told already, when a command found it gone
    return;
  }
  if (holder_ == kNoProc) return;
  if (recording_)
    note_now(hub_, node_, Ev::Expired, {.owner = holder_, .key = key_, .detail = "as its keyspace notification tells"});
  holder_ = kNoProc;
  due_ = RealClock::time_point::max();
}

void NodeKeys::forget() {
  holder_ = kNoProc;
  due_ = RealClock::time_point::max();
}

// --- One link ---------------------------------------------------------------------

struct Relay;

struct RedisObserver::State {
  State(asio::io_context& io, LiveHub& hub, ProcId client, NodeKeys& keys, Endpoint node, LinkIds& ids)
      : io(io), hub(hub), client(client), keys(keys), node(std::move(node)), ids(ids), acceptor(io) {}
  asio::io_context& io;
  LiveHub& hub;
  ProcId client;
  NodeKeys& keys;
  Endpoint node;
  LinkIds& ids;
  std::uint64_t accepted = 0;
  tcp::acceptor acceptor;
  std::list<std::shared_ptr<Relay>> relays;
  bool closed = false;
};

namespace {

// What the node owes the client for one request it was sent.
struct Expected {
  std::vector<std::string> argv;  // empty: not a command we could read
  std::uint64_t id = 0;           // the request's message id
  bool wrapped = false;
  int replies = 0;                // wrapped: the node's replies seen so far (MULTI's, the request's, GET's, PTTL's)
  std::optional<std::string> refused;  // wrapped: the request's own error at queue time
};

}  // namespace

struct Relay : std::enable_shared_from_this<Relay> {
  Relay(std::shared_ptr<RedisObserver::State> s, tcp::socket c, std::uint64_t n)
      : state(std::move(s)), number(n), client(std::move(c)), server(state->io) {}

  std::shared_ptr<RedisObserver::State> state;
  std::uint64_t number;  // as the proxy numbers the connection that opened it (LinkIds)
  tcp::socket client, server;
  std::array<char, 16384> up_buf{}, down_buf{};
  std::string up_pending, down_pending;
  std::string to_server, to_client;  // bytes waiting for the socket
  bool writing_up = false, writing_down = false;
  bool connected = false, closed = false;
  bool client_multi = false;  // inside the client's own MULTI: nothing is wrapped
  std::deque<Expected> expected;

  LiveHub& hub() { return state->hub; }

  void start() {
    auto self = shared_from_this();
    const tcp::endpoint to(asio::ip::make_address(state->node.host), state->node.port);
    server.async_connect(to, [self](const error_code& ec) {
      if (self->closed) return;
      if (ec) return self->close(true);
      error_code ignored;
      self->server.set_option(tcp::no_delay(true), ignored);
      self->connected = true;
      self->read_down();
      self->flush_up();
    });
    read_up();
  }

  void read_up() {
    client.async_read_some(asio::buffer(up_buf), [self = shared_from_this()](const error_code& ec, std::size_t n) {
      if (self->closed) return;
      if (ec) return self->close(ec != asio::error::eof);
      self->up_pending.append(self->up_buf.data(), n);
      if (!self->requests()) return;
      self->flush_up();
      self->read_up();
    });
  }

  void read_down() {
    server.async_read_some(asio::buffer(down_buf), [self = shared_from_this()](const error_code& ec, std::size_t n) {
      if (self->closed) return;
      if (ec) return self->close(ec != asio::error::eof);
      self->down_pending.append(self->down_buf.data(), n);
      if (!self->replies()) return;
      self->flush_down();
      self->read_down();
    });
  }

  // Cuts the client's requests; wraps those that name the key. False: not RESP, closed.
  bool requests() {
    for (;;) {
      std::optional<std::size_t> len;
      try {
        len = resp::frame_length(up_pending);
      } catch (const Error&) {
        close(true);
        return false;
      }
      if (!len) return true;
      const std::string bytes = up_pending.substr(0, *len);
      up_pending.erase(0, *len);
      request(bytes);
    }
  }

  void request(const std::string& bytes) {
    Expected e;
    e.argv = argv_of(bytes);
    auto& forwarded = state->ids.connections[number].to_server;  // its id on the client's side
    if (forwarded.empty()) {
      e.id = hub().next_message();
    } else {
      e.id = forwarded.front();
      forwarded.pop_front();
    }
    const std::string command = e.argv.empty() ? "" : upper(e.argv[0]);
    const bool names_key = std::find(e.argv.begin() + (e.argv.empty() ? 0 : 1), e.argv.end(), state->keys.key()) != e.argv.end();
    e.wrapped = !client_multi && names_key && !never_wrapped(command);
    if (command == "MULTI") client_multi = true;
    if (command == "EXEC" || command == "DISCARD") client_multi = false;
    if (state->keys.recording())
      note_now(hub(), state->keys.node(), Ev::Delivered,
             {.peer = state->client, .value = static_cast<std::int64_t>(e.id), .content = fnv1a64(bytes),
              .detail = hub().trace().detailed() ? describe_argv(e.argv) : ""});
    if (e.wrapped) {
      // The key before and after the request, in one transaction with it.
      to_server += resp::encode({"MULTI"}) + resp::encode({"GET", state->keys.key()}) + bytes +
                   resp::encode({"GET", state->keys.key()}) + resp::encode({"PTTL", state->keys.key()}) +
                   resp::encode({"EXEC"});
    } else {
      to_server += bytes;
    }
    expected.push_back(std::move(e));
  }

  static std::vector<std::string> argv_of(const std::string& bytes) {
    std::vector<std::string> argv;
    const std::optional<resp::Value> v = decoded(bytes);
    if (v && v->type == resp::Value::Type::Array)
      for (const resp::Value& a : v->elements) argv.push_back(a.str);
    return argv;
  }

  // Cuts the node's replies, answers each request. False: closed.
  bool replies() {
    for (;;) {
      std::optional<std::size_t> len;
      try {
        len = resp::frame_length(down_pending);
      } catch (const Error&) {
        close(true);
        return false;
      }
      if (!len) return true;
      std::string bytes = down_pending.substr(0, *len);
      down_pending.erase(0, *len);
      if (expected.empty()) {  // a push (a subscription's message): passed on
        to_client += bytes;
        continue;
      }
      reply(std::move(bytes));
    }
  }

  void reply(std::string bytes) {
    Expected& e = expected.front();
    if (e.wrapped && ++e.replies < 6) {
      if (e.replies == 3 && !bytes.empty() && bytes[0] == '-') e.refused = bytes;  // the request's own error
      return;  // MULTI's +OK and the +QUEUED of each
    }
    std::string answer = bytes;
    const std::string detail = hub().trace().detailed() ? describe_argv(e.argv) + " -> " + reply_text(bytes) : "";
    if (e.wrapped) {
      answer = e.refused ? *e.refused : element_at(bytes, 1).value_or(bytes);
      const auto [before, value, pttl] = key_around(bytes);
      if (e.refused) state->keys.command(state->client, detail);
      else state->keys.after(state->client, e.argv, before, value, pttl, hub().trace().detailed() ? describe_argv(e.argv) + " -> " + reply_text(answer) : "");
    } else {
      state->keys.command(state->client, detail);
    }
    const std::uint64_t id = hub().next_message();
    state->ids.connections[number].to_client.push_back(id);  // the proxy's tap tells its delivery
    if (state->keys.recording())
      note_now(hub(), state->keys.node(), Ev::Sent,
               {.peer = state->client, .value = static_cast<std::int64_t>(id), .content = fnv1a64(answer),
                .detail = hub().trace().detailed() ? reply_text(answer) : ""});
    to_client += answer;
    expected.pop_front();
  }

  // The key before (GET) and after (GET, PTTL) the request, from its EXEC reply.
  struct Around {
    std::optional<std::string> before, value;
    std::int64_t pttl = -2;
  };
  static Around key_around(const std::string& exec_reply) {
    try {
      resp::Decoder d;
      d.feed(exec_reply);
      const std::optional<resp::Value> v = d.next();
      if (!v || v->type != resp::Value::Type::Array || v->elements.size() != 4) return {};
      Around out;
      if (v->elements[0].type == resp::Value::Type::Bulk) out.before = v->elements[0].str;
      if (v->elements[2].type == resp::Value::Type::Bulk) out.value = v->elements[2].str;
      if (v->elements[3].type == resp::Value::Type::Int) out.pttl = v->elements[3].integer;
      return out;
    } catch (const Error&) {
      return {};
    }
  }

  void flush_up() {
    if (writing_up || !connected || to_server.empty() || closed) return;
    writing_up = true;
    auto chunk = std::make_shared<std::string>(std::move(to_server));
    to_server.clear();
    asio::async_write(server, asio::buffer(*chunk), [self = shared_from_this(), chunk](const error_code& ec, std::size_t) {
      self->writing_up = false;
      if (self->closed) return;
      if (ec) return self->close(true);
      self->flush_up();
    });
  }

  void flush_down() {
    if (writing_down || to_client.empty() || closed) return;
    writing_down = true;
    auto chunk = std::make_shared<std::string>(std::move(to_client));
    to_client.clear();
    asio::async_write(client, asio::buffer(*chunk), [self = shared_from_this(), chunk](const error_code& ec, std::size_t) {
      self->writing_down = false;
      if (self->closed) return;
      if (ec) return self->close(true);
      self->flush_down();
    });
  }

  // Closes both sides; `reset`: with an RST (the other side sees the failure as it was).
  void close(bool reset) {
    if (closed) return;
    closed = true;
    auto self = shared_from_this();
    error_code ec;
    for (tcp::socket* s : {&client, &server}) {
      if (reset && s->is_open()) s->set_option(asio::socket_base::linger(true, 0), ec);
      s->close(ec);
    }
    state->relays.remove(self);
  }
};

namespace {

void accept(const std::shared_ptr<RedisObserver::State>& state) {
  state->acceptor.async_accept([state](const error_code& ec, tcp::socket socket) {
    if (state->closed || ec == asio::error::operation_aborted) return;
    if (!ec) {
      error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto relay = std::make_shared<Relay>(state, std::move(socket), state->accepted++);
      state->relays.push_back(relay);
      relay->start();
    }
    accept(state);
  });
}

}  // namespace

RedisObserver::RedisObserver(LiveHub& hub, ProcId client, NodeKeys& keys, Endpoint node, LinkIds& ids)
    : state_(std::make_shared<State>(hub.io(), hub, client, keys, std::move(node), ids)) {
  const tcp::endpoint here(asio::ip::make_address("127.0.0.1"), 0);
  state_->acceptor.open(here.protocol());
  state_->acceptor.bind(here);
  state_->acceptor.listen();
  accept(state_);
}

RedisObserver::~RedisObserver() {
  state_->closed = true;
  error_code ec;
  state_->acceptor.close(ec);
  sever();
}

std::uint16_t RedisObserver::port() const { return state_->acceptor.local_endpoint().port(); }

void RedisObserver::sever() {
  const std::vector<std::shared_ptr<Relay>> relays(state_->relays.begin(), state_->relays.end());
  for (const auto& r : relays) r->close(true);
}

}  // namespace locksim::live::external
