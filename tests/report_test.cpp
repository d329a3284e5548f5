// The text report's words: counts agree with their nouns, and a failed
// release is told by what happened to it.
#include <doctest/doctest.h>

#include "reports/report.hpp"
#include "judge/words.hpp"
#include "tests/support.hpp"

using namespace locksim;
using namespace locksim::testing;

namespace {

// One client; the message carrying its release to redis1 is lost, so the
// release times out (the key expires on its own later).
Scenario lost_release() {
  return parse_scenario(R"(
title = "a lost release"
source = "report_test.cpp"
about = "client1's release never reaches redis1."
seed = 1
duration = "10s"
[lock]
algorithm = "redis-single"
ttl = "5s"
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[client]]
name = "client1"
work = "100ms"
[[fault]]
on = "client1 releasing"
kind = "drop"
from = "client1"
to = "redis1"
count = 1
)",
                        "lost-release.toml");
}

std::string step_of(const RunResult& r, const std::string& start) {
  for (const Step& s : narrate(r.world->trace()))
    if (s.text.rfind(start, 0) == 0) return s.text;
  return "";
}

}  // namespace

TEST_CASE("a count is followed by its noun in the singular for one and the plural otherwise") {
  CHECK(counted(0, "event") == "0 events");
  CHECK(counted(1, "watch notification") == "1 watch notification");
  CHECK(counted(2, "watch notification") == "2 watch notifications");
  CHECK(counted(1, "process", "processes") == "1 process");
  CHECK(counted(3, "process", "processes") == "3 processes");
}

TEST_CASE("the text report of a one-client one-acquisition run uses singulars") {
  const std::string text = text_report(run_scenario(lost_release()));
  CHECK(text.find("1 client, 1 node") != std::string::npos);
  CHECK(text.find("1 acquisition\n") != std::string::npos);
  CHECK(text.find("1 acquisitions") == std::string::npos);
  CHECK(text.find("1 clients") == std::string::npos);
}

TEST_CASE("the text report counts one watch notification in the singular") {
  // The ZooKeeper waiter is notified once, when the holder's node goes.
  const RunResult r = run_scenario(catalogue("scenarios/zookeeper/session-expiry-pause.toml"));
  std::size_t notifications = 0;
  for (const TraceEvent& e : r.world->trace().events()) notifications += e.kind == Ev::Sent && e.detail.rfind("NOTIFY ", 0) == 0;
  REQUIRE(notifications >= 1);
  const std::string text = text_report(r);
  CHECK(text.find(counted(notifications, "watch notification") + " sent by the service") != std::string::npos);
  CHECK(text.find("1 watch notifications") == std::string::npos);
}

TEST_CASE("a release that times out is told as unanswered, not as a lock no longer its own") {
  const RunResult r = run_scenario(lost_release());
  REQUIRE(events_of(r, Ev::ReleaseFailed, "client1").size() == 1);
  CHECK(step_of(r, "client1's release") == "client1's release is not confirmed: redis1 did not answer in time");
}

TEST_CASE("a release that finds another's key is told as removing nothing") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  CHECK(step_of(r, "client1's release") == "client1's release removes nothing: the lock was no longer its own");
}

TEST_CASE("a release the service refuses is told with the service's answer") {
  // client1's session expired while it was paused: ZooKeeper refuses the delete.
  const RunResult r = run_scenario(catalogue("scenarios/zookeeper/session-expiry-pause.toml"));
  CHECK(step_of(r, "client1's release") == "client1's release is not confirmed: zk refuses it (ERROR SESSION_EXPIRED)");
}

TEST_CASE("a Redlock release that reaches some nodes and not others names each") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/redlock-clock-jump.toml"));
  const std::string step = step_of(r, "client1's release");
  CHECK(step.find("redis4 and redis5 did not answer in time") != std::string::npos);
  CHECK(step.find("it removed its key on redis1 and redis2") != std::string::npos);
}
