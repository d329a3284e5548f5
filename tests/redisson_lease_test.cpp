// Redisson's leases as the client sees them (redisson-4.7.0): the watchdog's
// renewals extend the client's own belief (RenewalTask, LockTask); the lock
// hash's re-entry count (RedissonLock.java:314-322, 354-366); and
// RedissonMultiLock / RedissonRedLock's passes and lock(leaseTime)
// (RedissonMultiLock.java:242-264, 306-388).
#include <doctest/doctest.h>

#include <string>

#include "reports/report.hpp"
#include "sim/servers/redis/node.hpp"
#include "tests/kernel_support.hpp"
#include "tests/support.hpp"

namespace redisson_lease_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// client1 takes the watchdog lock at once, works 35 s and checks its lease
// on its own clock before writing. `pause_at`: a pause of 5 s from then.
Scenario watchdog_job(const std::string& pause_at) {
  std::string text = R"(
title = "a long job under Redisson's watchdog"
source = "redisson_lease_test.cpp"
about = "client1 works 35 s; the watchdog renews every 10 s."
seed = 1
duration = "60s"
[lock]
algorithm = "watchdog"
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[client]]
name = "client1"
work = "35s"
check_before_write = true
)";
  if (!pause_at.empty()) text += "[[fault]]\nat = \"" + pause_at + "\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"5s\"\n";
  return parse_scenario(text, "watchdog-job.toml");
}

}  // namespace

TEST_CASE("after watchdog renewals at 10, 20 and 30 s, a job that checks its lease at 35 s still writes") {
  const RunResult r = run_scenario(watchdog_job(""));
  const auto renewals = events_of(r, Ev::Renewed, "client1");
  REQUIRE(renewals.size() >= 3);
  // Each renewal: the lease counted from when it was sent (one link, 1 ms, before it was applied).
  CHECK(renewals[2]->value == (renewals[2]->mono - Duration::ms(2) + Duration::s(30)).ns());
  CHECK(events_of(r, Ev::Lost, "client1").empty());
  REQUIRE(events_of(r, Ev::Checked, "client1").size() == 1);
  CHECK(events_of(r, Ev::Checked, "client1")[0]->value > Duration::s(4).count_ns());
  CHECK(events_of(r, Ev::Wrote, "client1").size() == 1);
  // The narrative follows the renewals.
  bool told = false;
  for (const Step& s : narrate(r))
    if (s.text.find("renews its lease") != std::string::npos && s.text.find("valid until 60.0") != std::string::npos)
      told = true;
  CHECK(told);
}

TEST_CASE("a renewal whose reply waits out a pause is told when the node applied it") {
  // The third renewal leaves at 30.006 s (each period starts after the last
  // reply) and reaches redis1 at 30.007 s; client1 is paused from 30.0065 s,
  // so it hears the reply only at 35.0065 s.
  const RunResult r = run_scenario(watchdog_job("30.0065s"));
  const auto renewals = events_of(r, Ev::Renewed, "client1");
  REQUIRE(renewals.size() >= 3);
  CHECK(renewals[2]->at >= Instant::zero() + Duration::s(35));
  bool told = false;
  for (const Step& s : narrate(r))
    if (s.event == renewals[2]) {
      told = true;
      CHECK(s.at < Instant::zero() + Duration::ms(30'010));
      CHECK(s.text.find("hears of it only at") != std::string::npos);
    }
  CHECK(told);
}

TEST_CASE("Redisson's lock hash counts re-entries: an unlock decrements and only the last one deletes") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  const auto run = [&](redis::Op op, const std::string& value) {
    return redis.execute({.op = op, .key = "lock", .value = value, .px = Duration::s(30)}, kNoProc);
  };
  CHECK(run(redis::Op::RedissonTryLock, "a:1").is_nil());
  CHECK(run(redis::Op::RedissonTryLock, "a:1").is_nil());  // re-entered: HINCRBY 1 again
  CHECK(redis.keyspace().at("lock").holds == 2);
  CHECK(run(redis::Op::RedissonTryLock, "b:1").integer > 0);  // another holder: the PTTL
  CHECK(run(redis::Op::RedissonUnlock, "b:1").is_nil());
  CHECK(run(redis::Op::RedissonUnlock, "a:1").integer == 0);  // 2 -> 1: still held
  CHECK(redis.keyspace().count("lock") == 1);
  CHECK(run(redis::Op::RedissonUnlock, "a:1").integer == 1);  // 1 -> 0: deleted
  CHECK(redis.keyspace().count("lock") == 0);
}

namespace {

// RedissonRedLock on three nodes. client2 holds all three from the start
// for `hold`; client1 asks at 100 ms with tryLock(3 s), 1 s per lock.
Scenario redlock_pair(const std::string& hold, const std::string& wait) {
  std::string text = R"(
title = "two RedissonRedLock clients"
source = "redisson_lease_test.cpp"
about = "client2 holds the RedLock; client1 waits for it."
seed = 1
duration = "20s"
[lock]
algorithm = "redlock"
flavour = "redisson"
ttl = "10s"
)";
  if (!wait.empty()) text += "wait_time = \"" + wait + "\"\n";
  text += R"(
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
[[node]]
name = "redis3"
[[client]]
name = "client2"
work = ")" + hold + R"("
[[client]]
name = "client1"
start = "100ms"
work = "100ms"
)";
  return parse_scenario(text, "redlock-pair.toml");
}

}  // namespace

TEST_CASE("RedissonRedLock's tryLock starts a new pass while its wait time lasts") {
  // Pass 1: redis1 and redis2 each time out after 1 s (2.1 s): no failure
  // left, so client1 starts again from redis1, which client2 frees at 2.5 s.
  const RunResult r = run_scenario(redlock_pair("2.5s", "3s"));
  const auto acquired = events_of(r, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  CHECK(acquired[0]->at > Instant::zero() + Duration::ms(2500));
  bool restarted = false;
  for (const TraceEvent* e : events_of(r, Ev::AttemptFailed, "client1"))
    if (e->detail.find("starts again") != std::string::npos) restarted = true;
  CHECK(restarted);
  CHECK(r.verdict.empty());
}

TEST_CASE("RedissonRedLock's lock(leaseTime) takes each lock for twice its wait, then PEXPIREs every one to the lease") {
  const RunResult r = run_scenario(redlock_pair("100ms", ""));
  REQUIRE(events_of(r, Ev::Acquired, "client2").size() == 1);
  for (const char* node : {"redis1", "redis2", "redis3"}) {
    CHECK(has_command(r, node, "PEXPIRE lock 10000 -> (integer) 1"));
    // The trylock's lease: 2 x a wait drawn from [4.5 s, 10 s), never the lease itself.
    bool doubled = false;
    for (const TraceEvent* e : events_of(r, Ev::Command, node)) {
      const auto at = e->detail.find("EVAL redisson-trylock lock ");
      if (at == std::string::npos) continue;
      const auto px_at = e->detail.find(' ', at + 27);
      const long px = std::stol(e->detail.substr(px_at + 1));
      CHECK(px >= 9000);
      CHECK(px < 20000);
      doubled = true;
    }
    CHECK(doubled);
  }
}

}  // namespace redisson_lease_test
