// The text report's words: counts agree with their nouns, a failed release
// is told by what happened to it, repetition is folded, the stamps line up,
// the verdict of many violations is summed up, and the JSON tells the story.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "reports/report.hpp"
#include "harness/counted.hpp"
#include "tests/support.hpp"

namespace report_test {

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
  for (const Step& s : narrate(r))
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

namespace {

std::vector<std::string> story_lines(const std::string& text) {
  std::vector<std::string> out;
  const auto from = text.find("What happened"), to = text.find("\nVerdict:");
  std::istringstream in(text.substr(from, to - from));
  std::string l;
  std::getline(in, l);
  while (std::getline(in, l))
    if (!l.empty()) out.push_back(l);
  return out;
}

// Ten workers whose work outlasts the lease: the key expires under each of
// them in turn, so the run has dozens of overlaps and stale writes.
Scenario ten_workers() {
  return parse_scenario(R"(
title = "10 workers, a lease shorter than the work"
source = "report_test.cpp"
about = "Each worker's work outlasts its lease."
seed = 3
duration = "3s"
[lock]
algorithm = "redis-single"
ttl = "100ms"
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[client]]
name = "worker"
count = 10
start = "0ms..300ms"
work = "150ms..300ms"
repeat = 2
think = "0ms..100ms"
)",
                        "ten-workers.toml");
}

}  // namespace

TEST_CASE("a retry loop is told in one line, and the story still tells the restart, the grant and the ending") {
  const RunResult r = run_scenario(catalogue("scenarios/redis/redlock-restart-delayed.toml"));
  const std::string text = text_report(r);
  const auto lines = story_lines(text);
  INFO(text);
  CHECK(lines.size() < 40);
  CHECK(text.find("client2 tries and fails") != std::string::npos);
  CHECK(text.find("too few nodes: 2 of 5 granted it (3 needed), each time") != std::string::npos);
  CHECK(text.find("not told here") == std::string::npos);
  const auto restart = text.find("redis3 restarts"), grant = text.find("client2 acquires the lock on redis3,redis4,redis5"),
             end = text.find("client2's release is confirmed");
  REQUIRE(restart != std::string::npos);
  REQUIRE(grant != std::string::npos);
  REQUIRE(end != std::string::npos);
  CHECK(restart < grant);
  CHECK(grant < end);
  // --full: every step, one line each.
  const auto full = story_lines(text_report(r, {.full = true}));
  CHECK(full.size() == narrate(r).size());
  CHECK(full.size() > 300);
}

TEST_CASE("the story's stamps share one unit and one precision, and the text after them starts in one column") {
  const RunResult r = run_scenario(catalogue("scenarios/redis/redlock-restart-delayed.toml"));
  const auto lines = story_lines(text_report(r, {.full = true}));
  REQUIRE(lines.size() > 10);
  const auto column = [](const std::string& l) { return l.find("s  ") + 3; };
  for (const std::string& l : lines) {
    INFO(l);
    CHECK(column(l) == column(lines.front()));
    const auto dot = l.find('.', l.find(". ") + 2);
    CHECK(l.substr(dot + 1, 4).find('s') == 3);  // three decimals: the steps here are a millisecond apart at least
  }
  // Within a second: milliseconds, truncated to the decimals the closest two steps need.
  CHECK(StoryClock({Instant::from_ns(0), Instant::from_ns(250'000)})(Instant::from_ns(250'000)) == "0.2ms");
  CHECK(StoryClock({Instant::from_ns(2'000'000'000), Instant::from_ns(2'000'100'000)})(Instant::from_ns(2'000'100'000)) == "2.0001s");
  CHECK(StoryClock({Instant::from_ns(0), Instant::from_ns(2'000'100'000)})(Instant::from_ns(2'000'100'000)) == "2.000s");
  CHECK(StoryClock({Instant::from_ns(5), Instant::from_ns(9), Instant::from_ns(2'000'000'000)})(Instant::from_ns(9)) == "0.000000s");
}

TEST_CASE("a lock value is told by its first four hex digits") {
  const std::string text = text_report(run_scenario(catalogue("scenarios/redis/redlock-restart-delayed.toml")), {.full = true});
  CHECK(text.find("SET lock 9925… NX PX 30000") != std::string::npos);
  CHECK(text.find("9925a3eb") == std::string::npos);
}

TEST_CASE("a story longer than the page keeps its beginning, the steps the verdict rests on and its ending") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  const std::string text = text_report(r, {.max_lines = 5});
  INFO(text);
  CHECK(text.find("not told here") != std::string::npos);
  CHECK(text.find("client1 asks for the lock") != std::string::npos);                      // the beginning
  CHECK(text.find("client1 is paused for 40s") != std::string::npos);                      // what the overlap rests on
  CHECK(text.find("redis1 expires 'lock'") != std::string::npos);
  CHECK(text.find("client2 acquires the lock") != std::string::npos);
  CHECK(text.find("client1's release removes nothing") != std::string::npos);              // the ending
}

TEST_CASE("many violations are summed up per kind before the first few of each are listed") {
  const RunResult r = run_scenario(ten_workers());
  const auto overlaps = std::count_if(r.violations.begin(), r.violations.end(), [](const Violation& v) { return v.kind == ViolationKind::Overlap; });
  REQUIRE(overlaps > 10);
  const std::string text = text_report(r);
  INFO(text);
  const std::string verdict = text.substr(text.find("\nVerdict:"));
  CHECK(verdict.find("overlap ×" + std::to_string(overlaps)) != std::string::npos);
  CHECK(verdict.find("among 10 clients") != std::string::npos);
  CHECK(verdict.find("The first 3 of each kind:") != std::string::npos);
  CHECK(verdict.find("more violations (--full lists them all)") != std::string::npos);
  CHECK(std::count(verdict.begin(), verdict.end(), '\n') < 20);
  const std::string full = text_report(r, {.full = true});
  CHECK(std::count(full.begin(), full.end(), '\n') > std::count(text.begin(), text.end(), '\n') + 30);
}

TEST_CASE("the JSON report tells the story as records with the events' fields") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  const auto j = nlohmann::json::parse(json_report(r));
  REQUIRE(j.contains("story"));
  CHECK(j["story_complete"] == true);
  CHECK(j["story"].size() == narrate(r).size());
  bool grant = false;
  for (const auto& step : j["story"]) {
    for (const char* key : {"at_ns", "process", "kind", "text", "fields"}) CHECK_MESSAGE(step.contains(key), key);
    if (step["kind"] == "acquired" && step["process"] == "client2") {
      grant = true;
      CHECK(step["at_ns"] == 31'002'000'000);
      CHECK(step["fields"]["detail"] == "redis1");
      CHECK(step["fields"]["key"].get<std::string>().size() == 40);  // the whole value, for tools
      CHECK(step["text"].get<std::string>().rfind("client2 acquires the lock on redis1", 0) == 0);
    }
  }
  CHECK(grant);
}

TEST_CASE("a promoted replica says how many keys it holds, and none is worth saying") {
  const RunResult r = run_scenario(catalogue("scenarios/redis/failover-async-replication.toml"));
  CHECK(step_of(r, "redis2 is promoted") == "redis2 is promoted to master holding no keys at all: client1's lock is not on it");
}

TEST_CASE("a failed attempt says why: too few nodes, or a validity used up") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/redlock-pause-in-flight.toml"));
  std::vector<std::string> failed;
  for (const Step& s : narrate(r))
    if (s.text.find("'s attempt fails") != std::string::npos) failed.push_back(s.text);
  REQUIRE(failed.size() >= 2);
  CHECK(failed[0].find("client1's attempt fails: its validity is used up: 5 of 5 nodes granted it, but the time left, -") == 0);
  CHECK(failed[0].find(", is not more than 0; it unlocks every node") != std::string::npos);
  CHECK(failed[1] == "client1's attempt fails: too few nodes: 0 of 5 granted it (3 needed); it unlocks every node");
}

TEST_CASE("a ZooKeeper or etcd lock is told as lasting with its session or lease, not as having no expiry") {
  for (const char* path : {"scenarios/zookeeper/session-expiry-pause.toml", "scenarios/etcd/pause-after-lock.toml"}) {
    INFO(path);
    const RunResult r = run_scenario(catalogue(path));
    const std::string text = text_report(r);
    CHECK(text.find("no expiry") == std::string::npos);
    CHECK(text.find(r.scenario->lock.algorithm == "etcd" ? "the lock lasts as long as its lease (TTL 10s, kept alive by client1)"
                                                         : "the lock lasts as long as its session (timeout 10s)") != std::string::npos);
  }
  // A SETNX lock with no TTL has none.
  CHECK(text_report(run_scenario(catalogue("scenarios/redis/setnx-no-ttl-crash.toml"))).find("the lock has no expiry") != std::string::npos);
}

TEST_CASE("antirez's check-and-set story says the current holder's work was refused, not lost") {
  const RunResult r = run_scenario(catalogue("scenarios/antirez/lock-value-cas.toml"));
  CHECK(step_of(r, "client2 is told") == "client2 is told its write was rejected: its work is refused, not lost (client2 knows it did not happen)");
  const std::string text = text_report(r);
  CHECK(text.find("client2's work was refused, not lost: storage rejected its write, and client2 was told so at 41.008s — and client2 was the "
                  "holder granted last") != std::string::npos);
}

TEST_CASE("a story with thousands of violations still fits a page: it keeps the steps of the violations it lists") {
  Scenario s = ten_workers();
  s.duration = Duration::s(120);
  for (ClientConfig& c : s.clients) c.repeat = kForever;
  const RunResult r = run_scenario(s);
  REQUIRE(r.violations.size() > 1000);
  CHECK(told_violations(r.violations).size() <= 3 * r.verdict.size());
  const std::string text = text_report(r);
  CHECK(story_lines(text).size() < 250);
  CHECK(text.find("not told here") != std::string::npos);
}

}  // namespace report_test
