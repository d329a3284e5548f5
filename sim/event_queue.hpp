// The event queue, ordered by (time, sequence), so events at equal times run
// in the order they were scheduled.
#pragma once

#include <array>
#include <bit>
#include "sim/coroutine.hpp"
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/proc_id.hpp"
#include "sim/time.hpp"

namespace locksim {

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

  void set_handle(coroutine_handle<> h) { arg = reinterpret_cast<std::uintptr_t>(h.address()); }
  coroutine_handle<> handle() const {
    return coroutine_handle<>::from_address(reinterpret_cast<void*>(static_cast<std::uintptr_t>(arg)));
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
// digits, bucket to bucket (bench/README.md, "A calendar queue",
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
  // waits for them to reach the cache (a store-forwarding stall: a
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

// Inline (as top() is): the world's loop reads the earliest event once per event.
inline const Event& EventQueue::calendar_top() {
  Calendar& c = *c_;
  for (;;) {
    if (c.head == c.front.size()) next_day();
    const Event& e = c.front[c.head];
    if (live(e)) return e;
    ++c.head;  // a timer since moved earlier: gone
  }
}

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

}  // namespace locksim
