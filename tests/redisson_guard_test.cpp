// Redisson's replication guard (CommandAsyncService.syncedEval at
// redisson-4.7.0): the lock script and WAIT in one batch, and
// checkLockSyncedSlaves failing a lock no replica acknowledged; and Redis's
// WAIT itself (redis 7.0.15 replication.c waitCommand).
#include <doctest/doctest.h>

#include <string>

#include "tests/support.hpp"

namespace redisson_guard_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// redis1 with one replica (10 ms behind) under a Sentinel; client1 asks at
// 100 ms for a 1 s job. `cut`: redis1 and redis2 cannot reach each other
// from 50 ms, so no replica can acknowledge anything.
Scenario guarded(const std::string& guard, bool cut) {
  std::string text = R"(
title = "a Redisson lock on a replicated master"
source = "redisson_guard_test.cpp"
about = "client1 locks redis1, whose replica is redis2."
seed = 1
duration = "30s"
[lock]
algorithm = "watchdog"
replication_guard = ")" + guard + R"("
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
replica_of = "redis1"
replication_lag = "10ms"
[sentinel]
down_after = "30s"
[[client]]
name = "client1"
start = "100ms"
work = "1s"
)";
  if (cut) text += R"(
[[fault]]
at = "50ms"
kind = "partition"
groups = [["redis1"], ["redis2"]]
)";
  return parse_scenario(text, "guarded.toml");
}

}  // namespace

TEST_CASE("Redis's WAIT answers once the replica has acknowledged the client's write, and Redisson's lock holds") {
  const RunResult r = run_scenario(guarded("check", false));
  const auto acquired = events_of(r, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  // The probe (WAIT 0 0), then the script and WAIT 1 1000 in one batch.
  CHECK(has_command(r, "redis1", "WAIT 0 0 -> (integer) 1"));  // the replica has acknowledged offset 0
  CHECK(has_command(r, "redis1", "WAIT 1 1000 -> blocks"));
  CHECK(has_command(r, "redis1", "WAIT 1 1000 -> (integer) 1"));
  CHECK(has_command(r, "redis2", "REPLCONF") == false);  // GETACK is in the stream, not a command
  // GETACK rides 10 ms of replication lag, the ACK 1 ms back: far less than WAIT's 1 s.
  CHECK(acquired[0]->at < Instant::zero() + Duration::ms(200));
  CHECK(events_of(r, Ev::StorageWrite).size() == 1);
  CHECK(r.verdict.empty());
}

TEST_CASE("with no replica acknowledging, WAIT times out at 1 s with 0: Redisson unlocks, retries 4 times, then fails the lock") {
  const RunResult r = run_scenario(guarded("check", true));
  CHECK(events_of(r, Ev::Acquired, "client1").empty());
  CHECK(events_of(r, Ev::AcquireFailed, "client1").size() == 1);
  // The first try and retryAttempts = 4 more, each unlocked; then the exception.
  const auto failed = events_of(r, Ev::AttemptFailed, "client1");
  REQUIRE(failed.size() == 5);
  for (const TraceEvent* e : failed) CHECK(e->detail.find("NoSyncedSlavesException") != std::string::npos);
  CHECK(failed[4]->detail.find("gives up") != std::string::npos);
  // Retries come 1-2 s after the unlock: after the first WAIT's 1 s and the unlock's own.
  CHECK(failed[1]->at - failed[0]->at >= Duration::ms(2000));
  CHECK(has_command(r, "redis1", "WAIT 1 1000 -> (integer) 0"));
  // handleNoSync's unlock removed the key the script had set.
  CHECK(has_command(r, "redis1", "EVAL redisson-unlock"));
  CHECK(events_of(r, Ev::StorageWrite).empty());
}

TEST_CASE("with checkLockSyncedSlaves off, the same lock is held after WAIT's 1 s timeout") {
  const RunResult r = run_scenario(guarded("wait", true));
  const auto acquired = events_of(r, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  CHECK(acquired[0]->at >= Instant::zero() + Duration::ms(1100));  // the batch's reply waited for WAIT
  CHECK(has_command(r, "redis1", "WAIT 1 1000 -> (integer) 0"));
}

TEST_CASE("Redisson before 3.12.5 sends no WAIT at all") {
  const RunResult r = run_scenario(guarded("none", true));
  REQUIRE(events_of(r, Ev::Acquired, "client1").size() == 1);
  CHECK_FALSE(has_command(r, "redis1", "WAIT"));
  CHECK(events_of(r, Ev::Acquired, "client1")[0]->at < Instant::zero() + Duration::ms(110));
}

}  // namespace redisson_guard_test
