// A process: a client, a lock-service node, the storage; and the awaiter of
// its calls.
//
// Processes run coroutines (Task<T>). Every resumption of a process's code
// goes through the event queue tagged with the process and its incarnation
// (epoch), so that:
//   * a paused process sees nothing: its due timers and arriving messages are
//     held and run, in their original order, when it resumes (stop-the-world GC);
//   * a crashed process's coroutines are destroyed (their RAII clean-up runs)
//     and anything still addressed to that incarnation is dropped.
#pragma once

#include <coroutine>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/clock.hpp"
#include "sim/digest.hpp"
#include "sim/event_queue.hpp"
#include "sim/inline_vector.hpp"
#include "sim/message.hpp"
#include "sim/rng.hpp"
#include "sim/task.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace locksim {

class World;

class Process {
 public:
  enum class State : std::uint8_t { Running, Paused, Down };

  Process(World& world, std::string name, ProcessRole role, const ClockSpec& clock);
  virtual ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  World& world() { return world_; }
  ProcId id() const { return id_; }
  const std::string& name() const { return name_; }
  ProcessRole role() const { return role_; }
  State state() const { return state_; }
  std::uint32_t epoch() const { return epoch_; }
  Rng& rng() { return rng_; }

  // This process's own clocks, read now. The only time a process may see.
  Instant wall_now() const;
  Instant mono_now() const;
  Clocks& clocks() { return clocks_; }

  // --- Awaitables for this process's coroutines -----------------------------

  // Sleep `d` as measured by this process's monotonic clock.
  auto sleep(Duration d) { return SleepAwaiter{*this, d}; }
  // Let everything else scheduled for this instant run first (a fault
  // triggered by the event just recorded, say), then continue.
  auto yield() { return YieldAwaiter{*this}; }
  // Send a request and wait for its reply, or `timeout` on the monotonic
  // clock (Duration::zero(): wait forever). nullopt on timeout. The request
  // leaves now; co_await the result at once.
  class CallAwaiter;
  CallAwaiter call(ProcId to, Payload request, Duration timeout);

  // The primitives a client's environment is built on (lockalgos/client.hpp):
  // a call whose outcome goes to `sink` (with `tag`) rather than resuming a
  // coroutine, sent now; its id, which cancel_call takes (after which the
  // sink hears nothing). A reply reaches the sink inside its delivery event.
  std::uint64_t start_call(ProcId to, Payload&& request, Duration timeout, ReplySink& sink, std::uint32_t tag);
  // The same for a request written in its message slot (World::new_message_slot,
  // ClientEnv::stage): nothing is moved when it leaves.
  std::uint64_t start_call_in_slot(ProcId to, std::uint64_t slot, Duration timeout, ReplySink& sink,
                                   std::uint32_t tag);
  void cancel_call(std::uint64_t id);
  // Resume `h` when the monotonic clock reads `mono_deadline`; the id
  // cancel_wake takes (after which `h` is not resumed by it).
  std::uint64_t wake_at(Instant mono_deadline, std::coroutine_handle<> h) { return start_timer(mono_deadline, h, 0); }
  void cancel_wake(std::uint64_t id) { cancel_timer(id); }

  // Fire and forget.
  void send(ProcId to, Payload&& body);
  // The same, of the body written in message slot `slot` (World::new_message_slot).
  void send_in_slot(ProcId to, std::uint64_t slot);
  // The reply is built in the message's slot, from a reply of any body type
  // (defined in world.hpp, beside the World whose slots it writes).
  template <typename Body>
  void reply(const Message& request, Body&& body);
  void reply(const Message& request, Payload&& body);
  // Close the connection `request` came on (a TCP reset): the sender's call
  // fails one network delay later, as a call to a crashed process does.
  void refuse(const Message& request);

  // Run a coroutine as one of this process's roots: it starts at the current
  // instant and is destroyed if the process crashes.
  void spawn(Task<void> task);
  // Resume `h` (a coroutine of this process) at the current instant, through
  // the event queue: a pause holds it, a crash drops it.
  void resume_soon(std::coroutine_handle<> h);

  // Record a trace event at this process, stamped with its clock readings.
  void note(Ev kind, TraceEvent&& fields = {});
  // note() of an event with only these fields, when the trace's hash is its
  // only reader (Trace::hash_only; for an event without an owner,
  // Trace::hash_only_unowned): hashed as note() would, never built.
  void note_hashed(Ev kind, ProcId peer, std::int64_t value, std::uint64_t content, std::string_view key = {});
  // Whether the trace will show an event's detail text: build costly details
  // only then (they are rendering, not hashed).
  bool detailed() const;
  // note(), then yield(): the recorded event may trigger a fault that must
  // take effect before this process does anything else. For an event with
  // fields, write `note(kind, {...}); co_await yield();` (see task.hpp on
  // aggregate temporaries in co_await expressions).
  auto mark(Ev kind) {
    note(kind);
    return yield();
  }

  // --- Called by the world ----------------------------------------------------
  // The destination of call `id` refused it (it is down): the call fails now.
  void refuse_call(std::uint64_t id);
  // A message reached this (running) process: a reply to one of its calls, or not.
  void deliver(Message& m) {
    if (m.reply_to != 0) {
      finish_call(m.reply_to, &m.body);
      return;
    }
    on_message(m);
  }
  void fire_timer(std::uint64_t generation);
  void pause();
  void resume();
  void crash();
  void restart();
  void reschedule_timers();     // after a drift change: timers move in true time
  // Destroy every coroutine of this process (a crash, or the end of the run).
  void destroy_coroutines();
  std::vector<Event>& held_events() { return held_; }
  // What is outstanding: calls awaiting their outcome, timers set (tests).
  std::size_t calls_in_flight() const { return calls_.size(); }
  std::size_t timers_set() const { return timers_.size(); }
  // The first error thrown out of one of this process's coroutines, if any.
  std::exception_ptr failed_root() const;
  // What this process's model holds that decides what it does next (a
  // server's keys and sessions, the storage's counter), for explore
  // --exhaustive's fingerprint of the world. The kernel's part (state,
  // clocks, timers, held events) is World::digest's. Default: nothing.
  virtual void digest(Digest&) const {}

 protected:
  // A message that is not a reply to one of our calls.
  virtual void on_message(Message& m);
  // Lose volatile state (a crash). The coroutines are already gone.
  virtual void on_crash() {}
  // Start again after a crash.
  virtual void on_restart() {}
  // The wall clock just jumped.
  virtual void on_clock_jump() {}

 private:
  struct SleepAwaiter {
    Process& p;
    Duration d;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { p.start_timer(p.mono_now() + d, h, 0); }
    void await_resume() const noexcept {}
  };
  struct YieldAwaiter {
    Process& p;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h);
    void await_resume() const noexcept {}
  };
  struct PendingCall {
    std::uint64_t id;                 // the request's message id
    std::coroutine_handle<> waiter;   // null once it has been woken
    ReplySink* sink = nullptr;        // set: the outcome goes here instead (start_call)
    std::uint32_t tag = 0;            // the sink's
    std::uint64_t timer_id = 0;       // its timeout, 0: none
  };
  PendingCall* find_call(std::uint64_t id);
  void forget_call(PendingCall& c);  // cancel_call() of a call found: its timer, its place
  // The call ended (reply, timeout or refusal): wake its waiter.
  void finish_call(std::uint64_t id, Payload* result);  // result: moved from; null: timed out or refused
  std::optional<Payload> take_call_result(std::uint64_t id);
  struct Timer {
    std::uint64_t id;
    Instant deadline;  // on the monotonic clock
    std::coroutine_handle<> waiter;
    std::uint64_t call_id;  // nonzero: a call's timeout rather than a sleep
  };
  std::uint64_t start_timer(Instant mono_deadline, std::coroutine_handle<> h, std::uint64_t call_id);
  void cancel_timer(std::uint64_t id);
  const Timer* earliest_timer() const;
  // Make sure an event is queued no later than when `t` is due.
  void arm_timer(const Timer& t);
  // Forget the queued event and queue one for the earliest timer (a drift change, a crash).
  void rearm_timers();

  World& world_;
  // Constant after construction.
  std::string name_;
  ProcessRole role_;
  ProcId id_;
  // Mutable state.
  Clocks clocks_;
  Rng rng_;
  State state_ = State::Running;
  std::uint32_t epoch_ = 0;
  Instant pause_until_;
  std::vector<Task<void>> roots_;
  std::size_t sweep_at_ = 16;  // sweep finished roots when there are this many
  std::vector<Event> held_;  // events that came due while paused
  // In flight: a handful per process, kept in it (inline_vector.hpp); the
  // last takes the place of one that ends.
  InlineVector<PendingCall, 6> calls_;
  // A reply for a coroutine waiter (CallAwaiter), from its delivery to the
  // waiter's await_resume, which follows at once: at most one at a time.
  std::optional<std::pair<std::uint64_t, Payload>> waiter_reply_;
  InlineVector<Timer, 6> timers_;  // in the order they were set (the digest's)
  std::uint64_t next_timer_ = 1;
  std::optional<Instant> armed_at_;       // true time of the queued timer event, if one is
  Instant armed_deadline_;                // the monotonic deadline it was queued for (with armed_at_)
  std::uint64_t timer_generation_ = 0;    // the queued timer event's; older ones are stale
  friend class World;
  friend class Alarm;
};

// What Process::call returns: trivially copyable (see task.hpp on g++ 12 and
// awaiters with strings); the call's state lives in the process.
class Process::CallAwaiter {
 public:
  CallAwaiter(Process& p, std::uint64_t id) : p_(&p), id_(id) {}
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) noexcept {
    if (PendingCall* c = p_->find_call(id_)) c->waiter = h;
  }
  std::optional<Payload> await_resume() { return p_->take_call_result(id_); }

 private:
  Process* p_;
  std::uint64_t id_;
};

}  // namespace locksim
