// Faults on a live run's clients (live/live_run.cpp, live/external/), as the
// simulator applies them: a clock-drift fault slows a built-in client's own
// clocks, and a crashed real library takes no further fault. Each run is a
// few seconds of real time against a real redis-server on loopback.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "live/live_run.hpp"

namespace live_faults_test {

using namespace locksim;
using namespace locksim::live;

// The events of `kind` at `process`.
std::vector<const TraceEvent*> events(const RunResult& r, Ev kind, const std::string& process) {
  std::vector<const TraceEvent*> out;
  const ProcId p = *r.world->trace().find(process);
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == kind && e.process == p) out.push_back(&e);
  return out;
}

// Catalogue R10 (scenarios/redis/redlock-drift.toml) with the clocks the
// other way round: the nodes keep true time and client1's clocks run slow
// from a clock-drift fault at 0. client1 works 9.7 s by its own clock; at
// 10% slow that is 10.8 s of true time, past the 10 s its keys live, and
// client2 takes the lock at 10.3 s, before client1 writes. At 0.5% slow
// client1 writes at 9.75 s, inside the drift allowance.
std::string slow_client(const std::string& drift_ppm) {
  return R"(title = "Redlock and a slow client clock"
source = "tests/live_faults_test.cpp"
about = "R10 with the drift on the client: client1's clocks run slow and it writes after its keys expired."
seed = 1
duration = "20s"

[lock]
algorithm = "redlock"
ttl = "10s"
request_timeout = "50ms"

[network]
delay = "1ms"

[[node]]
name = "redis1"
[[node]]
name = "redis2"
[[node]]
name = "redis3"

[[client]]
name = "client1"
work = "9.7s"

[[client]]
name = "client2"
start = "9.6s"
work = "1s"

[[fault]]
at = "0s"
kind = "clock-drift"
target = "client1"
drift_ppm = )" + drift_ppm + R"(

[[fault]]
at = "0s"
kind = "partition"
groups = [["client1"], ["redis3"]]

[[fault]]
at = "0s"
kind = "partition"
groups = [["client2"], ["redis2"]]
)";
}

RunResult live(const std::string& text, std::int64_t scale, bool details = false) {
  LiveOptions o;
  o.time_scale = scale;
  o.details = details;
  return run_live(parse_scenario(text, "live-faults.toml"), o);
}

TEST_CASE("a live client whose clock-drift fault slows its clocks 10% writes after its keys expired, as simulated, and 0.5% does not") {
  const std::string fast = slow_client("-100000"), slight = slow_client("-5000");
  const RunResult simulated = run_scenario(parse_scenario(fast, "live-faults.toml"));
  REQUIRE(simulated.verdict.count(ViolationKind::Overlap) == 1);
  const RunResult r = live(fast, 10);
  CHECK(r.verdict == simulated.verdict);
  const auto drift = events(r, Ev::ClockDrift, "client1");
  REQUIRE(drift.size() == 1);
  CHECK(drift[0]->value == -100'000'000);

  REQUIRE(run_scenario(parse_scenario(slight, "live-faults.toml")).verdict.empty());
  CHECK(live(slight, 10).verdict.empty());
}

// A real redis-py client crashed at its read, and a second crash fault on it
// later: the simulator takes no fault on a process that is down
// (sim/world.cpp, World::crash), and the live run does as it does.
TEST_CASE("a crashed real library takes no later fault: one Crashed event, as the simulator records") {
  const std::string text = R"(title = "a real library crashed, and crashed again"
source = "tests/live_faults_test.cpp"
about = "client1 crashes at its read and again at 1.5 s; client2 takes the lock and writes."
seed = 1
duration = "20s"

[lock]
library = "redis-py@4.3.4"
ttl = "1s"

[[node]]
name = "redis1"

[[client]]
name = "client1"
work = "200ms"

[[client]]
name = "client2"
start = "1200ms"
work = "200ms"

[[fault]]
on = "client1 read"
kind = "crash"
target = "client1"

[[fault]]
at = "1500ms"
kind = "crash"
target = "client1"
)";
  const RunResult simulated = run_scenario(parse_scenario(text, "live-faults.toml"));
  CHECK(events(simulated, Ev::Crashed, "client1").size() == 1);
  const RunResult r = live(text, 1, true);
  CHECK(r.verdict.empty());
  CHECK(events(r, Ev::Crashed, "client1").size() == 1);
  CHECK(events(r, Ev::JobDone, "client2").size() == 1);
}

}  // namespace live_faults_test
