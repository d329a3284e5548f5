// The event queue: events in scheduled order at one instant, and a run whose
// processes never let time move ends as a spent budget.
#include <doctest/doctest.h>

#include <vector>

#include "tests/kernel_support.hpp"

namespace event_queue_test {

using namespace locksim;
using namespace locksim::testing;

TEST_CASE("events at the same instant run in the order they were scheduled") {
  World w(1);
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) w.at(at_ms(5), [&order, i] { order.push_back(i); });
  w.at(at_ms(1), [&order] { order.push_back(-1); });
  w.run_until(at_ms(10));
  CHECK(order == std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("processes resuming each other forever at one instant end the run as a spent budget") {
  World w(1);
  auto& p = w.add<Probe>("p");
  p.spawn([](Probe& self) -> Task<void> {
    for (;;) co_await self.yield();
  }(p));
  CHECK_FALSE(w.run_until(at_ms(10)));
  CHECK(w.now() == Instant::zero());
}

}  // namespace event_queue_test
