// LiveClientEnv: the client interface (lockalgos/client.hpp) over real
// sockets and real time, so the algorithm files the simulator runs take real
// locks on real redis-server processes. Everything runs on one
// boost::asio::io_context, on one thread: a coroutine is resumed by an Asio
// completion (a reply read, a timer fired, a post).
//
// Time. A live run plays its scenario K times faster (--time-scale K): every
// duration the client hands to the outside (a call's timeout, a sleep, the PX
// of a SET) is divided by K on its way out, and every reading of the real
// clock is multiplied by K on its way in. So a client still reads "30 s" and
// sends "30 s"; the server is asked for 3 s and 3 s of real time pass. Scenario
// time is ScenarioClock::now(): the real monotonic time since the run began,
// times K. The client's own clocks (offset, drift, jumps) run on that.
//
// Calls. One connection per node, made lazily through the node's proxy; the
// replies are matched to requests in order (RESP has no ids: live/README.md).
// An etcd node's calls go over HTTP/1.1 to its gateway instead, one
// connection per call in flight (live/etcd/client_calls.cpp).
// A call that times out closes its connection: every request still pending on
// it fails as "no answer" (its effect is unknown, like a lost message), and the
// next call opens a new one.
//
// Pause. A paused client's completions (replies, timers, resumptions) are held
// and run in order when it resumes, as the simulator holds a paused process's
// events; its clocks run on.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/common.hpp"
#include "live/coord_transport.hpp"
#include "live/resp.hpp"
#include "lockalgos/client.hpp"
#include "lockalgos/lock.hpp"
#include "sim/clock.hpp"
#include "sim/coroutine.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live {

// Scenario time in a live run: real monotonic time since the start, times K.
class ScenarioClock {
 public:
  ScenarioClock(RealClock::time_point start, std::int64_t scale) : start_(start), scale_(scale) {}
  Instant now() const { return at(RealClock::now()); }
  Instant at(RealClock::time_point t) const {
    return Instant::zero() + Duration::ns(std::chrono::duration_cast<std::chrono::nanoseconds>(t - start_).count() * scale_);
  }
  // The real instant at which scenario time reads `t`.
  RealClock::time_point real_at(Instant t) const {
    return start_ + std::chrono::nanoseconds((t - Instant::zero()).count_ns() / scale_);
  }
  // A scenario duration as real time (rounded down; never negative).
  Duration real(Duration d) const { return Duration::ns(std::max<std::int64_t>(0, d.count_ns() / scale_)); }
  std::int64_t scale() const { return scale_; }
  RealClock::time_point start() const { return start_; }

 private:
  RealClock::time_point start_;
  std::int64_t scale_;
};

// A request as it goes on the wire at the clock's scale: its PX in real
// time, and at least 1 ms (Redis refuses PX 0: "invalid expire time").
redis::Request to_real(const ScenarioClock& clock, redis::Request req);
// A remaining time in a reply (PTTL, or Redisson's answer when the lock is
// taken) back in scenario time.
redis::Reply to_scenario(const ScenarioClock& clock, const redis::Request& req, redis::Reply reply);

// What a live client needs from the run around it: where things are, the
// trace, and the pieces that stay in-process (the storage, node-side events).
class LiveHub {
 public:
  enum class Kind : std::uint8_t { Node, Sentinel, Storage, Other };
  virtual ~LiveHub() = default;
  virtual boost::asio::io_context& io() = 0;
  virtual const ScenarioClock& clock() const = 0;
  virtual Trace& trace() = 0;
  virtual Kind kind_of(ProcId p) const = 0;
  // The port `client` connects to for node (or sentinel) `p`: its proxy's.
  virtual std::uint16_t port_for(ProcId client, ProcId p) const = 0;
  // Node names <-> real addresses, for a sentinel's answer.
  virtual const resp::Names& names() const = 0;
  // The storage's answer to `req`, delivered later through `done` (after the
  // link's delays), or never (a dropped or held message; the caller times out).
  // `request_id`: the request's message id (its Sent event's value); `done`
  // gets the reply's.
  virtual void call_storage(ProcId client, const storage::Request& req, std::uint64_t request_id,
                            std::function<void(storage::Reply, std::uint64_t reply_id)> done) = 0;
  // A node's reply to request `request_id` seen by `client`: the run records
  // what the node did (the request delivered, the command, the reply sent)
  // and returns the reply's message id.
  virtual std::uint64_t observed(ProcId client, ProcId node, std::uint64_t request_id, const redis::Request& req,
                                 const redis::Reply& reply) = 0;
  // A new message id, as the simulator's network numbers messages (the trace's Sent and Delivered).
  virtual std::uint64_t next_message() = 0;

  // --- Coordination services (ZooKeeper, ...) ---------------------------------
  // The transport this client's coord::Requests take (live/coord_transport.hpp);
  // nullptr: the run has none, and such a call is refused.
  virtual std::unique_ptr<CoordTransport> coord_transport(ProcId client) {
    (void)client;
    return nullptr;
  }
  // A coordination node's reply to request `request_id`, as `client` got it:
  // the run records the node's side of the exchange; returns the reply's id.
  virtual std::uint64_t observed(ProcId client, ProcId node, std::uint64_t request_id, const coord::Request& req,
                                 const coord::Reply& reply) {
    (void)client, (void)node, (void)request_id, (void)req, (void)reply;
    return next_message();
  }
  // A notification the node pushed to `client`: the run records it sent; returns its id.
  virtual std::uint64_t pushed(ProcId client, ProcId node, const coord::Notify& push) {
    (void)client, (void)node, (void)push;
    return next_message();
  }
  // A coordination service (etcd): `client` sends `req` to `node` (the run
  // learns what it will observe: a lock's prefix, a delete on its way).
  virtual void coord_sent(ProcId client, ProcId node, const coord::Request& req) = 0;
  // Node `node`'s reply (or push, for a notification: `req` null) as
  // `client` got it: the run records what the node did and returns the
  // message's id.
  virtual std::uint64_t observed_coord(ProcId client, ProcId node, std::uint64_t request_id, const coord::Request* req,
                                       const Payload& reply) = 0;
  // Runs `f` once the run has told what node `node` did up to store revision
  // `revision`: a reply answered at that revision reaches its client after
  // the trace says who held the lock then.
  virtual void after_revision(ProcId node, std::int64_t revision, std::function<void()> f) = 0;
};

class LiveClientEnv final : public ClientEnv {
 public:
  LiveClientEnv(LiveHub& hub, ProcId self, const ClockSpec& clock, Rng rng);
  ~LiveClientEnv() override;
  LiveClientEnv(const LiveClientEnv&) = delete;
  LiveClientEnv& operator=(const LiveClientEnv&) = delete;

  Instant wall_now() const override;
  Instant mono_now() const override;
  void send(ProcId to, Payload body) override;
  void spawn(Task<void> task) override;
  Rng& rng() override { return rng_; }
  void note(Ev kind, TraceEvent&& fields) override;
  bool detailed() const override { return hub_.trace().detailed(); }
  const std::string& name_of(ProcId node) const override { return hub_.trace().name(node); }
  std::optional<ProcId> find(std::string_view name) const override { return hub_.trace().find(name); }

  CallId start_call(ProcId to, Payload&& request, Duration timeout, ReplySink& sink, std::uint32_t tag) override;
  // Staged requests wait here until they leave through start_call.
  Payload& stage(StageId& id) override;
  CallId start_staged(ProcId to, StageId id, Duration timeout, ReplySink& sink, std::uint32_t tag) override;
  void send_staged(ProcId to, StageId id) override;
  void unstage(StageId id) override;
  void cancel_call(CallId id) override;
  WakeId wake_at(Instant mono_deadline, coroutine_handle<> h) override;
  void cancel_wake(WakeId id) override;
  void resume_soon(coroutine_handle<> h) override;

  // --- What the run does to this client (its faults) ------------------------
  // The lock whose pushes (pub/sub messages) this client receives; may be null.
  void set_lock(Lock* lock) { lock_ = lock; }
  // Stop-the-world for `d` (scenario time): completions are held until then.
  void pause(Duration d);
  // Destroys every coroutine and connection; nothing of them runs again.
  void crash();
  bool down() const { return down_; }
  void clock_jump(Duration by);
  void set_drift_ppb(std::int64_t ppb);
  ProcId id() const { return self_; }

  struct Connection;
  struct Pending;
  struct Etcd;

 private:
  // Runs `f` now, or when a pause ends; never after a crash.
  void deliver(std::function<void()> f);
  void finish_call(const std::shared_ptr<Pending>& p, std::optional<Payload> reply);
  void deliver_reply(const std::shared_ptr<Pending>& p, ProcId from, std::uint64_t reply_id, Payload body);
  CallId start_redis(ProcId to, redis::Request&& req, Duration timeout, ReplySink& sink, std::uint32_t tag);
  CallId start_storage(ProcId to, storage::Request&& req, Duration timeout, ReplySink& sink, std::uint32_t tag);
  CallId start_coord(ProcId to, coord::Request&& req, Duration timeout, ReplySink& sink, std::uint32_t tag);
  std::shared_ptr<Connection> connection(ProcId node, bool subscriber);
  void flush(const std::shared_ptr<Connection>& c);
  void read(const std::shared_ptr<Connection>& c);
  void close(Connection& c);
  void on_value(Connection& c, resp::Value&& v);
  void arm_timeout(const std::shared_ptr<Pending>& p, Duration timeout, Connection* c);
  std::uint64_t note_sent(ProcId to, const Payload& body);
  void note_delivered(ProcId from, std::uint64_t id, const Payload& body);
  void resume_paused();
  CallId start_etcd(ProcId to, coord::Request&& req, Duration timeout, ReplySink& sink, std::uint32_t tag);
  bool cancel_etcd(CallId id);  // whether it was one of etcd's

  LiveHub& hub_;
  ProcId self_;
  Clocks clocks_;
  Rng rng_;
  Lock* lock_ = nullptr;
  std::uint64_t epoch_ = 0;  // a crash voids everything queued before it
  bool down_ = false;
  Instant paused_until_;     // scenario time; a completion before it waits
  bool paused_ = false;
  std::deque<std::function<void()>> held_;
  std::vector<Task<void>> roots_;
  std::deque<Payload> staged_;  // by StageId - 1; a deque: a body stays put while others are staged
  std::vector<StageId> free_staged_;
  std::map<CallId, std::shared_ptr<Pending>> calls_;
  std::map<WakeId, std::shared_ptr<void>> wakes_;  // each a timer
  std::map<std::pair<ProcId, bool>, std::shared_ptr<Connection>> connections_;
  std::unique_ptr<CoordTransport> coord_;  // made at the first coord call
  std::shared_ptr<Etcd> etcd_;  // etcd's calls and watches, once there is one
  std::uint64_t next_id_ = 1;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // handlers check it: the env may be gone
};

}  // namespace locksim::live
