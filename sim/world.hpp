// The simulation world: true time, the event queue, the processes, the
// network, the random streams and the trace. It owns everything and is passed
// explicitly; nothing in locksim is global.
//
// Processes run coroutines (Task<T>). Every resumption of a process's code
// goes through the event queue tagged with the process and its incarnation
// (epoch), so that:
//   * a paused process sees nothing: its due timers and arriving messages are
//     held and run, in their original order, when it resumes (stop-the-world GC);
//   * a crashed process's coroutines are destroyed (their RAII clean-up runs)
//     and anything still addressed to that incarnation is dropped.
#pragma once

#include <array>
#include <bit>
#include <coroutine>
#include <deque>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/clock.hpp"
#include "sim/digest.hpp"
#include "sim/inline_vector.hpp"
#include "sim/message.hpp"
#include "sim/rng.hpp"
#include "sim/task.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace locksim {

class World;

// ---------------------------------------------------------------------------
// The event queue, ordered by (time, sequence), so events at equal times run
// in the order they were scheduled.

// 32 bytes, so the queue moves little.
struct Event {
  // ArmedTimer: a Timer the queue keeps track of, so that it can be moved
  // earlier in place (EventQueue::rekey_armed: World::set_compact_timers).
  enum class Kind : std::uint8_t { Resume, Timer, Deliver, Action, Refuse, ArmedTimer };
  Instant at;
  std::uint64_t seq = 0;
  // Resume: the coroutine's address; Timer: the timer generation; Deliver: message slot;
  // Action: action slot; Refuse: call id.
  std::uint64_t arg = 0;
  ProcId pid = kNoProc;      // kNoProc: not addressed to a process
  std::uint32_t epoch : 24 = 0;  // the incarnation of `pid` it is addressed to (modulo 2^24)
  Kind kind : 8 = Kind::Action;

  void set_handle(std::coroutine_handle<> h) { arg = reinterpret_cast<std::uintptr_t>(h.address()); }
  std::coroutine_handle<> handle() const {
    return std::coroutine_handle<>::from_address(reinterpret_cast<void*>(static_cast<std::uintptr_t>(arg)));
  }
};
static_assert(sizeof(Event) == 32);

// A few events (explore's runs: a handful of processes) sit in an array in
// no order, the earliest found by a scan when one leaves: at that size a scan
// costs less than any structure, and a push costs one comparison. Past
// kCalendarAbove events (the benchmark's hundred clients) they move into a
// calendar queue, and back into the array at kArrayAt.
//
// The calendar queue (R. Brown, "Calendar queues: a fast O(1) priority queue
// implementation for the simulation event set problem", CACM 31(10), 1988)
// cuts time into days of 2^kDayBits ns and keeps a year of kDays of them in
// a wheel. The front holds the events of the current day, in (time,
// sequence) order; each later day of the year is a list of nodes in no
// order, sorted into the front when its day comes; an event a year or more
// ahead waits in a binary heap (`later`) until its day is within the year.
// A push is an append to a list (or an insertion into the few events of
// today), a pop takes the front's next event, and the next non-empty day
// is found in a bitmap a word at a time. Each event is written once and
// read once where the radix heap before it moved each event down its
// digits, bucket to bucket (issue 15; bench/README.md, "A calendar queue",
// has the measurements).
//
// A timer moved earlier (rekey_armed) is not searched for: the queue knows
// each process's one armed timer by its sequence number, and an ArmedTimer
// event that is not it is dead, left where it lies and passed over when
// its day comes. Only disarm() searches, and it is rare (a clock's drift
// changing, a process crashing).
//
// Keys are unique, so the events leave in (time, sequence) order whichever
// form holds them.
class EventQueue {
 public:
  void push(Event e);
  // push() of the event with these fields, written in its place in the
  // queue: not built aside and copied in. A copy of an event just written
  // field by field loads in 16-byte words what narrower stores wrote, and
  // waits for them to reach the cache (a store-forwarding stall: issue 15's
  // profile found it on every message sent).
  void emplace(Instant at, std::uint64_t seq, std::uint64_t arg, ProcId pid, std::uint32_t epoch, Event::Kind kind);
  Event pop();
  // Whether process `pid` has an ArmedTimer event queued.
  bool armed(ProcId pid) const { return pid < armed_.size() && armed_[pid] != 0; }
  // Process `pid`'s queued ArmedTimer event becomes `e` (for `pid`, no later
  // than it was, with a fresh sequence number): as if `e` had been pushed
  // and the old one were gone. REQUIRES: armed(e.pid).
  void rekey_armed(const Event& e);
  // Process `pid`'s ArmedTimer event, if queued, becomes a plain Timer.
  void disarm(ProcId pid);
  // The earliest event. REQUIRES: !empty(). (Not const: the calendar may
  // first bring the next day into the front.)
  const Event& top() { return calendar_ ? calendar_top() : events_[first_]; }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  std::uint64_t next_seq() { return seq_++; }
  void reserve(std::size_t n) { events_.reserve(n); }
  // Every queued event, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    if (!calendar_) {
      for (const Event& e : events_) f(e);
      return;
    }
    each_stored([&](const Event& e) {
      if (live(e)) f(e);
    });
  }

  static constexpr std::size_t kCalendarAbove = 24;
  static constexpr std::size_t kArrayAt = 12;
  // A year of 8,192 days. A day is 2^day_bits() ns, about a quarter of the
  // time between events (Brown's rule of thumb is a few events a day; a
  // quarter measured best): 2^14 ns at first, and every kRetuneEvery
  // events the calendar measures the time they took, and is rebuilt with
  // another width when the rule says 2 more or fewer bits. The benchmark's
  // events come 50 us apart with 100 clients (2^14 ns days) and 5 us apart
  // with 1000 (2^11). Widths measured: bench/README.md, "A calendar queue".
  static constexpr std::uint32_t kDays = 8192;
  static constexpr std::uint32_t kFirstDayBits = 14;
  static constexpr std::uint64_t kRetuneEvery = 4096;
  std::uint32_t day_bits() const { return day_bits_; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};  // the end of a day's list
  static bool before(const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.seq < b.seq;
  }
  // The order of a heap whose front is the earliest (std::push_heap keeps the greatest first).
  // (A lambda, not a function: std::push_heap takes a function by pointer and calls it so.)
  static constexpr auto after = [](const Event& a, const Event& b) { return before(b, a); };
  // The time as an unsigned key of the same order, and its day.
  static std::uint64_t key(Instant at) { return static_cast<std::uint64_t>(at.ns()) ^ (std::uint64_t{1} << 63); }
  std::uint64_t day(Instant at) const { return key(at) >> day_bits_; }
  // Whether `e` is still queued: not an armed timer since moved (rekey_armed).
  bool live(const Event& e) const {
    return e.kind != Event::Kind::ArmedTimer || armed_[e.pid] == e.seq + 1;
  }
  // A day's events: a singly linked list of nodes (40 bytes), recycled.
  struct Node {
    Event e;
    std::uint32_t next;
  };
  struct Calendar {
    std::uint64_t today = 0;   // the front's day
    std::vector<Event> front;  // today's events, in (time, sequence) order, from `head` on
    std::size_t head = 0;
    std::array<std::uint32_t, kDays> first;  // each day of the year's list (day % kDays), kNone: empty
    std::array<std::uint64_t, kDays / 64> nonempty{};  // a bit per day of the year
    std::vector<Node> nodes;
    std::uint32_t free = kNone;  // the list of unused nodes
    std::vector<Event> later;    // a year or more ahead: a binary heap, earliest first
  };
  const Event& calendar_top();
  // Where an event of day `d` goes, its fields to be written by the caller,
  // then settle(d) to put it in order.
  Event& calendar_slot(std::uint64_t d);
  void settle(std::uint64_t d);
  void place(const Event& e);  // calendar_slot + copy + settle
  void next_day();             // the front ran out: the next day with events comes into it
  void drain(std::uint32_t slot);  // a day's list into the front
  template <typename F>
  void each_stored(F&& f) const;  // every event the calendar holds, dead ones too
  Event* find_armed(ProcId pid);  // pid's live ArmedTimer event
  void to_calendar(std::uint64_t today);  // the array's events into the calendar, `today` no later than any
  void to_array();
  void find_first();
  void retune(Instant now);  // kRetuneEvery events popped: the day's width again

  std::size_t size_ = 0;       // live events
  bool calendar_ = false;      // the events are in *c_, not in the array
  std::vector<Event> events_;  // the array
  std::size_t first_ = 0;      // where the array's earliest event is
  std::unique_ptr<Calendar> c_;
  std::vector<std::uint64_t> armed_;  // by process: 1 + the sequence number of its ArmedTimer event, 0: none
  std::uint32_t day_bits_ = kFirstDayBits;
  std::uint64_t until_retune_ = kRetuneEvery;  // events the calendar pops before retune()
  Instant window_start_;                       // when those began
  std::uint64_t seq_ = 0;
};

template <typename F>
void EventQueue::each_stored(F&& f) const {
  const Calendar& c = *c_;
  for (std::size_t i = c.head; i < c.front.size(); ++i) f(c.front[i]);
  for (std::uint32_t w = 0; w < c.nonempty.size(); ++w)
    for (std::uint64_t bits = c.nonempty[w]; bits != 0; bits &= bits - 1)
      for (std::uint32_t n = c.first[w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits))]; n != kNone;
           n = c.nodes[n].next)
        f(c.nodes[n].e);
  for (const Event& e : c.later) f(e);
}

// ---------------------------------------------------------------------------
// A process: a client, a lock-service node, the storage.

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
  // The reply is built in the message's slot, from a reply of any body type.
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
  void deliver(Message& m);      // a message reached this (running) process
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

// One coroutine of a process waits; others of the same process fire it. A
// fire with nobody waiting is remembered until the next wait.
class Wakeup {
 public:
  explicit Wakeup(Process& p) : p_(p) {}
  auto wait() {
    struct Awaiter {
      Wakeup& w;
      bool await_ready() const noexcept { return w.fired_; }
      void await_suspend(std::coroutine_handle<> h) noexcept { w.waiter_ = h; }
      void await_resume() noexcept { w.fired_ = false; }
    };
    return Awaiter{*this};
  }
  void fire() {
    fired_ = true;
    if (waiter_) p_.resume_soon(std::exchange(waiter_, {}));
  }

 private:
  Process& p_;
  std::coroutine_handle<> waiter_;
  bool fired_ = false;
};

// A sleep on the process's monotonic clock that another coroutine of the same
// process can cut short (ring): the sleeper then finds the clock short of its
// deadline and decides again.
class Alarm {
 public:
  explicit Alarm(Process& p) : p_(p) {}
  auto sleep_until(Instant mono_deadline) {
    struct Awaiter {
      Alarm& a;
      Instant deadline;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) {
        a.sleeper_ = h;
        a.timer_ = a.p_.start_timer(deadline, h, 0);
      }
      void await_resume() noexcept {
        a.sleeper_ = {};
        a.timer_ = 0;
      }
    };
    return Awaiter{*this, mono_deadline};
  }
  bool sleeping() const { return static_cast<bool>(sleeper_); }
  void ring() {
    if (!sleeper_) return;
    p_.cancel_timer(std::exchange(timer_, 0));
    p_.resume_soon(std::exchange(sleeper_, {}));
  }
  // The sleeper is gone (its process crashed): forget it.
  void reset() {
    sleeper_ = {};
    timer_ = 0;
  }

 private:
  Process& p_;
  std::coroutine_handle<> sleeper_;
  std::uint64_t timer_ = 0;
};

// ---------------------------------------------------------------------------
// The network: point-to-point links with one-way delays, loss, partitions, and
// rules that hold back or drop the messages of particular links.

struct LinkRule {
  enum class Kind : std::uint8_t { Hold, Drop, ExtraDelay };
  Kind kind = Kind::Hold;
  ProcId from = kNoProc;  // kNoProc: any
  ProcId to = kNoProc;    // kNoProc: any
  Instant from_time;
  Instant until = Instant::never();  // messages sent before this are affected
  std::int64_t remaining = -1;       // -1: any number of messages
  double probability = 1.0;          // Drop
  Duration extra;                    // ExtraDelay
  std::string label;                 // the fault it comes from, for the trace
  bool matches(ProcId f, ProcId t, Instant now) const {
    return (from == kNoProc || from == f) && (to == kNoProc || to == t) && now >= from_time &&
           now < until && remaining != 0;
  }
};

struct Partition {
  std::uint64_t id;
  std::vector<std::vector<ProcId>> groups;
  bool one_way = false;  // only messages from groups[0] to the others are cut
  std::string label;
};

struct NetworkConfig {
  DurationRange delay = DurationRange::fixed(Duration::ms(1));
  double loss = 0.0;
  bool fifo = true;  // per link, like a TCP connection
};

class Network {
 public:
  explicit Network(World& world) : world_(world) {}
  void configure(const NetworkConfig& c) { config_ = c; }
  const NetworkConfig& config() const { return config_; }

  // Returns the message id (replies name it in `reply_to`). The body is
  // moved once, into the slot the message waits in (a Redis reply, say, as
  // itself, not through a Payload of its own).
  template <typename Body>
  std::uint64_t send(ProcId from, ProcId to, std::uint64_t reply_to, Body&& body);
  // send(), once the body is in its message slot (World::new_message_slot).
  std::uint64_t send_stored(ProcId from, ProcId to, std::uint64_t reply_to, std::uint64_t slot);

  std::uint64_t partition(std::vector<std::vector<ProcId>> groups, bool one_way, std::string label);
  void heal(std::optional<std::uint64_t> id = std::nullopt);
  void add_rule(LinkRule r) { rules_.push_back(std::move(r)); }
  // No more holding, dropping or delaying (messages already held keep their time).
  void clear_rules() { rules_.clear(); }
  bool blocked(ProcId from, ProcId to) const;

  std::uint64_t messages_sent() const { return sent_; }
  void digest(Digest& d) const;  // partitions and rules

 private:
  // Links are directed: a -> b draws its delays from its own stream, and
  // keeps its own FIFO time. Two processes' two links share one cache line
  // (a LinkPair), so a request and its reply touch one line of link state,
  // and a client's ten links to the lock's five nodes five lines. (A link of
  // 64 bytes of its own, found through a row of indices, missed the cache
  // at each use with 1,000 clients: 4% slower; bench/README.md, "Links in
  // pairs".)
  struct alignas(64) LinkPair {
    Rng::State stream[2]{};  // [0]: from the lower id to the higher; all zero: not made yet
  };
  // What a message touches only in some worlds: a FIFO link's time, and
  // whether a link whose stream is not made has carried a message (the
  // world's digest lists the links in order of first use).
  struct LinkInfo {
    Instant last_delivery;
    bool used = false;
  };
  static bool made(const Rng::State& s) { return (s[0] | s[1] | s[2] | s[3]) != 0; }
  // The pair of processes a link joins, by the row it lies in (its higher
  // process) and its place there (its lower one), and which of the two it is.
  struct Ends {
    ProcId hi, lo;
    std::size_t down;  // 1: from the higher id to the lower
  };
  static Ends ends(ProcId from, ProcId to) { return from > to ? Ends{from, to, 1} : Ends{to, from, 0}; }
  // The link from -> to, as 2 * its pair + its direction: found, or made.
  std::size_t link(ProcId from, ProcId to);
  // The same, if the link has carried a message.
  std::optional<std::size_t> find_link(ProcId from, ProcId to) const;
  Rng::State& stream(std::size_t k) { return pairs_[k >> 1].stream[k & 1]; }
  const Rng::State& stream(std::size_t k) const { return pairs_[k >> 1].stream[k & 1]; }
  Rng fork_link_rng(ProcId from, ProcId to) const;
  // A link's stream, drawn from in its pair: made at its first draw (a
  // stream forked by name is the same whenever it is made, and a link with
  // a fixed delay, no loss and no drop rule never draws).
  Rng::Ref link_rng(std::size_t k, ProcId from, ProcId to) {
    Rng::State& s = stream(k);
    if (!made(s)) s = fork_link_rng(from, to).state();
    return Rng::Ref(s);
  }
  // A message not sent on (a partition, a drop rule, loss): noted, its slot freed.
  std::uint64_t drop(ProcId from, ProcId to, std::uint64_t id, std::uint64_t slot, std::uint64_t content,
                     std::string_view why);

  World& world_;
  NetworkConfig config_;
  // Where the pairs are: each process has a row of them, one per process
  // of a lower id (or its own) from the lowest it has exchanged messages
  // with: a lock node's row spans the clients (whose ids come first). A row is
  // widened to at least twice its width (copied to the end of pairs_), so
  // memory stays linear in processes whatever order links come in. (A table
  // with a cell for every pair of processes grew as the square of them: the
  // benchmark's workload with ten thousand clients peaked at 453 MB;
  // bench/README.md, "Links by sender".)
  struct LinkRow {
    ProcId lo = 0;            // the lower process of the row's first pair
    std::uint32_t width = 0;  // pairs
    std::size_t at = 0;       // where they start in pairs_
  };
  std::size_t widen(LinkRow& row, ProcId hi, ProcId lo);  // to take pair (lo, hi); returns its place
  std::vector<LinkRow> link_rows_;  // by the higher process of a pair
  std::vector<LinkPair> pairs_;
  std::vector<LinkInfo> link_info_;  // by link: 2 * pair + direction
  std::vector<std::pair<ProcId, ProcId>> links_used_;  // in order of first use (the digest's order)
  std::vector<Partition> partitions_;
  std::vector<LinkRule> rules_;
  std::uint64_t next_partition_ = 1;
  std::uint64_t next_message_ = 1;
  std::uint64_t sent_ = 0;
};

// ---------------------------------------------------------------------------

class World {
 public:
  explicit World(std::uint64_t seed);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Instant now() const { return now_; }
  std::uint64_t seed() const { return seed_; }
  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }
  Network& network() { return network_; }
  // A named child of the run's root random stream.
  Rng fork_rng(std::string_view name) const { return root_rng_.fork(name); }
  // The same for the name that is the parts one after the other, without building it.
  Rng fork_rng_parts(std::initializer_list<std::string_view> parts) const { return root_rng_.fork_parts(parts); }

  template <typename P, typename... Args>
  P& add(Args&&... args) {
    auto p = std::make_unique<P>(*this, std::forward<Args>(args)...);
    P& ref = *p;
    processes_.push_back(std::move(p));
    return ref;
  }
  Process& process(ProcId id) { return *processes_.at(id); }
  std::size_t process_count() const { return processes_.size(); }
  std::optional<ProcId> find(std::string_view name) const { return trace_.find(name); }

  // Run `action` at `at` (not addressed to any process: faults, the engine).
  void at(Instant at, std::function<void()> action);

  // Compact timers: a timer set earlier than the process's queued timer
  // event moves that event in place instead of leaving it behind, stale, to
  // be popped for nothing. The same events in the same order (the moved
  // event takes the sequence number a new one would), fewer queue events,
  // a smaller queue. Off: the queue holds the stale events, as digest()
  // (explore --exhaustive's states) has always seen it. Set before the run.
  void set_compact_timers(bool on) { compact_timers_ = on; }
  // A lean world (explore's random runs, which read only their verdict):
  // compact timers, no trace hash, no message fingerprints.
  void set_lean(bool lean);

  // Run until the queue is empty, `end` is reached, or `max_events` have run.
  // Returns false if the event budget ran out first.
  bool run_until(Instant end, std::uint64_t max_events = ~std::uint64_t{0});
  std::uint64_t events_run() const { return events_run_; }
  // Messages that reached a running destination (each one a `delivered` event).
  std::uint64_t messages_delivered() const { return delivered_; }
  std::size_t pending_events() const { return queue_.size(); }
  // Fold the world's state into `d`: the time, every process (its kernel
  // state and its model's digest()), the pending events and the messages
  // in flight, the partitions and link rules. Coroutine frames are not
  // visible: two states that agree on all of this but differ in a local
  // variable of a process's code fold alike (the timers and messages that
  // variable will cause usually tell them apart). Messages in flight fold
  // their content fingerprint, taken only while the trace is hashing.
  void digest(Digest& d) const;

  // Faults, applied now.
  void pause(ProcId p, Duration for_how_long);
  // A paused process resumes now, its pause cut short (explore's liveness phase).
  void end_pause(ProcId p);
  void crash(ProcId p);
  void restart(ProcId p);
  void clock_jump(ProcId p, Duration by);
  void set_drift_ppb(ProcId p, std::int64_t ppb);

  // Kernel plumbing for Process and Network.
  void schedule(Event e);
  // schedule() of the event with these fields, written where it is queued
  // (EventQueue::emplace): the hot paths' form.
  void schedule(Instant at, ProcId pid, std::uint32_t epoch, Event::Kind kind, std::uint64_t arg);
  // The sender of request `m` has its call refused one network delay from now.
  void refuse_later(const Message& m);
  // A free slot for a message in flight; its body, to build in place.
  std::uint64_t new_message_slot();
  Payload& message_body(std::uint64_t slot) { return messages_[slot].body; }  // stays put
  // A slot taken and never sent (an awaiter destroyed before it was awaited).
  void free_message_slot(std::uint64_t slot) { free_messages_.push_back(slot); }
  void note_world(Ev kind, std::string detail);

 private:
  void dispatch(Event& e);

  std::uint64_t seed_;
  Rng root_rng_;
  Instant now_ = Instant::zero();
  EventQueue queue_;
  Trace trace_;
  Network network_;
  std::vector<std::unique_ptr<Process>> processes_;
  // Messages in flight, by slot, in chunks that never move (delivery reads
  // one in place while sending more). A deque did that too, but its nodes
  // held two messages each and every look-up divided (issue 15's profile).
  class MessageSlots {
   public:
    Message& operator[](std::uint64_t slot) { return chunks_[slot / kChunk][slot % kChunk]; }
    const Message& operator[](std::uint64_t slot) const { return chunks_[slot / kChunk][slot % kChunk]; }
    std::uint64_t size() const { return size_; }
    void emplace_back() {
      if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<Message[]>(kChunk));
      ++size_;
    }

   private:
    static constexpr std::uint64_t kChunk = 8;
    std::vector<std::unique_ptr<Message[]>> chunks_;
    std::uint64_t size_ = 0;
  };
  MessageSlots messages_;

  std::vector<std::uint64_t> free_messages_;
  std::vector<std::function<void()>> actions_;
  std::vector<std::uint64_t> free_actions_;
  std::uint64_t events_run_ = 0;
  std::uint64_t delivered_ = 0;
  bool compact_timers_ = false;
  friend class Process;
  friend class Network;
};

template <typename Body>
std::uint64_t Network::send(ProcId from, ProcId to, std::uint64_t reply_to, Body&& body) {
  const std::uint64_t slot = world_.new_message_slot();
  world_.message_body(slot) = std::forward<Body>(body);
  return send_stored(from, to, reply_to, slot);
}

template <typename Body>
void Process::reply(const Message& request, Body&& body) {
  world_.network().send(id_, request.from, request.id, std::forward<Body>(body));
}

}  // namespace locksim
