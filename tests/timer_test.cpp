// Timers, calls and wakeups: a call's timeout on the caller's clock, timers due
// together, cancelled timeouts that leave the queue, a wakeup across coroutines.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "tests/kernel_support.hpp"

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
  Wakeup wake(p);
  Instant woke;
  p.spawn([](Probe& self, Wakeup& wake, Instant& woke) -> Task<void> {
    co_await wake.wait();
    woke = self.world().now();
  }(p, wake, woke));
  p.spawn([](Probe& self, Wakeup& wake) -> Task<void> {
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
      req.key = "k";
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
