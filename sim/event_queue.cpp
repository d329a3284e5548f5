#include "sim/event_queue.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace locksim {

// An array while it is small, else a calendar queue. A binary heap, a 4-ary
// one and a radix heap came before: bench/README.md, "A calendar queue", has
// the measurements.
void EventQueue::push(Event e) { emplace(e.at, e.seq, e.arg, e.pid, e.epoch, e.kind); }

void EventQueue::emplace(Instant at, std::uint64_t seq, std::uint64_t arg, ProcId pid, std::uint32_t epoch,
                         Event::Kind kind) {
  if (kind == Event::Kind::ArmedTimer) {
    if (pid >= armed_.size()) armed_.resize(pid + 1, 0);
    armed_[pid] = seq + 1;
  }
  ++size_;
  const std::uint64_t d = calendar_ ? day(at) : 0;
  Event& e = calendar_ ? calendar_slot(d) : events_.emplace_back();
  e.at = at;
  e.seq = seq;
  e.arg = arg;
  e.pid = pid;
  e.epoch = epoch;
  e.kind = kind;
  if (calendar_) {
    settle(d);
    return;
  }
  const std::size_t i = events_.size() - 1;
  if (i == 0 || before(e, events_[first_])) first_ = i;
  if (i >= kCalendarAbove) to_calendar(day(events_[first_].at));
}

// The earliest's key kept in registers, chosen without a branch: which event
// is earliest is what a branch predictor cannot know.
void EventQueue::find_first() {
  std::size_t first = 0;
  const std::size_t n = events_.size();
  if (n > 1) {
    std::int64_t at = events_[0].at.ns();
    std::uint64_t seq = events_[0].seq;
    for (std::size_t i = 1; i < n; ++i) {
      const std::int64_t a = events_[i].at.ns();
      const std::uint64_t q = events_[i].seq;
      const bool earlier = (a < at) | ((a == at) & (q < seq));
      first = earlier ? i : first;
      at = earlier ? a : at;
      seq = earlier ? q : seq;
    }
  }
  first_ = first;
}

Event EventQueue::pop() {
  const Event top = calendar_ ? calendar_top() : events_[first_];
  if (top.kind == Event::Kind::ArmedTimer) armed_[top.pid] = 0;
  --size_;
  if (calendar_) {
    Calendar& c = *c_;
    if (++c.head == c.front.size()) {  // today may bring more; the front starts again empty
      c.front.clear();
      c.head = 0;
    }
    if (size_ <= kArrayAt) to_array();
    else if (--until_retune_ == 0) retune(top.at);
    return top;
  }
  const Event last = events_.back();
  events_.pop_back();
  if (first_ < events_.size()) events_[first_] = last;
  find_first();
  return top;
}

Event& EventQueue::calendar_slot(std::uint64_t d) {
  Calendar& c = *c_;
  if (d < c.today) {  // before the day top() looked ahead to (a fault at the end of run_until): rare
    to_array();
    to_calendar(d);
  }
  if (d == c.today) return c.front.emplace_back();
  if (d - c.today >= kDays) return c.later.emplace_back();
  const auto slot = static_cast<std::uint32_t>(d % kDays);
  std::uint32_t n = c.free;
  if (n != kNone) {
    c.free = c.nodes[n].next;
  } else {
    n = static_cast<std::uint32_t>(c.nodes.size());
    c.nodes.emplace_back();
  }
  c.nodes[n].next = c.first[slot];
  c.first[slot] = n;
  c.nonempty[slot / 64] |= std::uint64_t{1} << (slot % 64);
  return c.nodes[n].e;
}

void EventQueue::settle(std::uint64_t d) {
  Calendar& c = *c_;
  if (d == c.today) {  // into today's order: usually last already (the newest sequence number)
    std::vector<Event>& front = c.front;
    std::size_t i = front.size() - 1;
    if (i == c.head || !before(front[i], front[i - 1])) return;
    const Event e = front[i];
    for (; i > c.head && before(e, front[i - 1]); --i) front[i] = front[i - 1];
    front[i] = e;
  } else if (d - c.today >= kDays) {
    std::push_heap(c.later.begin(), c.later.end(), after);
  }
}

void EventQueue::place(const Event& e) {
  const std::uint64_t d = day(e.at);
  calendar_slot(d) = e;
  settle(d);
}

void EventQueue::drain(std::uint32_t slot) {
  Calendar& c = *c_;
  std::uint32_t n = c.first[slot];
  while (n != kNone) {
    Node& node = c.nodes[n];
    c.front.push_back(node.e);
    const std::uint32_t next = node.next;
    node.next = c.free;
    c.free = n;
    n = next;
  }
  c.first[slot] = kNone;
  c.nonempty[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
}

void EventQueue::next_day() {
  Calendar& c = *c_;
  c.front.clear();
  c.head = 0;
  // The next day of the year with events, if any: the bitmap's first set bit
  // from tomorrow's on, round the year.
  constexpr std::uint32_t kWords = kDays / 64;
  std::uint64_t next = ~std::uint64_t{0};
  const auto from = static_cast<std::uint32_t>((c.today + 1) % kDays);
  std::uint32_t w = from / 64;
  std::uint64_t bits = c.nonempty[w] & (~std::uint64_t{0} << (from % 64));
  for (std::uint32_t i = 0; i <= kWords; ++i) {
    if (bits != 0) {
      const auto slot = w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits));
      next = c.today + 1 + (slot + kDays - from) % kDays;
      break;
    }
    w = (w + 1) % kWords;
    bits = c.nonempty[w];
  }
  // An event waiting in `later` may be due first: once its day is within
  // the year, it and every other one within the year come in.
  const std::uint64_t later = c.later.empty() ? ~std::uint64_t{0} : day(c.later.front().at);
  assert((next != ~std::uint64_t{0} || later != ~std::uint64_t{0}) && "next_day of an empty calendar");
  if (later <= next) {
    c.today = later;
    while (!c.later.empty() && day(c.later.front().at) - c.today < kDays) {
      std::pop_heap(c.later.begin(), c.later.end(), after);
      const Event e = c.later.back();
      c.later.pop_back();
      if (day(e.at) == c.today) c.front.push_back(e);  // in order: the heap gives them earliest first
      else calendar_slot(day(e.at)) = e;
    }
  } else {
    c.today = next;
  }
  const auto slot = static_cast<std::uint32_t>(c.today % kDays);
  if (c.first[slot] != kNone) drain(slot);
  if (c.front.size() > 1)
    std::sort(c.front.begin(), c.front.end(), [](const Event& a, const Event& b) { return before(a, b); });
}

Event* EventQueue::find_armed(ProcId pid) {
  auto is_it = [&](const Event& e) { return e.pid == pid && e.kind == Event::Kind::ArmedTimer && live(e); };
  if (!calendar_) {
    for (Event& e : events_)
      if (is_it(e)) return &e;
    return nullptr;
  }
  Event* found = nullptr;
  each_stored([&](const Event& e) {
    if (is_it(e)) found = const_cast<Event*>(&e);
  });
  return found;
}

void EventQueue::to_calendar(std::uint64_t today) {
  if (!c_) {
    c_ = std::make_unique<Calendar>();
    c_->first.fill(kNone);
  }
  calendar_ = true;
  c_->today = today;
  c_->head = 0;
  for (const Event& e : events_) place(e);
  events_.clear();
}

void EventQueue::to_array() {
  events_.clear();
  for_each([&](const Event& e) { events_.push_back(e); });
  calendar_ = false;
  Calendar& c = *c_;
  for (std::uint32_t w = 0; w < c.nonempty.size(); ++w)
    for (std::uint64_t bits = c.nonempty[w]; bits != 0; bits &= bits - 1)
      c.first[w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits))] = kNone;
  c.nonempty = {};
  c.nodes.clear();
  c.free = kNone;
  c.front.clear();
  c.head = 0;
  c.later.clear();
  find_first();
}

void EventQueue::retune(Instant now) {
  until_retune_ = kRetuneEvery;
  const Instant start = std::exchange(window_start_, now);
  if (now <= start) return;  // no time passed: nothing to go by
  const auto gap = static_cast<std::uint64_t>((now - start).count_ns()) / kRetuneEvery;
  const auto width = static_cast<std::uint32_t>(std::bit_width(gap));
  const std::uint32_t bits = width > 2 ? width - 2 : 0;  // a day: a quarter of the gap, rounded down to a power of 2
  if (bits + 1 >= day_bits_ && bits <= day_bits_ + 1) return;
  day_bits_ = bits;
  to_array();
  to_calendar(day(now));  // now, not the earliest queued: an event pushed for now stays in today
}

void EventQueue::rekey_armed(const Event& e) {
  assert(e.kind == Event::Kind::ArmedTimer && armed(e.pid) && "rekey_armed of a process with no armed timer");
  if (!calendar_) {  // in place: the array has no order
    Event* old = find_armed(e.pid);
    assert(old && before(e, *old) && "a rekeyed timer moves earlier");
    *old = e;
    armed_[e.pid] = e.seq + 1;
    const auto i = static_cast<std::size_t>(old - events_.data());
    if (before(e, events_[first_])) first_ = i;
    return;
  }
  --size_;  // the old event is dead from here on (live()), and passed over where it lies
  emplace(e.at, e.seq, e.arg, e.pid, e.epoch, e.kind);
}

void EventQueue::disarm(ProcId pid) {
  if (!armed(pid)) return;
  Event* e = find_armed(pid);
  assert(e && "an armed process's timer is queued");
  e->kind = Event::Kind::Timer;
  armed_[pid] = 0;
}

}  // namespace locksim
