// Timers, calls and wakeups: a call's timeout on the caller's clock, timers due
// together, cancelled timeouts that leave the queue, a wakeup across coroutines.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "sim/wakeup.hpp"
#include "tests/kernel_support.hpp"

namespace timer_test {

using namespace locksim;
using namespace locksim::testing;

TEST_CASE("a call times out on the caller's clock when no reply comes") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");  // never replies
  std::optional<bool> answered;
  a.spawn([](Probe& self, ProcId to, std::optional<bool>& answered) -> Task<void> {
    storage::Request req;
    auto r = co_await self.call(to, std::move(req), Duration::ms(50));
    answered = r.has_value();
  }(a, b.id(), answered));
  w.run_until(at_ms(49));
  CHECK_FALSE(answered.has_value());
  w.run_until(at_ms(51));
  REQUIRE(answered.has_value());
  CHECK_FALSE(*answered);
}

TEST_CASE("a wakeup fired by one coroutine resumes another of the same process, and a pause holds it") {
  World w(1);
  auto& p = w.add<Probe>("p");
  Wakeup<Process> wake(p);
  Instant woke;
  p.spawn([](Probe& self, Wakeup<Process>& wake, Instant& woke) -> Task<void> {
    co_await wake.wait();
    woke = self.world().now();
  }(p, wake, woke));
  p.spawn([](Probe& self, Wakeup<Process>& wake) -> Task<void> {
    co_await self.sleep(Duration::ms(5));
    wake.fire();
    co_await self.sleep(Duration::ms(1));
  }(p, wake));
  w.at(at_ms(5), [&] { w.pause(p.id(), Duration::ms(20)); });
  w.run_until(at_ms(100));
  CHECK(woke == at_ms(25));
}

TEST_CASE("call timeouts cancelled by their replies leave nothing in the queue") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& echo = w.add<Echo>("echo");
  int answered = 0;
  a.spawn([](Probe& self, ProcId to, int& answered) -> Task<void> {
    for (int i = 0; i < 1000; ++i) {
      redis::Request req;
      req.key.assign(1, 'k');  // not = "k": a g++ 12 -Wrestrict false positive
      auto r = co_await self.call(to, std::move(req), Duration::s(10));
      answered += r.has_value();
    }
  }(a, echo.id(), answered));
  w.run_until(at_ms(5'000));  // 1000 round trips of 2 ms: all answered, every timeout still in the future
  CHECK(answered == 1000);
  // One queued event stands for all of a's timers, however many were cancelled.
  CHECK(w.pending_events() <= 2);
}

TEST_CASE("timers due at the same instant all fire, in the order they were set") {
  World w(1);
  auto& p = w.add<Probe>("p");
  std::vector<int> order;
  for (int i = 0; i < 4; ++i)
    p.spawn([](Probe& self, std::vector<int>& order, int i) -> Task<void> {
      co_await self.sleep(Duration::ms(10));
      order.push_back(i);
    }(p, order, i));
  w.run_until(at_ms(10));
  CHECK(order == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("compact timers move a superseded timer event instead of leaving it stale: the same instants and order, fewer queue events") {
  // A call's 10 s timeout is cancelled by its reply and superseded by a 3 ms
  // sleep, over and over; b sleeps to instants that tie with a's wake-ups. A
  // pause and a drift change of `a` in the middle re-arm its timers.
  auto run = [](bool compact) {
    World w(7);
    w.set_compact_timers(compact);
    auto& a = w.add<Probe>("a");
    auto& b = w.add<Probe>("b");
    auto& echo = w.add<Echo>("echo");
    std::vector<std::pair<std::int64_t, char>> log;
    a.spawn([](Probe& self, ProcId to, std::vector<std::pair<std::int64_t, char>>& log) -> Task<void> {
      for (int i = 0; i < 300; ++i) {
        redis::Request req;
        req.key.assign(1, 'k');  // not = "k": a g++ 12 -Wrestrict false positive
        auto r = co_await self.call(to, std::move(req), Duration::s(10));
        log.emplace_back((self.world().now() - Instant::zero()).count_ns(), r ? 'r' : 't');
        co_await self.sleep(Duration::ms(3));
        log.emplace_back((self.world().now() - Instant::zero()).count_ns(), 'a');
      }
    }(a, echo.id(), log));
    b.spawn([](Probe& self, std::vector<std::pair<std::int64_t, char>>& log) -> Task<void> {
      for (int i = 0; i < 300; ++i) {
        co_await self.sleep(Duration::ms(1));
        log.emplace_back((self.world().now() - Instant::zero()).count_ns(), 'b');
      }
    }(b, log));
    w.at(at_ms(200), [&] { w.pause(a.id(), Duration::ms(30)); });
    w.at(at_ms(210), [&] { w.set_drift_ppb(a.id(), 40'000'000); });
    w.at(at_ms(400), [&] { w.set_drift_ppb(a.id(), -30'000'000); });
    w.run_until(at_ms(60'000));
    return std::tuple{log, w.events_run(), w.pending_events()};
  };
  const auto [normal, normal_events, normal_pending] = run(false);
  const auto [lean, lean_events, lean_pending] = run(true);
  CHECK(normal.size() == 900);
  CHECK(lean == normal);
  CHECK(lean_events < normal_events);  // the stale timeouts were never queued
  CHECK(lean_events + 250 <= normal_events);
  CHECK(lean_pending <= normal_pending);
}

}  // namespace timer_test
