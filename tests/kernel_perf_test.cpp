// What the kernel's speed-ups must not change: the event queue pops in
// (time, sequence) order whatever its pushes, as an array or a calendar queue; a Redis
// node's keyspace (FlatMap) answers and iterates as std::map would; and the
// small-object allocator (sim/alloc.cpp) hands a freed block out again,
// aligned, on any thread.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/flat_map.hpp"
#include "sim/rng.hpp"
#include "sim/world.hpp"

namespace kernel_perf_test {

using namespace locksim;

TEST_CASE("the event queue pops in (time, sequence) order through interleaved pushes and pops") {
  EventQueue q;
  Rng rng(7);
  std::vector<std::pair<std::int64_t, std::uint64_t>> popped;
  std::int64_t now = 0;
  for (int round = 0; round < 2000; ++round) {
    // A few pushes at or after the last time popped (many at equal times), then a pop or two.
    const auto pushes = rng.below(4);
    for (std::uint64_t i = 0; i < pushes; ++i) {
      Event e;
      e.at = Instant::zero() + Duration::ns(now + static_cast<std::int64_t>(rng.below(5)));
      e.seq = q.next_seq();
      q.push(e);
    }
    for (std::uint64_t i = rng.below(3); i > 0 && !q.empty(); --i) {
      const Event e = q.pop();
      now = e.at.ns();
      popped.push_back({e.at.ns(), e.seq});
    }
  }
  while (!q.empty()) {
    const Event e = q.pop();
    popped.push_back({e.at.ns(), e.seq});
  }
  REQUIRE(popped.size() > 1000);
  CHECK(std::is_sorted(popped.begin(), popped.end()));
}

namespace {

// A reference: every queued event by its key. Bursts take the queue past
// EventQueue::kCalendarAbove (it becomes a calendar queue) and drain it below
// kArrayAt (an array again); armed timers are moved earlier and disarmed on
// the way. Events lie up to 50 * `scale` ns ahead: with scale 1 all in one
// day of the calendar, with 2^12 over a dozen days, with 2^23 past the
// year, in its heap of later events.
void check_against_reference(std::int64_t scale) {
  CAPTURE(scale);
  EventQueue q;
  std::map<std::pair<std::int64_t, std::uint64_t>, Event> ref;
  Rng rng(11);
  constexpr ProcId kProcs = 6;
  std::int64_t now = 0;
  std::size_t largest = 0, popped = 0;
  auto armed_key = [&](ProcId pid) -> std::optional<std::pair<std::int64_t, std::uint64_t>> {
    for (const auto& [key, e] : ref)
      if (e.kind == Event::Kind::ArmedTimer && e.pid == pid) return key;
    return std::nullopt;
  };
  for (int round = 0; round < 400; ++round) {
    const std::uint64_t burst = round % 10 == 0 ? 40 : rng.below(4);
    for (std::uint64_t i = 0; i < burst; ++i) {
      Event e;
      e.at = Instant::from_ns(now + static_cast<std::int64_t>(rng.below(50)) * scale);
      e.seq = q.next_seq();
      e.pid = static_cast<ProcId>(rng.below(kProcs));
      e.kind = !q.armed(e.pid) && rng.chance(0.3) ? Event::Kind::ArmedTimer : Event::Kind::Deliver;
      if (rng.chance(0.5)) q.push(e);
      else q.emplace(e.at, e.seq, e.arg, e.pid, e.epoch, e.kind);  // World::schedule's form
      ref.emplace(std::pair{e.at.ns(), e.seq}, e);
    }
    largest = std::max(largest, q.size());
    const ProcId pid = static_cast<ProcId>(rng.below(kProcs));
    if (const auto key = armed_key(pid); key && rng.chance(0.5)) {
      if (rng.chance(0.5)) {  // moved earlier, with a fresh sequence number
        Event e = ref.at(*key);
        e.at = Instant::from_ns(now + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(key->first - now) + 1)));
        e.seq = q.next_seq();
        if (std::pair{e.at.ns(), e.seq} < *key) {
          q.rekey_armed(e);
          ref.erase(*key);
          ref.emplace(std::pair{e.at.ns(), e.seq}, e);
        }
      } else {
        q.disarm(pid);
        ref.at(*key).kind = Event::Kind::Timer;
      }
    }
    for (ProcId p = 0; p < kProcs; ++p) CHECK(q.armed(p) == armed_key(p).has_value());
    const std::uint64_t pops = round % 10 == 5 ? 45 : rng.below(4);
    for (std::uint64_t i = 0; i < pops && !q.empty(); ++i) {
      REQUIRE(q.top().seq == ref.begin()->second.seq);
      const Event e = q.pop();
      const Event want = ref.begin()->second;
      ref.erase(ref.begin());
      CHECK(e.at == want.at);
      CHECK(e.seq == want.seq);
      CHECK(e.pid == want.pid);
      CHECK(e.kind == want.kind);
      now = e.at.ns();
      ++popped;
    }
    CHECK(q.size() == ref.size());
    std::size_t listed = 0;  // for_each lists the queued events: not a timer since moved
    q.for_each([&](const Event& e) {
      ++listed;
      CHECK(ref.count(std::pair{e.at.ns(), e.seq}) == 1);
    });
    CHECK(listed == ref.size());
  }
  CHECK(largest > EventQueue::kCalendarAbove);
  CHECK(popped > 1000);
}

}  // namespace

TEST_CASE("the event queue, as an array and as a calendar queue, pops what a sorted reference pops, armed timers and all, pushed or emplaced") {
  for (const std::int64_t scale : {std::int64_t{1}, std::int64_t{1} << 12, std::int64_t{1} << 23})
    check_against_reference(scale);
}

TEST_CASE("the calendar queue's days become as wide as a quarter of the time between events, and the order stays") {
  // 200 events queued at once, each popped one replaced by one `gap` ns
  // after the latest: events `gap` ns apart for as long as it takes to retune.
  for (const auto& [gap, bits] : {std::pair{std::int64_t{5'000}, 11u}, std::pair{std::int64_t{50'000}, 14u},
                                  std::pair{std::int64_t{3'000'000}, 20u}}) {
    CAPTURE(gap);
    EventQueue q;
    std::int64_t latest = 0, last_popped = -1;
    for (int i = 0; i < 200; ++i) {
      latest += gap;
      q.emplace(Instant::from_ns(latest), q.next_seq(), 0, 0, 0, Event::Kind::Deliver);
    }
    for (std::uint64_t i = 0; i < 3 * EventQueue::kRetuneEvery; ++i) {
      const Event e = q.pop();
      CHECK(e.at.ns() > last_popped);
      last_popped = e.at.ns();
      latest += gap;
      q.emplace(Instant::from_ns(latest), q.next_seq(), 0, 0, 0, Event::Kind::Deliver);
    }
    CHECK(q.day_bits() == bits);
    CHECK(q.size() == 200);
  }
}

TEST_CASE("the calendar queue takes an event earlier than the earliest it showed, and orders times far apart") {
  // run_until looks at top() and stops when it is past the end; the harness
  // may then queue something before it (a fault at the end instant). And the
  // benchmark's events lie microseconds to minutes ahead: many digits apart.
  EventQueue q;
  std::map<std::pair<std::int64_t, std::uint64_t>, Event> ref;
  Rng rng(23);
  auto push = [&](std::int64_t at) {
    Event e;
    e.at = Instant::from_ns(at);
    e.seq = q.next_seq();
    q.push(e);
    ref.emplace(std::pair{at, e.seq}, e);
  };
  std::int64_t now = 0;
  for (int round = 0; round < 300; ++round) {
    for (int i = 0; i < 40; ++i)  // past kCalendarAbove: the calendar queue
      push(now + static_cast<std::int64_t>(rng.below(std::uint64_t{1} << rng.below(40))));
    REQUIRE(q.top().seq == ref.begin()->second.seq);  // looked ahead
    push(now);                                        // earlier than what it showed, not than now
    push(now);                                        // the same time again: after it, by sequence
    REQUIRE(q.top().seq == ref.begin()->second.seq);
    for (std::uint64_t pops = 20 + rng.below(20); pops > 0 && !q.empty(); --pops) {
      const Event e = q.pop();
      CHECK(e.seq == ref.begin()->second.seq);
      ref.erase(ref.begin());
      now = e.at.ns();
    }
    CHECK(q.size() == ref.size());
  }
  while (!q.empty()) {
    CHECK(q.pop().seq == ref.begin()->second.seq);
    ref.erase(ref.begin());
  }
  CHECK(ref.empty());
}

TEST_CASE("a FlatMap finds, makes and erases as std::map does, and iterates in key order, with few keys or many") {
  FlatMap<std::string, int> flat;
  std::map<std::string, int> ref;
  Rng rng(5);
  for (int step = 0; step < 3000; ++step) {
    // Up to 40 keys: past the few searched by equality, into binary search.
    const std::string key = fmt::format("k{}", rng.below(step < 1500 ? 6 : 40));
    switch (rng.below(4)) {
      case 0: flat[key] += step; ref[key] += step; break;
      case 1: CHECK(flat.erase(key) == ref.erase(key)); break;
      case 2: {
        const auto it = flat.find(key);
        REQUIRE((it == flat.end()) == (ref.count(key) == 0));
        if (it != flat.end()) {
          CHECK(it->second == ref.at(key));
          flat.erase(it);
          ref.erase(key);
        }
        break;
      }
      default: CHECK(flat.count(key) == ref.count(key)); break;
    }
    REQUIRE(flat.size() == ref.size());
    auto r = ref.begin();
    for (const auto& [k, v] : flat) {
      CHECK(k == r->first);
      CHECK(v == r->second);
      ++r;
    }
  }
  flat.clear();
  CHECK(flat.empty());
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define DEFAULT_NEW 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || defined(LOCKSIM_SANITIZED_BUILD)
#define DEFAULT_NEW 1
#endif
#ifndef DEFAULT_NEW  // under a sanitizer sim/alloc.cpp leaves the default operators in place
TEST_CASE("a block freed is the next one of its size handed out on that thread, 16-byte aligned") {
  for (std::size_t size : {1, 24, 100, 200, 512, 1000, 4096}) {
    void* a = ::operator new(size);
    CHECK(reinterpret_cast<std::uintptr_t>(a) % 16 == 0);
    ::operator delete(a);
    void* b = ::operator new(size);
    CHECK(b == a);
    ::operator delete(b, size);
  }
  // Sizes are kept in classes of 16 bytes: a 100-byte block serves a request for 112
  // (malloc's own bins would not: it rounds 100 and 112 to different chunk sizes).
  void* hundred = ::operator new(100);
  ::operator delete(hundred);
  void* more = ::operator new(112);
  CHECK(more == hundred);
  ::operator delete(more);
  // Larger blocks (over 4 KiB) come from malloc, freed straight back.
  void* big = ::operator new(8192);
  CHECK(reinterpret_cast<std::uintptr_t>(big) % 16 == 0);
  ::operator delete(big);
}

TEST_CASE("a block allocated on one thread may be freed and reused on another") {
  auto* made = new std::vector<int>(10, 42);
  void* freed_at = nullptr;
  std::thread([&] {
    CHECK(made->at(9) == 42);
    freed_at = made->data();
    delete made;
    auto reused = std::make_unique<int[]>(10);  // same size class as the vector's 40 bytes
    CHECK(static_cast<void*>(reused.get()) == freed_at);
  }).join();
}
#endif

}  // namespace kernel_perf_test
