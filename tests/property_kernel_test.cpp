// Properties of the kernel, checked on generated inputs (RapidCheck): the
// network's per-link FIFO, pauses, and the processes' clocks.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/wakeup.hpp"
#include "sim/world.hpp"
#include "tests/property_support.hpp"

namespace property_kernel_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

Instant at_us(std::int64_t us) { return Instant::zero() + Duration::us(us); }

// Keeps (sender, number) of what it receives, in arrival order.
struct Receiver : Process {
  Receiver(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  std::vector<std::pair<ProcId, std::int64_t>> received;
  void on_message(Message& m) override { received.emplace_back(m.from, std::get<storage::Request>(m.body).value); }
};

storage::Request numbered(std::int64_t n) {
  storage::Request r;
  r.value = n;
  return r;
}

}  // namespace

TEST_CASE("a FIFO link delivers in send order for any delay range, loss and send times") {
  check_property("per-link FIFO", 1000, [] {
    const auto lo_ns = *rc::gen::inRange<std::int64_t>(0, 50'000'000);
    const auto width_ns = *rc::gen::inRange<std::int64_t>(0, 500'000'000);
    const double loss = *rc::gen::element(0.0, 0.0, 0.3);
    const auto seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    // (from, to, microseconds after the previous send): 0 sends at the same instant.
    const auto sends = *rc::gen::container<std::vector<std::tuple<int, int, int>>>(
        rc::gen::tuple(rc::gen::inRange(0, 3), rc::gen::inRange(1, 3), rc::gen::element(0, 0, 1, 50, 3000)));

    World w(seed);
    std::vector<Receiver*> p = {&w.add<Receiver>("p0"), &w.add<Receiver>("p1"), &w.add<Receiver>("p2")};
    w.network().configure({DurationRange{Duration::ns(lo_ns), Duration::ns(lo_ns + width_ns)}, loss, true});
    std::map<std::pair<ProcId, ProcId>, std::int64_t> sent;  // per link
    std::int64_t t_us = 0;
    for (const auto& [from, step, gap_us] : sends) {
      t_us += gap_us;
      Receiver* src = p[from];
      Receiver* dst = p[(from + step) % 3];  // never itself
      const std::int64_t n = sent[{src->id(), dst->id()}]++;
      w.at(at_us(t_us), [src, dst, n] { src->send(dst->id(), numbered(n)); });
    }
    w.run_until(at_us(t_us) + Duration::ns(lo_ns + width_ns) + Duration::s(1));

    for (Receiver* r : p) {
      std::map<ProcId, std::int64_t> next;  // the lowest number still allowed from each sender
      for (const auto& [from, n] : r->received) {
        RC_ASSERT(n >= next[from]);
        next[from] = n + 1;
      }
      if (loss == 0.0)
        for (const auto& [link, count] : sent)
          if (link.second == r->id()) RC_ASSERT(next[link.first] == count);
    }
  });
}

namespace {

// A process whose code records, each time it runs, when and in which state.
struct Watched : Process {
  Watched(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  struct Seen {
    Instant at;
    State state;
    const char* what;
  };
  std::vector<Seen> seen;
  std::vector<std::int64_t> messages;
  void record(const char* what) { seen.push_back({world().now(), state(), what}); }
  void on_message(Message& m) override {
    record("message");
    messages.push_back(std::get<storage::Request>(m.body).value);
  }
};

struct Echo : Process {
  Echo(World& w, std::string name) : Process(w, std::move(name), ProcessRole::LockNode, {}) {}
  void on_message(Message& m) override { reply(m, storage::Reply{}); }
};

Task<void> sleeper(Watched& self, std::vector<int> sleeps_ms, int& done) {
  for (const int ms : sleeps_ms) {
    co_await self.sleep(Duration::ms(ms));
    self.record("timer");
    ++done;
  }
}

Task<void> caller(Watched& self, ProcId echo, int calls, int& answered) {
  for (int i = 0; i < calls; ++i) {
    Payload request = storage::Request{};
    const std::optional<Payload> reply = co_await self.call(echo, std::move(request), Duration::zero());
    self.record("reply");
    answered += reply.has_value();
    co_await self.sleep(Duration::ms(7));
  }
}

Task<void> waiter(Watched& self, Wakeup<Process>& wakeup, int& woken) {
  for (;;) {
    co_await wakeup.wait();
    self.record("wakeup");
    ++woken;
  }
}

}  // namespace

TEST_CASE("a paused process runs no timer, message or coroutine until it resumes, for any pause schedule") {
  check_property("pauses hold everything", 500, [] {
    // (start, length) of each pause, in milliseconds; they may overlap.
    const auto pauses = *rc::gen::container<std::vector<std::pair<int, int>>>(
        rc::gen::pair(rc::gen::inRange(0, 2000), rc::gen::inRange(1, 700)));
    const auto sleeps = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 200));
    const auto message_times = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 2500));
    const auto wakeup_times = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 2500));
    const int calls = *rc::gen::inRange(0, 40);

    World w(*rc::gen::inRange<std::uint64_t>(1, 1000));
    w.network().configure({DurationRange{Duration::us(100), Duration::ms(20)}, 0.0, true});
    auto& p = w.add<Watched>("p");
    auto& q = w.add<Receiver>("q");
    auto& echo = w.add<Echo>("echo");
    Wakeup<Process> wakeup(p);
    int slept = 0, answered = 0, woken = 0;
    p.spawn(sleeper(p, sleeps, slept));
    p.spawn(caller(p, echo.id(), calls, answered));
    p.spawn(waiter(p, wakeup, woken));
    for (const auto& [start, length] : pauses)
      w.at(Instant::zero() + Duration::ms(start), [&w, &p, length = length] { w.pause(p.id(), Duration::ms(length)); });
    for (std::size_t i = 0; i < message_times.size(); ++i)
      w.at(Instant::zero() + Duration::ms(message_times[i]),
           [&q, &p, i] { q.send(p.id(), numbered(static_cast<std::int64_t>(i))); });
    for (const int t : wakeup_times) w.at(Instant::zero() + Duration::ms(t), [&wakeup] { wakeup.fire(); });
    w.run_until(Instant::zero() + Duration::s(60));

    for (const Watched::Seen& s : p.seen) {
      RC_ASSERT(s.state == Process::State::Running);
      for (const auto& [start, length] : pauses) {
        const Instant from = Instant::zero() + Duration::ms(start), until = from + Duration::ms(length);
        RC_ASSERT(!(from < s.at && s.at < until));
      }
    }
    // Held, not lost: everything happened once the pauses were over.
    RC_ASSERT(slept == static_cast<int>(sleeps.size()));
    RC_ASSERT(answered == calls);
    RC_ASSERT(p.messages.size() == message_times.size());
    RC_ASSERT(wakeup_times.empty() || woken >= 1);
  });
}

namespace {

struct Clocked : Process {
  Clocked(World& w, const ClockSpec& c) : Process(w, "p", ProcessRole::Client, c) {}
};

}  // namespace

TEST_CASE("a process's clocks never run backwards, the wall clock only by its jumps, for any drift, offset and jumps") {
  check_property("clocks run forward", 1000, [] {
    ClockSpec spec;
    spec.offset = Duration::ms(*rc::gen::inRange<std::int64_t>(-3'600'000, 3'600'000));
    // From a clock that all but stops (-999999 ppm) to one 1000 times too fast.
    auto drift = rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-999'999'000, 1'000'000'000'000),
                                rc::gen::inRange<std::int64_t>(-100'000, 100'000));
    spec.drift_ppb = *drift;
    enum Op { Read, Jump, Drift };
    // (op, microseconds after the previous one, jump in ms or drift in ppb)
    const auto ops = *rc::gen::container<std::vector<std::tuple<int, int, std::int64_t>>>(rc::gen::tuple(
        rc::gen::element<int>(Read, Read, Jump, Drift), rc::gen::element(0, 1, 999, 250'000),
        rc::gen::oneOf(rc::gen::inRange<std::int64_t>(-3'600'000, 3'600'000), drift)));
    const auto sleeps = *rc::gen::container<std::vector<std::int64_t>>(rc::gen::inRange<std::int64_t>(0, 2'000'000'000));

    World w(1);
    auto& p = w.add<Clocked>(spec);
    struct Reading {
      Instant wall, mono;
      Duration jumped;  // the sum of the wall clock's jumps so far
    };
    std::vector<Reading> readings;
    Duration jumped;
    Instant last_drift_change = Instant::from_ns(-1);
    std::int64_t t_us = 0;
    for (const auto& [op, gap_us, value] : ops) {
      t_us += gap_us;
      w.at(at_us(t_us), [&, op = op, value = value] {
        const Reading before{p.wall_now(), p.mono_now(), jumped};
        if (op == Jump && value != 0) {
          w.clock_jump(p.id(), Duration::ms(value));
          jumped += Duration::ms(value);
        } else if (op == Drift) {
          w.set_drift_ppb(p.id(), std::clamp<std::int64_t>(value, -999'999'000, 1'000'000'000'000));
          last_drift_change = w.now();
          RC_ASSERT(p.wall_now() == before.wall);  // a drift change is continuous
          RC_ASSERT(p.mono_now() == before.mono);
        }
        readings.push_back(before);
        readings.push_back({p.wall_now(), p.mono_now(), jumped});
      });
    }
    // A sleeper: it wakes when its monotonic clock reads its deadline, never
    // before, and no later than the true nanosecond in which the clock gets
    // there (unless its drift changed that very instant).
    bool sleeps_ok = true;
    p.spawn([](Clocked& self, std::vector<std::int64_t> sleeps, const Instant& last_change, bool& ok) -> Task<void> {
      for (const std::int64_t ns : sleeps) {
        const Instant deadline = self.mono_now() + Duration::ns(ns);
        co_await self.sleep(Duration::ns(ns));
        const Instant now = self.world().now();
        ok = ok && self.mono_now() >= deadline;
        // How far the clock moves in one true nanosecond, rounded up.
        const std::int64_t step = std::max<std::int64_t>(1, (self.clocks().mono.drift_ppb() + 1'999'999'999) / 1'000'000'000);
        if (last_change < now) ok = ok && self.mono_now() - deadline <= Duration::ns(step);
      }
    }(p, sleeps, last_drift_change, sleeps_ok));
    w.run_until(Instant::zero() + Duration::s(3600));

    for (std::size_t i = 1; i < readings.size(); ++i) {
      const Reading &a = readings[i - 1], &b = readings[i];
      RC_ASSERT(b.mono >= a.mono);
      RC_ASSERT((b.wall - b.jumped) >= (a.wall - a.jumped));
    }
    RC_ASSERT(sleeps_ok);
  });
}

}  // namespace property_kernel_test
