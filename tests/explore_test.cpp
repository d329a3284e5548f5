// The explorer: runs are functions of their seed, jobs and shards do not
// change the summary, what it finds shrinks to a file that replays it.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "harness/explore.hpp"
#include "reports/explore_output.hpp"
#include "harness/explore_reference.hpp"
#include "harness/explore_schedule.hpp"
#include "harness/scenario_writer.hpp"
#include "harness/shrink.hpp"
#include "tests/support.hpp"

namespace explore_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

bool same(const ExploreSummary& a, const ExploreSummary& b) {
  if (a.runs != b.runs || a.violating != b.violating || a.budget_exhausted != b.budget_exhausted || a.by_kind != b.by_kind)
    return false;
  if (a.anchors != b.anchors || a.lengths != b.lengths) return false;
  for (const auto& [k, r] : a.first)
    if (!b.first.count(k) || b.first.at(k).seed != r.seed || b.first.at(k).index != r.index) return false;
  return a.first.size() == b.first.size();
}

}  // namespace

TEST_CASE("every catalogue scenario written back as TOML runs to the same trace") {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(LOCKSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    const Scenario original = load_scenario(entry.path().string());
    const Scenario again = parse_scenario(to_toml(original), "written.toml");
    INFO(entry.path().string());
    CHECK(run_scenario(original).trace_hash == run_scenario(again).trace_hash);
    CHECK(again.expect.violations == original.expect.violations);
  }
}

TEST_CASE("a run's schedule is a function of its seed alone") {
  const Scenario base = catalogue("scenarios/kleppmann/redlock-clock-jump.toml");
  const ExploreOptions o;
  CHECK(to_toml(with_random_faults(base, 42, o)) == to_toml(with_random_faults(base, 42, o)));
  CHECK(to_toml(with_random_faults(base, 42, o)) != to_toml(with_random_faults(base, 43, o)));
  CHECK(run_seed(1, 7) == run_seed(1, 7));
  CHECK(run_seed(1, 7) != run_seed(2, 7));
}

TEST_CASE("one schedule drawer drawing run after run gives each run the schedule and notes a fresh draw gives it") {
  // Explore's workers keep one ScheduleDrawer (and one scenario) for all
  // their runs: nothing of one run's draw may reach the next.
  for (const char* file : {"scenarios/kleppmann/redlock-clock-jump.toml", "scenarios/redis/failover-async-replication.toml"})
    for (const bool keep : {false, true}) {
      INFO(file << (keep ? " --keep-faults" : ""));
      const Scenario base = catalogue(file);
      ExploreOptions o;
      o.keep_faults = keep;
      o.max_faults = 6;
      const Reference ref = reference_run(base, o);
      ScheduleDrawer drawer(base, o, ref);
      Scenario reused = unfaulted(base, o);
      const std::vector<FaultSpec> kept = reused.faults;
      for (std::uint64_t i = 0; i < 150; ++i) {
        const std::uint64_t seed = run_seed(1, i);
        DrawNotes fresh_notes, reused_notes;
        const Scenario fresh = with_random_faults(base, seed, o, ref, &fresh_notes);
        reused.seed = seed;
        reused.faults = kept;
        drawer.draw(seed, reused.faults, &reused_notes);
        REQUIRE(to_toml(reused) == to_toml(fresh));
        CHECK(reused_notes.anchors == fresh_notes.anchors);
        CHECK(reused_notes.lengths == fresh_notes.lengths);
      }
    }
}

TEST_CASE("the same base seed gives the same summary with 1 or 2 jobs, and with 2 shards added up") {
  const Scenario base = catalogue("scenarios/kleppmann/redlock-clock-jump.toml");
  ExploreOptions o;
  o.runs = 2000;
  const ExploreSummary one = explore(base, o);
  o.jobs = 2;
  const ExploreSummary two = explore(base, o);
  CHECK(same(one, two));
  o.shard_count = 2;
  ExploreSummary merged;
  for (std::uint64_t k = 0; k < 2; ++k) {
    o.shard_index = k;
    const ExploreSummary part = explore(base, o);
    merged.runs += part.runs;
    merged.violating += part.violating;
    merged.budget_exhausted += part.budget_exhausted;
    for (const auto& [kind, n] : part.by_kind) merged.by_kind[kind] += n;
    for (const auto& [kind, r] : part.first)
      if (!merged.first.count(kind) || r.index < merged.first.at(kind).index) merged.first[kind] = r;
    merged.add_notes(part);
  }
  CHECK(same(one, merged));
}

TEST_CASE("exploring K4 without its faults finds an overlap, and shrinks it to a replayable file of at most 3 faults") {
  const Scenario base = catalogue("scenarios/kleppmann/redlock-clock-jump.toml");
  ExploreOptions o;
  o.runs = 2000;
  const ExploreSummary s = explore(base, o);
  REQUIRE(s.first.count(ViolationKind::Overlap) == 1);
  const Scenario failing = with_random_faults(base, s.first.at(ViolationKind::Overlap).seed, o);
  const ShrinkResult shrunk = shrink(failing, ViolationKind::Overlap);
  CHECK(shrunk.scenario.faults.size() <= 3);
  CHECK(shrunk.scenario.faults.size() < failing.faults.size() + 1);
  // Written and read back, it replays with its verdict.
  const Scenario file = parse_scenario(to_toml(shrunk.scenario), "found.toml");
  const RunResult replay = run_scenario(file);
  CHECK(replay.verdict.count(ViolationKind::Overlap) == 1);
  CHECK(replay.as_expected());
}

TEST_CASE("a fault the shrinker moves to the last millisecond is not rounded up to the end of the run") {
  // The restart does not matter to the stuck lock: moved as late as it can
  // come, it lands in the run's last millisecond, which rounds up to 60 s.
  Scenario s = catalogue("scenarios/redis/setnx-no-ttl-crash.toml");
  FaultSpec restart;
  restart.kind = FaultKind::Restart;
  restart.at = Duration::s(5);
  restart.target = "client1";
  s.faults.push_back(restart);
  REQUIRE(run_scenario(s).verdict.count(ViolationKind::Stuck) == 1);
  const ShrinkResult shrunk = shrink(s, ViolationKind::Stuck);
  REQUIRE(shrunk.scenario.faults.size() == 2);
  for (const FaultSpec& f : shrunk.scenario.faults) CHECK(*f.at < shrunk.scenario.duration);
  CHECK(*shrunk.scenario.faults.back().at >= Duration::s(59));  // it did move late
  const Scenario file = parse_scenario(to_toml(shrunk.scenario), "found.toml");
  CHECK(run_scenario(file).as_expected());
}

TEST_CASE("under pauses and clock jumps the fenced lock takes a stale write in its read-modify-write window") {
  // Fencing checks the write's token, not the read's: a holder paused
  // between its read and its write that resumes between the next holder's
  // read and write has its older token accepted (nobody newer wrote yet),
  // and the next holder's write then overwrites it.
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  ExploreOptions o;
  o.runs = 2000;
  o.kinds = {FaultKind::Pause, FaultKind::ClockJump};
  o.jobs = 2;
  const ExploreSummary s = explore(base, o);
  CHECK(s.by_kind.count(ViolationKind::Overlap) == 1);
  REQUIRE(s.by_kind.count(ViolationKind::StaleWrite) == 1);
  CHECK(s.by_kind.count(ViolationKind::LostUpdate) == 1);
  const RunResult r = run_scenario(with_random_faults(base, s.first.at(ViolationKind::StaleWrite).seed, o));
  const auto stale = std::find_if(r.violations.begin(), r.violations.end(),
                                  [](const Violation& v) { return v.kind == ViolationKind::StaleWrite; });
  REQUIRE(stale != r.violations.end());
  // The accepted write carried the older token: no newer token had reached the storage.
  REQUIRE(stale->detail.find("token"));
  CHECK(stale->detail.find("token")->number == 33);
}

TEST_CASE("three uneven shards merged in any order give the unsharded summary, each shard planning its own runs") {
  const Scenario base = catalogue("scenarios/kleppmann/redlock-clock-jump.toml");
  ExploreOptions o;
  o.runs = 1001;  // not a multiple of 3: the first two shards run 334, the last 333
  const ExploreSummary whole = explore(base, o);
  REQUIRE(whole.runs == 1001);
  REQUIRE(whole.planned == 1001);
  REQUIRE(!whole.first.empty());
  o.shard_count = 3;
  std::vector<ExploreSummary> parts;
  for (std::uint64_t k = 0; k < 3; ++k) {
    o.shard_index = k;
    parts.push_back(explore(base, o));
    CHECK(parts.back().planned == (k < 2 ? 334u : 333u));
    CHECK(parts.back().runs == parts.back().planned);
  }
  ExploreSummary forward, backward;
  for (std::size_t i = 0; i < 3; ++i) forward.merge(parts[i]);
  for (std::size_t i = 3; i-- > 0;) backward.merge(parts[i]);
  CHECK(same(whole, forward));
  CHECK(same(whole, backward));
  // The first run of each kind is the lowest index, whichever shard found it.
  for (const auto& [kind, r] : whole.first) {
    std::uint64_t lowest = ~std::uint64_t{0};
    for (const ExploreSummary& p : parts)
      if (p.first.count(kind)) lowest = std::min(lowest, p.first.at(kind).index);
    CHECK(r.index == lowest);
  }
}

TEST_CASE("merging keeps the earliest stuck and failed runs and adds up their counts") {
  ExploreSummary a, b;
  RunOutcome stuck{.index = 7, .seed = 70};
  stuck.stuck_after_heal = true;
  a.add(stuck);
  stuck.index = 3;
  stuck.seed = 30;
  b.add(stuck);
  b.add(RunOutcome{.index = 9, .seed = 90, .internal_error = "boom"});
  a.add(RunOutcome{.index = 12, .seed = 120, .internal_error = "bang"});
  ExploreSummary m;
  m.merge(a);
  m.merge(b);
  CHECK(m.runs == 4);
  CHECK(m.stuck_after_heal == 2);
  REQUIRE(m.first_stuck_after_heal);
  CHECK(m.first_stuck_after_heal->seed == 30);
  CHECK(m.internal_errors == 2);
  REQUIRE(m.first_internal_error);
  CHECK(m.first_internal_error->internal_error == "boom");
}

TEST_CASE("runs that hit the event budget are counted") {
  const Scenario base = catalogue("scenarios/zookeeper/herd-effect.toml");
  ExploreOptions o;
  o.runs = 20;
  o.max_events = 500;
  CHECK(explore(base, o).budget_exhausted == 20);
}

TEST_CASE("the Wilson interval matches its formula's known values") {
  auto [lo, hi] = wilson95(0, 10);
  CHECK(lo == doctest::Approx(0.0));
  CHECK(hi == doctest::Approx(0.2775).epsilon(0.001));
  std::tie(lo, hi) = wilson95(5, 10);
  CHECK(lo == doctest::Approx(0.2366).epsilon(0.001));
  CHECK(hi == doctest::Approx(0.7634).epsilon(0.001));
}

TEST_CASE("merging the shards' JSON results gives the unsharded summary, and refuses shards of another exploration") {
  const Scenario base = catalogue("scenarios/kleppmann/redlock-clock-jump.toml");
  ExploreOptions o;
  o.runs = 1500;
  const ExploreSummary whole = explore(base, o);
  std::vector<std::string> texts, names;
  o.shard_count = 3;
  for (std::uint64_t k = 0; k < 3; ++k) {
    o.shard_index = k;
    texts.push_back(explore_json(base, o, explore(base, o)));
    names.push_back("shard" + std::to_string(k + 1));
  }
  const Merged m = merge_results(texts, names);
  CHECK(m.missing_shards.empty());
  CHECK(same(whole, m.summary));
  // Two shards only: the merge says which is missing.
  CHECK(merge_results({texts[0], texts[2]}, {"a", "c"}).missing_shards == std::vector<std::uint64_t>{2});
  // A shard of another base seed is refused.
  o.seed = 99;
  o.shard_index = 1;
  const std::string other = explore_json(base, o, explore(base, o));
  CHECK_THROWS_WITH_AS(merge_results({texts[0], other}, {"a", "b"}), doctest::Contains("another exploration"), ScenarioError);
}

TEST_CASE("the matrix runs the same schedules for each variant, and refuses a variant the scenario cannot run") {
  const Scenario base = catalogue("scenarios/kleppmann/redlock-pause-in-flight.toml");
  ExploreOptions o;
  o.runs = 300;
  o.kinds = {FaultKind::Pause};
  const auto rows = explore_matrix(base, o, {"redlock:redlock-rb", "redlock:node-redlock-v5"});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].summary.runs == 300);
  CHECK(same(rows[0].summary, explore(base, o)));  // the scenario's own algorithm, the same runs
  CHECK_THROWS_WITH_AS(explore_matrix(base, o, {"redlock:nope"}), doctest::Contains("not a flavour"), ScenarioError);
  CHECK_THROWS_WITH_AS(explore_matrix(base, o, {"redlok"}), doctest::Contains("not an algorithm"), ScenarioError);
}

TEST_CASE("the drawn magnitudes stay within the bounds given") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  ExploreOptions o;
  o.max_pause = Duration::ms(250);
  o.max_jump = Duration::ms(100);
  o.kinds = {FaultKind::Pause, FaultKind::ClockJump};
  for (std::uint64_t seed = 1; seed < 200; ++seed)
    for (const FaultSpec& f : with_random_faults(base, seed, o).faults) {
      if (f.kind == FaultKind::Pause) CHECK(*f.duration <= Duration::ms(250));
      if (f.kind == FaultKind::ClockJump) CHECK(f.by <= Duration::ms(100));
      if (f.kind == FaultKind::ClockJump) CHECK(f.by >= -Duration::ms(100));
      if (f.at) CHECK(*f.at <= base.duration);  // an anchored fault has no `at` (it read an empty optional)
    }
}

TEST_CASE("the shrinker rounds a pause to a readable unit but never past the pause the run drew") {
  // zookeeper/session-expiry-pause.toml explored from seed 234832 drew a
  // 12.252780806 s pause that was needed whole; rounding it up to 13 s made
  // the shrunk schedule larger than the one it came from.
  // The anchored schedules draw differently: the first of explore's runs
  // whose schedule has a pause and fails stands in for that seed.
  const Scenario base = catalogue("scenarios/zookeeper/session-expiry-pause.toml");
  ExploreOptions o;
  Scenario failing;
  RunResult r;
  for (std::uint64_t i = 0; i < 1000 && r.verdict.empty(); ++i) {
    failing = with_random_faults(base, run_seed(1, i), o);
    if (std::none_of(failing.faults.begin(), failing.faults.end(), [](const FaultSpec& f) { return f.kind == FaultKind::Pause; }))
      continue;
    r = run_scenario(failing);
  }
  REQUIRE_FALSE(r.verdict.empty());
  const ShrinkResult shrunk = shrink(failing, *r.verdict.begin());
  for (const FaultSpec& f : shrunk.scenario.faults) {
    if (!f.duration) continue;
    bool within_some = false;
    for (const FaultSpec& g : failing.faults)
      if (g.kind == f.kind && g.target == f.target && g.duration && *f.duration <= *g.duration) within_some = true;
    CHECK(within_some);
  }
}

TEST_CASE("runs made with one RunReuse, as explore's workers make them, are the runs made without it") {
  // A worker keeps one scenario (its faults drawn anew for each run), one
  // prepared world template and one judge for all its runs: every run must
  // be what a run of its own gives, trace hash, verdict, words and counts.
  for (const char* file : {"scenarios/kleppmann/gc-pause.toml", "scenarios/kleppmann/redlock-clock-jump.toml",
                           "scenarios/redis/failover-async-replication.toml", "scenarios/zookeeper/herd-effect.toml"})
    for (const bool liveness : {false, true}) {
      INFO(file << (liveness ? " with the liveness phase" : ""));
      const Scenario base = catalogue(file);
      ExploreOptions o;
      const Reference ref = reference_run(base, o);
      ScheduleDrawer drawer(base, o, ref);
      Scenario reused = unfaulted(base, o);
      const std::vector<FaultSpec> kept = reused.faults;
      RunReuse reuse;
      std::size_t violating = 0;
      for (std::uint64_t i = 0; i < 60; ++i) {
        const std::uint64_t seed = run_seed(1, i);
        reused.seed = seed;
        reused.faults = kept;
        drawer.draw(seed, reused.faults, nullptr);
        RunOptions ro;
        ro.keep_events = 0;
        if (liveness) ro.liveness = liveness_window_of(base, o);
        const RunResult fresh = run_scenario(reused, ro);
        ro.reuse = &reuse;
        const RunResult again = run_scenario_borrowed(reused, ro);
        REQUIRE(!fresh.trace_hash.empty());
        CHECK(again.trace_hash == fresh.trace_hash);
        CHECK(again.verdict == fresh.verdict);
        REQUIRE(again.violations.size() == fresh.violations.size());
        for (std::size_t k = 0; k < fresh.violations.size(); ++k)
          CHECK(again.violations[k].detail == fresh.violations[k].detail);
        CHECK(again.stats.events == fresh.stats.events);
        CHECK(again.stats.acquisitions == fresh.stats.acquisitions);
        CHECK(again.stats.failed_attempts == fresh.stats.failed_attempts);
        CHECK(again.stats.queue_events == fresh.stats.queue_events);
        CHECK(again.liveness.has_value() == fresh.liveness.has_value());
        if (again.liveness && fresh.liveness) CHECK(again.liveness->stuck == fresh.liveness->stuck);
        violating += !fresh.verdict.empty();
      }
      if (std::string(file).find("gc-pause") != std::string::npos) CHECK(violating > 0);
    }
}

}  // namespace explore_test
