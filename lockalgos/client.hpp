// ClientEnv: everything a lock algorithm (and a client's job) may use, and
// nothing more — in the manner of LevelDB's Env. The client's own clocks, its
// random stream, sleeping, calls to nodes with a timeout, tasks of its own,
// notes for the trace. Nothing here reveals true time, other processes or
// faults: an algorithm written against it runs unchanged in the simulator
// (harness/sim_client.hpp) and against real servers over sockets.
//
// The awaitables are frame-less: each is an object in the awaiting coroutine's
// frame, driven by a few virtual primitives (start_call, wake_at, resume_soon
// and their cancels), so a call costs no coroutine frame of its own. A request
// leaves when its awaiter suspends (the sink's address is then stable), and an
// awaiter destroyed while pending (a crash destroys frames; a quorum resolves
// early) cancels what it started, so nothing dangles.
//
// g++ 12 (sim/task.hpp): the awaiters have constructors, so a co_await on
// their prvalue builds them in place in the frame; never brace-initialise one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include "sim/coroutine.hpp"
#include "sim/message.hpp"
#include "sim/rng.hpp"
#include "sim/task.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace locksim {

using CallId = std::uint64_t;  // 0: none
using WakeId = std::uint64_t;  // 0: none
using StageId = std::uint64_t;  // 0: none

template <typename Reply>
class CallAwaiter;

class ClientEnv {
 public:
  virtual ~ClientEnv() = default;

  // --- The client's own clocks: local readings, never true time. ------------
  virtual Instant wall_now() const = 0;
  virtual Instant mono_now() const = 0;

  // --- Awaitables -------------------------------------------------------------
  class SleepAwaiter;
  class YieldAwaiter;
  // Sleep `d` as measured by the client's monotonic clock.
  SleepAwaiter sleep(Duration d);
  // Let whatever is due at this instant run first (a fault triggered by the
  // event just noted, say), then continue.
  YieldAwaiter yield();
  // note(), then yield(). For an event with fields, write
  // `note(kind, {...}); co_await yield();` (sim/task.hpp on aggregates).
  YieldAwaiter mark(Ev kind);
  // A request to `to` and its reply, or nullopt: no reply within `timeout` on
  // the monotonic clock (Duration::zero(): wait as long as it takes), or the
  // destination refused it. The request leaves when the co_await suspends.
  CallAwaiter<Payload> call(ProcId to, Payload request, Duration timeout);
  // The same, for the reply of a Redis node, a coordination service, storage.
  CallAwaiter<redis::Reply> call_redis(ProcId to, redis::Request request, Duration timeout);
  CallAwaiter<coord::Reply> call_coord(ProcId to, coord::Request request, Duration timeout);
  CallAwaiter<storage::Reply> call_storage(ProcId to, storage::Request request, Duration timeout);

  // Fire and forget.
  virtual void send(ProcId to, Payload body) = 0;
  // Run a task of the client's own (a watchdog, a keepalive), from this
  // instant; it is destroyed if the client crashes.
  virtual void spawn(Task<void> task) = 0;

  // --- Randomness and the trace ---------------------------------------------
  virtual Rng& rng() = 0;
  // Record an event at this client, stamped with its clock readings.
  virtual void note(Ev kind, TraceEvent&& fields = {}) = 0;
  // Whether the trace will show an event's detail text: build costly details only then.
  virtual bool detailed() const = 0;
  // Names for the narrative: a node's name, and the node a name names (a
  // sentinel answers with a name).
  virtual const std::string& name_of(ProcId node) const = 0;
  virtual std::optional<ProcId> find(std::string_view name) const = 0;

  // --- The primitives the awaitables are built on ----------------------------
  // Send `request` to `to`; its outcome goes to sink.on_reply(tag, ...) later
  // (never from inside start_call): the reply, or nullopt after `timeout` on
  // the monotonic clock (zero: none) or a refusal. The sink must outlive the
  // call or cancel it; after cancel_call(id) it hears nothing of it.
  virtual CallId start_call(ProcId to, Payload&& request, Duration timeout, ReplySink& sink,
                            std::uint32_t tag) = 0;
  virtual void cancel_call(CallId id) = 0;
  // A request written in the place it will leave from, so that nothing is
  // moved when it does (the simulator's: the message's own slot).
  // stage() gives a body to write (holding some earlier body: assign or
  // emplace it whole) and sets `id`; the reference stays valid until the
  // body is started or unstaged. start_staged() sends it as start_call()
  // would; unstage() gives it back unsent.
  virtual Payload& stage(StageId& id) = 0;
  virtual CallId start_staged(ProcId to, StageId id, Duration timeout, ReplySink& sink, std::uint32_t tag) = 0;
  // A staged body sent as send() sends: fire and forget.
  virtual void send_staged(ProcId to, StageId id) = 0;
  virtual void unstage(StageId id) = 0;
  // Resume `h` once the monotonic clock reads `mono_deadline`; after
  // cancel_wake(id), `h` is not resumed by it.
  virtual WakeId wake_at(Instant mono_deadline, coroutine_handle<> h) = 0;
  virtual void cancel_wake(WakeId id) = 0;
  // Resume `h` at this instant, after whatever is already due. `h` must stay
  // alive until then (only a crash, which voids the resumption, destroys it).
  virtual void resume_soon(coroutine_handle<> h) = 0;
};

class ClientEnv::SleepAwaiter {
 public:
  SleepAwaiter(ClientEnv& env, Duration d) : env_(env), d_(d) {}
  SleepAwaiter(const SleepAwaiter&) = delete;
  SleepAwaiter& operator=(const SleepAwaiter&) = delete;
  ~SleepAwaiter() {
    if (id_ != 0) env_.cancel_wake(id_);  // destroyed asleep: a crash
  }
  bool await_ready() const noexcept { return false; }
  void await_suspend(coroutine_handle<> h) { id_ = env_.wake_at(env_.mono_now() + d_, h); }
  void await_resume() noexcept { id_ = 0; }

 private:
  ClientEnv& env_;
  Duration d_;
  WakeId id_ = 0;
};

class ClientEnv::YieldAwaiter {
 public:
  explicit YieldAwaiter(ClientEnv& env) : env_(env) {}
  bool await_ready() const noexcept { return false; }
  void await_suspend(coroutine_handle<> h) { env_.resume_soon(h); }
  void await_resume() const noexcept {}

 private:
  ClientEnv& env_;
};

// One call, awaited: the reply as `Reply` (Payload: as it came), or nullopt.
// A reply of another type than `Reply` counts as none.
template <typename Reply>
class CallAwaiter final : ReplySink {
 public:
  // The request is written straight into its staged body (ClientEnv::stage):
  // moved in once, or, with `fill(Body&)`, built there.
  CallAwaiter(ClientEnv& env, ProcId to, Payload&& request, Duration timeout)
      : env_(env), to_(to), timeout_(timeout) {
    env.stage(stage_) = std::move(request);
  }
  template <typename Body>
  CallAwaiter(ClientEnv& env, ProcId to, std::in_place_type_t<Body>, Body&& request, Duration timeout)
      : env_(env), to_(to), timeout_(timeout) {
    env.stage(stage_).template emplace<Body>(std::move(request));
  }
  template <typename Body, typename Fill>
  CallAwaiter(ClientEnv& env, ProcId to, std::in_place_type_t<Body>, Fill& fill, Duration timeout)
      : env_(env), to_(to), timeout_(timeout) {
    fill(emplace_default<Body>(env.stage(stage_)));
  }
  CallAwaiter(const CallAwaiter&) = delete;
  CallAwaiter& operator=(const CallAwaiter&) = delete;
  ~CallAwaiter() {
    if (id_ != 0) env_.cancel_call(id_);  // destroyed while waiting: a crash
    if (stage_ != 0) env_.unstage(stage_);  // destroyed without being awaited
  }

  bool await_ready() const noexcept { return false; }
  void await_suspend(coroutine_handle<> h) {
    waiter_ = h;
    id_ = env_.start_staged(to_, std::exchange(stage_, 0), timeout_, *this, 0);
  }
  std::optional<Reply> await_resume() { return std::move(reply_); }

 private:
  // Inside the reply's delivery (or the timeout's) event: the waiter resumes
  // now. The reply is taken from the message itself, as `Reply`.
  void on_reply(std::uint32_t, Payload* reply) override {
    id_ = 0;
    if (reply) {
      if constexpr (std::is_same_v<Reply, Payload>) {
        reply_.emplace(std::move(*reply));
      } else if (Reply* r = std::get_if<Reply>(reply)) {
        reply_.emplace(std::move(*r));
      }
    }
    waiter_.resume();  // last: the waiter may destroy this awaiter
  }

  ClientEnv& env_;
  ProcId to_;
  Duration timeout_;
  StageId stage_ = 0;  // the request, until it leaves
  std::optional<Reply> reply_;  // a reply of another type counts as none
  coroutine_handle<> waiter_;
  CallId id_ = 0;
};

inline ClientEnv::SleepAwaiter ClientEnv::sleep(Duration d) { return SleepAwaiter(*this, d); }
inline ClientEnv::YieldAwaiter ClientEnv::yield() { return YieldAwaiter(*this); }
inline ClientEnv::YieldAwaiter ClientEnv::mark(Ev kind) {
  note(kind);
  return YieldAwaiter(*this);
}
inline CallAwaiter<Payload> ClientEnv::call(ProcId to, Payload request, Duration timeout) {
  return CallAwaiter<Payload>(*this, to, std::move(request), timeout);
}
inline CallAwaiter<redis::Reply> ClientEnv::call_redis(ProcId to, redis::Request request, Duration timeout) {
  return CallAwaiter<redis::Reply>(*this, to, std::in_place_type<redis::Request>, std::move(request), timeout);
}
inline CallAwaiter<coord::Reply> ClientEnv::call_coord(ProcId to, coord::Request request, Duration timeout) {
  return CallAwaiter<coord::Reply>(*this, to, std::in_place_type<coord::Request>, std::move(request), timeout);
}
inline CallAwaiter<storage::Reply> ClientEnv::call_storage(ProcId to, storage::Request request, Duration timeout) {
  return CallAwaiter<storage::Reply>(*this, to, std::in_place_type<storage::Request>, std::move(request), timeout);
}

}  // namespace locksim
