// LiveClientEnv's calls to an etcd node: each coord::Request as one POST to
// etcd's gateway (live/etcd/gateway.hpp), through the client's proxy for
// that node.
//
// Connections. A call takes an idle connection of the node's, or opens one;
// once answered the connection is idle again (HTTP/1.1 keep-alive). A call
// that times out closes its connection: its effect is unknown, and an answer
// arriving later must not be taken for another call's. A WatchDelete opens a
// stream of its own: its first message (the watch created) answers the call;
// the key's DELETE event later is pushed to the lock (Lock::on_push) as the
// simulator's coord::Notify, and closes the stream, as waitDelete cancels
// its watch when it returns (clientv3/concurrency/key.go:26-31, v3.4.23). A
// stream that ends before that pushes a notification too: the waiter looks
// again, as clientv3's watch would resume from its revision.
//
// Order. A reply (or push) reaches the client only once the run has told
// what the node did up to the revision it was answered at
// (LiveHub::after_revision): the trace says who held the lock before any
// client acts on it, as the simulator's server states it before it answers.
//
// Time. A lease's TTL is whole seconds on the wire: the scenario's TTL
// divided by the time scale K (rounded up to a second; the run picks K so
// that it divides), and the reply's multiplied by K.
#include <utility>  // before Asio (Boost 1.74)

#include <boost/asio.hpp>
#include <map>
#include <vector>

#include "live/client_env.hpp"
#include "live/etcd/gateway.hpp"
#include "live/etcd/http.hpp"

namespace locksim::live {

namespace asio = boost::asio;
using error_code = boost::system::error_code;

struct LiveClientEnv::Etcd {
  struct Call {
    CallId id = 0;
    ProcId node = kNoProc;
    coord::Request req;   // as the scenario wrote it
    coord::Request wire;  // as it goes: its TTL in real seconds
    ReplySink* sink = nullptr;
    std::uint32_t tag = 0;
    std::uint64_t message = 0;  // the request's message id
    bool done = false;          // answered, failed or cancelled
    std::shared_ptr<etcd::HttpConnection> connection;
    std::unique_ptr<asio::steady_timer> timer;
  };
  using CallPtr = std::shared_ptr<Call>;
  struct Watch {
    ProcId node = kNoProc;
    std::string path;
    std::shared_ptr<etcd::HttpConnection> stream;
  };

  explicit Etcd(LiveClientEnv& e) : env(e) {}
  ~Etcd() {
    for (auto& [id, c] : calls)
      if (c->timer) c->timer->cancel();
    for (auto& [node, idle] : idle)
      for (auto& c : idle) c->close();
    for (auto& w : watches) w.stream->close();
    for (auto& [id, c] : calls)
      if (c->connection) c->connection->close();
  }

  // Whether a completion from `epoch` may still act: the client is neither
  // gone nor crashed since (a crash destroys this object). Checked before
  // anything of this object is touched.
  static bool current(const std::shared_ptr<bool>& alive, const LiveClientEnv* e, std::uint64_t epoch) {
    return *alive && e->epoch_ == epoch;
  }
  // Runs `f` in the client (held while it is paused) unless it crashed since `epoch`.
  template <typename F>
  void later(std::uint64_t epoch, F f) {
    if (!current(env.alive_, &env, epoch)) return;
    env.deliver(std::move(f));
  }

  // The call's outcome to its sink, once.
  void conclude(Call& c, std::optional<Payload> reply) {
    if (c.done) return;
    c.done = true;
    if (c.timer) c.timer->cancel();
    calls.erase(c.id);
    ReplySink* s = std::exchange(c.sink, nullptr);
    if (s) s->on_reply(c.tag, reply ? &*reply : nullptr);
  }

  // No answer (refused, reset, closed).
  void failed(const CallPtr& call, std::uint64_t epoch) {
    later(epoch, [e = &env, call] { e->etcd_->conclude(*call, std::nullopt); });
  }

  // An answer read: the node's side recorded now, the client's once the run has caught up.
  void answered(const CallPtr& call, std::uint64_t epoch, unsigned status, const std::string& body) {
    coord::Reply reply;
    std::int64_t revision = 0;
    try {
      etcd::Answer a = etcd::answer_of(call->wire, status, body);
      reply = std::move(a.reply);
      revision = a.revision;
    } catch (const Error& err) {
      reply.ok = false;
      reply.error = err.what();
    }
    reply.ttl = reply.ttl * env.hub_.clock().scale();
    Payload out(std::move(reply));
    const std::uint64_t id = env.hub_.observed_coord(env.self_, call->node, call->message, &call->req, out);
    env.hub_.after_revision(call->node, revision, [e = &env, alive = env.alive_, epoch, call, id, out = std::move(out)]() mutable {
      if (!current(alive, e, epoch)) return;
      e->etcd_->later(epoch, [e, call, id, out = std::move(out)]() mutable {
        if (call->done) return;
        e->note_delivered(call->node, id, out);
        e->etcd_->conclude(*call, std::move(out));
      });
    });
  }

  // A POST answered whole, on an idle connection of the node's or a new one.
  void post(const CallPtr& call, std::uint64_t epoch, const etcd::HttpCall& http, const Endpoint& at) {
    auto& pool = idle[call->node];
    while (!pool.empty() && !pool.back()->idle()) pool.pop_back();
    if (!pool.empty()) {
      call->connection = std::move(pool.back());
      pool.pop_back();
    } else {
      call->connection = etcd::HttpConnection::open(env.hub_.io(), at);
    }
    call->connection->post(http, [e = &env, alive = env.alive_, epoch, call](std::optional<etcd::HttpResponse> res) {
      if (!current(alive, e, epoch)) return;
      Etcd& self = *e->etcd_;
      if (!res) return self.failed(call, epoch);
      if (call->connection->idle()) self.idle[call->node].push_back(call->connection);
      self.answered(call, epoch, res->status, res->body);
    });
  }

  // A watch on a stream of its own: the first message answers the call.
  void watch(const CallPtr& call, std::uint64_t epoch, const etcd::HttpCall& http, const Endpoint& at) {
    // It replaces an earlier watch of the same path: that waiter looked again.
    std::erase_if(watches, [&](Watch& w) {
      if (w.node != call->node || w.path != call->req.path) return false;
      w.stream->close();
      return true;
    });
    call->connection = etcd::HttpConnection::open(env.hub_.io(), at);
    watches.push_back({call->node, call->req.path, call->connection});
    auto created = std::make_shared<bool>(false);
    call->connection->stream(
        http,
        [e = &env, alive = env.alive_, epoch, call, created](std::string_view line) {
          if (!current(alive, e, epoch)) return;
          Etcd& self = *e->etcd_;
          if (!*created) {
            *created = true;
            return self.answered(call, epoch, 200, std::string(line));
          }
          try {
            const etcd::WatchMessage m = etcd::watch_message_of(line);
            for (const etcd::WatchEvent& ev : m.events)
              if (ev.deleted && ev.key == call->req.path) return self.push(call, epoch, "deleted", ev.mod_revision);
            if (m.canceled) self.push(call, epoch, "watch cancelled", 0);
          } catch (const Error&) {
            self.push(call, epoch, "watch failed", 0);
          }
        },
        [e = &env, alive = env.alive_, epoch, call, created] {
          if (!current(alive, e, epoch)) return;
          if (!*created) return e->etcd_->failed(call, epoch);
          e->etcd_->push(call, epoch, "watch ended", 0);
        });
  }

  // The watched key's deletion (or the stream's end) as the simulator's notification; the stream closes.
  void push(const CallPtr& call, std::uint64_t epoch, const char* what, std::int64_t revision) {
    call->connection->close();
    std::erase_if(watches, [&](const Watch& w) { return w.stream == call->connection; });
    const Payload body(coord::Notify{call->req.path, what});
    const std::uint64_t id = env.hub_.observed_coord(env.self_, call->node, 0, nullptr, body);
    env.hub_.after_revision(call->node, revision, [e = &env, alive = env.alive_, epoch, node = call->node, id, body] {
      if (!current(alive, e, epoch)) return;
      e->etcd_->later(epoch, [e, node, id, body] {
        e->note_delivered(node, id, body);
        if (e->lock_) e->lock_->on_push(node, body);
      });
    });
  }

  // No answer within `timeout`: the call fails, and its connection goes (a
  // late answer would be taken for the next call's).
  void arm(const CallPtr& call, std::uint64_t epoch, Duration timeout) {
    if (timeout.is_zero()) return;
    call->timer = std::make_unique<asio::steady_timer>(env.hub_.io(), real(env.hub_.clock().real(timeout)));
    call->timer->async_wait([e = &env, alive = env.alive_, epoch, call](const error_code& ec) {
      if (ec || !current(alive, e, epoch)) return;
      e->etcd_->later(epoch, [e, call] {
        if (call->done) return;
        call->connection->close();
        e->etcd_->conclude(*call, std::nullopt);
      });
    });
  }

  LiveClientEnv& env;
  std::map<CallId, CallPtr> calls;
  std::map<ProcId, std::vector<std::shared_ptr<etcd::HttpConnection>>> idle;
  std::vector<Watch> watches;  // open streams, one per (node, path)
};

namespace {

// The scenario's TTL on the wire: whole seconds of real time, rounded up.
Duration wire_ttl(Duration scenario_ttl, const ScenarioClock& clock) {
  const std::int64_t ns = scenario_ttl.count_ns() / clock.scale();
  const std::int64_t second = Duration::s(1).count_ns();
  return Duration::s((ns + second - 1) / second);
}

}  // namespace

bool LiveClientEnv::cancel_etcd(CallId id) {
  auto it = etcd_->calls.find(id);
  if (it == etcd_->calls.end()) return false;
  Etcd::Call& c = *it->second;
  c.sink = nullptr;
  c.done = true;  // its answer still comes, and is observed
  if (c.timer) c.timer->cancel();
  etcd_->calls.erase(it);
  return true;
}

CallId LiveClientEnv::start_etcd(ProcId to, coord::Request&& req, Duration timeout, ReplySink& sink,
                                 std::uint32_t tag) {
  if (!etcd_) etcd_ = std::make_shared<Etcd>(*this);
  auto call = std::make_shared<Etcd::Call>();
  call->id = next_id_++;
  call->node = to;
  call->sink = &sink;
  call->tag = tag;
  call->message = note_sent(to, Payload(req));
  call->req = std::move(req);
  call->wire = call->req;
  if (call->wire.op == coord::Op::LeaseGrant) call->wire.ttl = wire_ttl(call->wire.ttl, hub_.clock());
  etcd_->calls[call->id] = call;
  hub_.coord_sent(self_, to, call->req);
  const etcd::HttpCall http = etcd::call_of(call->wire);
  const Endpoint at{"127.0.0.1", hub_.port_for(self_, to)};
  if (http.stream) etcd_->watch(call, epoch_, http, at);
  else etcd_->post(call, epoch_, http, at);
  etcd_->arm(call, epoch_, timeout);
  return call->id;
}

}  // namespace locksim::live
