// Redisson's RLock: a waiter that crashes and restarts is a new instance; the
// unlock message it hears after the restart resumes only its new wait.
#include <doctest/doctest.h>

#include "tests/support.hpp"

namespace redisson_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// client1 holds the lock for 2 s; client2 waits for it from 100 ms (subscribed
// to the lock's channel), crashes at 1 s and restarts at 2.003 s. Its new
// acquire subscribes again at 2.006 s, and client1's unlock message reaches it
// at 2.008 s while its second tryLock is on the wire (every link: 1 ms).
Scenario restarted_redisson_waiter() {
  return parse_scenario(R"(
title = "a Redisson waiter crashes and restarts"
source = "redisson_test.cpp"
about = "client2 waits for client1's lock, crashes, restarts and waits again."
seed = 1
duration = "10s"
[lock]
algorithm = "watchdog"
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[client]]
name = "client1"
work = "2s"
[[client]]
name = "client2"
start = "100ms"
work = "100ms"
[[fault]]
at = "1s"
kind = "crash"
target = "client2"
[[fault]]
at = "2.003s"
kind = "restart"
target = "client2"
)",
                        "restarted-redisson-waiter.toml");
}

}  // namespace

TEST_CASE("a Redisson waiter that crashes and restarts takes the lock when the holder unlocks, without resuming its destroyed wait") {
  const RunResult r = run_scenario(restarted_redisson_waiter());
  const auto restarted = events_of(r, Ev::Restarted, "client2");
  const auto acquired = events_of(r, Ev::Acquired, "client2");
  REQUIRE(restarted.size() == 1);
  REQUIRE(acquired.size() == 1);
  // The case that matters: the unlock message arrives after the restart,
  // before the restarted client's own tryLock answers.
  bool heard_unlock = false;
  for (const TraceEvent* e : events_of(r, Ev::Delivered, "client2"))
    if (e->detail == "\"unlocked lock\"" && e->at > restarted[0]->at && e->at < acquired[0]->at) heard_unlock = true;
  CHECK(heard_unlock);
  CHECK(acquired[0]->at > events_of(r, Ev::Released, "client1").at(0)->at);
  CHECK(events_of(r, Ev::Released, "client2").size() == 1);
  CHECK(events_of(r, Ev::StorageWrite).back()->value == 2);
  CHECK(r.verdict.empty());
}

}  // namespace redisson_test
