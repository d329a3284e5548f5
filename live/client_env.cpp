#include "live/client_env.hpp"

#include <utility>  // before Asio (Boost 1.74)

#include <array>
#include <boost/asio.hpp>

namespace locksim::live {

namespace asio = boost::asio;
using asio::ip::tcp;
using error_code = boost::system::error_code;

struct LiveClientEnv::Pending {
  CallId id = 0;
  redis::Request req;      // a Redis call: how its reply reads
  ReplySink* sink = nullptr;
  std::uint32_t tag = 0;
  std::uint64_t message = 0;  // the request's message id
  bool done = false;       // answered, failed or cancelled: nothing more reaches the sink
  std::unique_ptr<asio::steady_timer> timer;
};

struct LiveClientEnv::Connection {
  Connection(asio::io_context& io, ProcId node, bool subscriber) : node(node), subscriber(subscriber), socket(io) {}
  ProcId node;
  bool subscriber;
  tcp::socket socket;
  resp::Decoder decoder;
  std::deque<std::shared_ptr<Pending>> fifo;  // the requests that await a reply, in the order sent
  std::string outbox;                         // written once connected, in order
  std::string writing_now;
  bool writing = false, connected = false, closed = false;
  std::array<char, 16384> buffer{};
};

LiveClientEnv::LiveClientEnv(LiveHub& hub, ProcId self, const ClockSpec& clock, Rng rng)
    : hub_(hub), self_(self), clocks_(clock), rng_(std::move(rng)) {}

LiveClientEnv::~LiveClientEnv() {
  *alive_ = false;
  if (!down_) crash();  // destroys the coroutines while the env they refer to is whole
}

Instant LiveClientEnv::wall_now() const { return clocks_.wall.read(hub_.clock().now()); }
Instant LiveClientEnv::mono_now() const { return clocks_.mono.read(hub_.clock().now()); }

void LiveClientEnv::note(Ev kind, TraceEvent&& fields) {
  const Instant now = hub_.clock().now();
  fields.at = now;
  fields.process = self_;
  fields.kind = kind;
  fields.wall = clocks_.wall.read(now);
  fields.mono = clocks_.mono.read(now);
  if (!hub_.trace().detailed()) fields.detail.clear();
  hub_.trace().record(std::move(fields));
}

std::uint64_t LiveClientEnv::note_sent(ProcId to, const Payload& body) {
  const std::uint64_t id = hub_.next_message();
  TraceEvent e{.peer = to, .value = static_cast<std::int64_t>(id), .content = fingerprint(body)};
  if (detailed()) e.detail = describe(body);
  note(Ev::Sent, std::move(e));
  return id;
}

void LiveClientEnv::note_delivered(ProcId from, std::uint64_t id, const Payload& body) {
  TraceEvent e{.peer = from, .value = static_cast<std::int64_t>(id), .content = fingerprint(body)};
  if (detailed()) e.detail = describe(body);
  note(Ev::Delivered, std::move(e));
}

// --- Completions: held while paused, voided by a crash ------------------------

void LiveClientEnv::deliver(std::function<void()> f) {
  if (down_) return;
  if (paused_) {
    held_.push_back(std::move(f));
    return;
  }
  f();
}

void LiveClientEnv::resume_soon(coroutine_handle<> h) {
  asio::post(hub_.io(), [this, alive = alive_, epoch = epoch_, h] {
    if (!*alive || epoch != epoch_) return;
    deliver([h] { h.resume(); });
  });
}

void LiveClientEnv::spawn(Task<void> task) {
  roots_.push_back(std::move(task));
  resume_soon(roots_.back().handle());
}

WakeId LiveClientEnv::wake_at(Instant mono_deadline, coroutine_handle<> h) {
  const WakeId id = next_id_++;
  const Instant now = hub_.clock().now();
  const Instant when = clocks_.mono.when_reads(mono_deadline, now);
  auto timer = std::make_shared<asio::steady_timer>(hub_.io(), hub_.clock().real_at(when));
  wakes_[id] = timer;
  timer->async_wait([this, alive = alive_, epoch = epoch_, id, h](const error_code& ec) {
    if (ec || !*alive || epoch != epoch_) return;
    deliver([this, id, h] {
      if (wakes_.erase(id) == 0) return;  // cancelled while held
      h.resume();
    });
  });
  return id;
}

void LiveClientEnv::cancel_wake(WakeId id) {
  auto it = wakes_.find(id);
  if (it == wakes_.end()) return;
  static_cast<asio::steady_timer*>(it->second.get())->cancel();
  wakes_.erase(it);
}

// --- Faults -------------------------------------------------------------------

void LiveClientEnv::pause(Duration d) {
  if (down_) return;
  const Instant until = hub_.clock().now() + d;
  if (paused_ && until <= paused_until_) return;
  if (!paused_) note(Ev::Paused, {.value = d.count_ns(), .detail = format_duration(d)});
  paused_ = true;
  paused_until_ = until;
  auto timer = std::make_shared<asio::steady_timer>(hub_.io(), hub_.clock().real_at(until));
  timer->async_wait([this, alive = alive_, epoch = epoch_, until, timer](const error_code&) {
    if (!*alive || epoch != epoch_ || !paused_ || paused_until_ != until) return;
    resume_paused();
  });
}

void LiveClientEnv::resume_paused() {
  paused_ = false;
  note(Ev::Resumed, {});
  // Everything that came due during the pause happens now, in its order; a
  // pause that begins among them holds the rest.
  while (!held_.empty() && !paused_ && !down_) {
    std::function<void()> f = std::move(held_.front());
    held_.pop_front();
    f();
  }
}

void LiveClientEnv::crash() {
  if (down_) return;
  if (*alive_) note(Ev::Crashed, {});
  down_ = true;
  ++epoch_;
  // Destroying a root destroys every frame it awaits; their awaiters cancel what they started.
  std::vector<Task<void>> roots = std::move(roots_);
  roots_.clear();
  roots.clear();
  for (auto& [key, c] : connections_) {
    c->closed = true;
    error_code ec;
    c->socket.close(ec);
  }
  connections_.clear();
  if (coord_) coord_->crash();
  for (auto& [id, p] : calls_)
    if (p->timer) p->timer->cancel();
  calls_.clear();
  etcd_.reset();  // its connections and watches close
  for (auto& [id, t] : wakes_) static_cast<asio::steady_timer*>(t.get())->cancel();
  wakes_.clear();
  held_.clear();
  paused_ = false;
}

void LiveClientEnv::clock_jump(Duration by) {
  clocks_.wall.jump(hub_.clock().now(), by);
  note(Ev::ClockJumped, {.value = by.count_ns(), .detail = (by >= Duration::zero() ? "+" : "") + format_duration(by)});
}

// A client's sleeps already armed keep their real deadlines (a drift fault on a
// client is rare; the simulator re-arms them).
void LiveClientEnv::set_drift_ppb(std::int64_t ppb) {
  clocks_.set_drift_ppb(hub_.clock().now(), ppb);
  note(Ev::ClockDrift, {.value = ppb});
}

// --- Calls --------------------------------------------------------------------

Payload& LiveClientEnv::stage(StageId& id) {
  if (free_staged_.empty()) {
    staged_.emplace_back();
    id = staged_.size();
  } else {
    id = free_staged_.back();
    free_staged_.pop_back();
  }
  return staged_[id - 1];
}

CallId LiveClientEnv::start_staged(ProcId to, StageId id, Duration timeout, ReplySink& sink, std::uint32_t tag) {
  Payload request = std::move(staged_[id - 1]);
  free_staged_.push_back(id);
  return start_call(to, std::move(request), timeout, sink, tag);
}

void LiveClientEnv::send_staged(ProcId to, StageId id) {
  Payload body = std::move(staged_[id - 1]);
  free_staged_.push_back(id);
  send(to, std::move(body));
}

void LiveClientEnv::unstage(StageId id) { free_staged_.push_back(id); }

CallId LiveClientEnv::start_call(ProcId to, Payload&& request, Duration timeout, ReplySink& sink, std::uint32_t tag) {
  if (auto* r = std::get_if<redis::Request>(&request)) return start_redis(to, std::move(*r), timeout, sink, tag);
  if (auto* s = std::get_if<storage::Request>(&request)) return start_storage(to, std::move(*s), timeout, sink, tag);
  if (auto* c = std::get_if<coord::Request>(&request)) {
    // ZooKeeper's calls take the run's transport (live/coord_transport.hpp);
    // without one, etcd's are this environment's own POSTs (live/etcd/client_calls.cpp).
    if (!coord_ && !etcd_) coord_ = hub_.coord_transport(self_);
    return coord_ ? start_coord(to, std::move(*c), timeout, sink, tag) : start_etcd(to, std::move(*c), timeout, sink, tag);
  }
  throw Error("a live client cannot send " + describe(request) + " (only Redis, ZooKeeper, etcd and the storage are live)");
}

void LiveClientEnv::send(ProcId to, Payload body) {
  auto* r = std::get_if<redis::Request>(&body);
  if (!r) throw Error("a live client can only send Redis requests unasked");
  const LiveHub::Kind kind = hub_.kind_of(to);
  if (down_ || (kind != LiveHub::Kind::Node && kind != LiveHub::Kind::Sentinel)) return;
  std::shared_ptr<Connection> c = connection(to, false);
  if (resp::replies_expected(*r) > 0) {  // a reply will come: it must take its place in the order
    auto p = std::make_shared<Pending>();
    p->req = *r;
    p->done = true;
    c->fifo.push_back(p);
    p->message = note_sent(to, body);
  } else {
    note_sent(to, body);
  }
  c->outbox += resp::encode(to_real(hub_.clock(), *r), hub_.names());
  flush(c);
}

void LiveClientEnv::finish_call(const std::shared_ptr<Pending>& p, std::optional<Payload> reply) {
  if (p->done) return;
  p->done = true;
  if (p->timer) p->timer->cancel();
  calls_.erase(p->id);
  ReplySink* sink = std::exchange(p->sink, nullptr);
  if (sink) sink->on_reply(p->tag, reply ? &*reply : nullptr);
}

void LiveClientEnv::cancel_call(CallId id) {
  if (etcd_ && cancel_etcd(id)) return;
  auto it = calls_.find(id);
  if (it == calls_.end()) return;
  std::shared_ptr<Pending> p = it->second;
  p->sink = nullptr;
  p->done = true;  // stays in its connection's order: the reply still comes, and is observed
  if (p->timer) p->timer->cancel();
  calls_.erase(it);
}

void LiveClientEnv::arm_timeout(const std::shared_ptr<Pending>& p, Duration timeout, Connection* c) {
  if (timeout.is_zero()) return;
  p->timer = std::make_unique<asio::steady_timer>(hub_.io(), real(hub_.clock().real(timeout)));
  std::weak_ptr<Connection> conn;
  if (c) conn = connections_.at({c->node, c->subscriber});
  p->timer->async_wait([this, alive = alive_, epoch = epoch_, p, conn](const error_code& ec) {
    if (ec || !*alive || epoch != epoch_) return;
    deliver([this, p, conn] {
      if (p->done) return;
      // Replies are matched to requests by their order on the connection, and this one's may
      // never come (the run's proxy dropped the request): the next request's reply would be
      // taken for it. Close, and the next call reconnects.
      if (auto c = conn.lock(); c && !c->closed) close(*c);
      finish_call(p, std::nullopt);
    });
  });
}

CallId LiveClientEnv::start_storage(ProcId to, storage::Request&& req, Duration timeout, ReplySink& sink,
                                    std::uint32_t tag) {
  auto p = std::make_shared<Pending>();
  p->id = next_id_++;
  p->sink = &sink;
  p->tag = tag;
  calls_[p->id] = p;
  p->message = note_sent(to, Payload(req));
  hub_.call_storage(self_, req, p->message,
                    [this, alive = alive_, epoch = epoch_, p, to](storage::Reply reply, std::uint64_t reply_id) {
    if (!*alive || epoch != epoch_) return;
    deliver_reply(p, to, reply_id, Payload(std::move(reply)));
  });
  arm_timeout(p, timeout, nullptr);
  return p->id;
}

// A reply that came: delivered (held while paused), unless its call ended meanwhile.
void LiveClientEnv::deliver_reply(const std::shared_ptr<Pending>& p, ProcId from, std::uint64_t reply_id, Payload body) {
  deliver([this, p, from, reply_id, body = std::move(body)]() mutable {
    if (p->done) return;
    note_delivered(from, reply_id, body);
    finish_call(p, std::move(body));
  });
}

// A coordination service's call: through the run's transport (ZooKeeper's
// protocol, ...). Its connections are the transport's; a reply is matched to
// its request by the protocol, so a timeout leaves the connection open and a
// late reply is dropped (a gap in the client's stream, as in the simulator).
CallId LiveClientEnv::start_coord(ProcId to, coord::Request&& req, Duration timeout, ReplySink& sink, std::uint32_t tag) {
  auto p = std::make_shared<Pending>();
  p->id = next_id_++;
  p->sink = &sink;
  p->tag = tag;
  calls_[p->id] = p;
  if (!coord_->on_notify) {
    coord_->on_notify = [this, alive = alive_](ProcId node, coord::Notify n) {
      if (!*alive || down_) return;
      const std::uint64_t id = hub_.pushed(self_, node, n);
      deliver([this, node, id, n = std::move(n)] {
        Payload body(n);
        note_delivered(node, id, body);
        if (lock_) lock_->on_push(node, body);
      });
    };
  }
  p->message = note_sent(to, Payload(req));
  coord_->call(to, req, [this, alive = alive_, epoch = epoch_, p, to, req](std::optional<coord::Reply> reply) {
    if (!*alive || epoch != epoch_) return;
    if (!reply) {
      deliver([this, p] { finish_call(p, std::nullopt); });  // its connection ended: no answer will come
      return;
    }
    const std::uint64_t reply_id = hub_.observed(self_, to, p->message, req, *reply);
    if (!p->done) deliver_reply(p, to, reply_id, Payload(std::move(*reply)));
  });
  arm_timeout(p, timeout, nullptr);
  return p->id;
}

CallId LiveClientEnv::start_redis(ProcId to, redis::Request&& req, Duration timeout, ReplySink& sink,
                                  std::uint32_t tag) {
  auto p = std::make_shared<Pending>();
  p->id = next_id_++;
  p->sink = &sink;
  p->tag = tag;
  const LiveHub::Kind kind = hub_.kind_of(to);
  if (kind != LiveHub::Kind::Node && kind != LiveHub::Kind::Sentinel) {
    // Nothing there: refused, later (never from inside start_call).
    calls_[p->id] = p;
    asio::post(hub_.io(), [this, alive = alive_, epoch = epoch_, p] {
      if (*alive && epoch == epoch_) deliver([this, p] { finish_call(p, std::nullopt); });
    });
    return p->id;
  }
  const bool subscriber = req.op == redis::Op::Subscribe;
  std::shared_ptr<Connection> c = connection(to, subscriber);
  std::string bytes = resp::encode(to_real(hub_.clock(), req), hub_.names());
  p->message = note_sent(to, Payload(req));
  p->req = std::move(req);
  calls_[p->id] = p;
  if (resp::replies_expected(p->req) > 0) c->fifo.push_back(p);
  else asio::post(hub_.io(), [this, alive = alive_, epoch = epoch_, p] {  // nothing to wait for
    if (*alive && epoch == epoch_) deliver([this, p] { finish_call(p, std::nullopt); });
  });
  c->outbox += bytes;
  arm_timeout(p, timeout, c.get());
  flush(c);
  return p->id;
}

// --- Connections ----------------------------------------------------------------

std::shared_ptr<LiveClientEnv::Connection> LiveClientEnv::connection(ProcId node, bool subscriber) {
  auto& slot = connections_[{node, subscriber}];
  if (slot && !slot->closed) return slot;
  slot = std::make_shared<Connection>(hub_.io(), node, subscriber);
  const tcp::endpoint to(asio::ip::make_address_v4("127.0.0.1"), hub_.port_for(self_, node));
  slot->socket.async_connect(to, [this, alive = alive_, c = slot](const error_code& ec) {
    if (!*alive || c->closed) return;
    if (ec) return close(*c);  // refused: every request on it fails as "no answer"
    c->connected = true;
    error_code ignored;
    c->socket.set_option(tcp::no_delay(true), ignored);
    flush(c);
    read(c);
  });
  return slot;
}

void LiveClientEnv::flush(const std::shared_ptr<Connection>& c) {
  if (c->closed || !c->connected || c->writing || c->outbox.empty()) return;
  c->writing = true;
  c->writing_now = std::exchange(c->outbox, {});
  asio::async_write(c->socket, asio::buffer(c->writing_now), [this, alive = alive_, c](const error_code& ec, std::size_t) {
    if (!*alive || c->closed) return;
    c->writing = false;
    if (ec) return close(*c);
    flush(c);
  });
}

void LiveClientEnv::read(const std::shared_ptr<Connection>& c) {
  c->socket.async_read_some(asio::buffer(c->buffer), [this, alive = alive_, c](const error_code& ec, std::size_t n) {
    if (!*alive || c->closed) return;
    if (ec) return close(*c);  // reset or closed by the other side
    try {
      c->decoder.feed(std::string_view(c->buffer.data(), n));
      while (!c->closed) {
        std::optional<resp::Value> v = c->decoder.next();
        if (!v) break;
        on_value(*c, std::move(*v));
      }
    } catch (const Error&) {
      return close(*c);
    }
    if (!c->closed) read(c);
  });
}

void LiveClientEnv::on_value(Connection& c, resp::Value&& v) {
  if (c.subscriber) {
    if (std::optional<redis::Reply> push = resp::push_of(v)) {
      deliver([this, node = c.node, reply = std::move(*push)] {
        if (lock_) lock_->on_push(node, Payload(reply));
      });
      return;
    }
  }
  if (c.fifo.empty()) return;  // a confirmation of a subscription nobody awaits
  std::shared_ptr<Pending> p = std::move(c.fifo.front());
  c.fifo.pop_front();
  redis::Reply reply;
  try {
    reply = to_scenario(hub_.clock(), p->req, resp::decode(p->req, v, hub_.names()));
  } catch (const Error& e) {
    reply = redis::Reply::error(e.what());
  }
  const std::uint64_t reply_id = hub_.observed(self_, c.node, p->message, p->req, reply);
  if (p->done) return;
  deliver([this, p, node = c.node, reply_id, reply = std::move(reply)]() mutable {
    if (p->done) return;
    Payload body(std::move(reply));
    note_delivered(node, reply_id, body);
    finish_call(p, std::move(body));
  });
}

void LiveClientEnv::close(Connection& c) {
  if (c.closed) return;
  c.closed = true;
  error_code ec;
  c.socket.close(ec);
  std::deque<std::shared_ptr<Pending>> pending = std::move(c.fifo);
  c.fifo.clear();
  for (auto& p : pending)
    if (!p->done) deliver([this, p] { finish_call(p, std::nullopt); });
}

// --- Scenario time <-> real time on the wire -----------------------------------

redis::Request to_real(const ScenarioClock& clock, redis::Request req) {
  if (!req.px.is_zero()) {
    const Duration px = clock.real(req.px);
    req.px = px < Duration::ms(1) ? Duration::ms(1) : px;
  }
  if (req.pxat) throw Error("PXAT is not supported live yet");
  return req;
}

// A remaining time (PTTL, or Redisson's answer when the lock is taken) back in scenario time.
redis::Reply to_scenario(const ScenarioClock& clock, const redis::Request& req, redis::Reply reply) {
  const bool ttl = req.op == redis::Op::Pttl || req.op == redis::Op::RedissonTryLock ||
                   (req.op == redis::Op::RedissonTryLockFenced && reply.kind == redis::Reply::Kind::Int);
  if (ttl && reply.kind == redis::Reply::Kind::Int && reply.integer > 0) reply.integer *= clock.scale();
  return reply;
}

}  // namespace locksim::live
