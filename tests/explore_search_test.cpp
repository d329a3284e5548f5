// The explorer's search power: what it finds in the catalogue without the
// scripted faults, its anchored schedules, the liveness phase, the bounded
// exhaustive search and the boundary search.
#include <doctest/doctest.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <stdexcept>

#include "harness/explore.hpp"
#include "reports/explore_output.hpp"
#include "harness/explore_boundary.hpp"
#include "harness/explore_exhaustive.hpp"
#include "harness/explore_reference.hpp"
#include "harness/scenario_writer.hpp"
#include "reports/boundary.hpp"
#include "reports/exhaustive_output.hpp"
#include "tests/support.hpp"

namespace explore_search_test {

using namespace locksim;
using namespace locksim::testing;
using enum ViolationKind;

namespace {

struct Expected {
  const char* file;
  std::set<ViolationKind> kinds;
  std::uint64_t runs;  // from base seed 1, the run that shows the last of them is below this
};

// Every catalogue scenario with violations, its faults removed: the kinds
// its [expect] declares, and how many runs from seed 1 find them all (the
// measurements of docs/explore.md). gc-pause-fenced declares an overlap;
// the search also finds its fenced read-modify-write window.
const Expected kCatalogue[] = {
    {"antirez/lock-value-cas-token.toml", {Overlap}, 8},
    {"antirez/lock-value-cas.toml", {Overlap, StaleWrite}, 2540},
    {"chubby/lock-delay-short.toml", {StaleWrite, LostUpdate}, 4711},
    {"chubby/lock-delay-zero.toml", {StaleWrite, LostUpdate}, 2245},
    {"consul/session-ttl-pause-no-lock-delay-2x.toml", {Overlap, StaleWrite, LostUpdate}, 530},
    {"consul/session-ttl-pause-token.toml", {Overlap}, 452},
    {"consul/session-ttl-pause.toml", {Overlap, StaleWrite, LostUpdate}, 530},
    {"etcd/lease-expires-while-waiting-3.4.toml", {Overlap}, 10},
    {"etcd/pause-after-lock-fenced.toml", {Overlap}, 3},
    {"etcd/pause-after-lock.toml", {Overlap, StaleWrite, LostUpdate}, 3},
    {"kleppmann/check-then-pause.toml", {Overlap, StaleWrite, LostUpdate}, 8},
    {"kleppmann/gc-pause-fenced-window-fenced-reads.toml", {Overlap}, 8},
    {"kleppmann/gc-pause-fenced-window.toml", {Overlap, StaleWrite, LostUpdate}, 8},
    {"kleppmann/gc-pause-fenced.toml", {Overlap, StaleWrite}, 8},
    {"kleppmann/gc-pause.toml", {Overlap, StaleWrite, LostUpdate}, 8},
    {"kleppmann/network-delay-unfenced.toml", {Overlap, StaleWrite, LostUpdate}, 8},
    {"kleppmann/network-delay.toml", {Overlap}, 8},
    {"kleppmann/redlock-clock-jump-fenced.toml", {Overlap}, 317},
    {"kleppmann/redlock-clock-jump.toml", {Overlap, StaleWrite, LostUpdate}, 317},
    {"kleppmann/redlock-pause-in-flight-node-v5.toml", {Overlap, StaleWrite, LostUpdate}, 60},
    {"redis/del-without-owner-check-fixed.toml", {Overlap}, 14},
    {"redis/del-without-owner-check.toml", {ForeignRelease, Overlap, StaleWrite, LostUpdate}, 62},
    {"redis/failover-async-replication.toml", {Overlap, StaleWrite, LostUpdate}, 8},
    {"redis/get-then-del.toml", {ForeignRelease, Overlap, StaleWrite, LostUpdate}, 904},
    {"redis/get-then-set-race.toml", {Overlap, StaleWrite, LostUpdate}, 1},
    {"redis/redlock-drift.toml", {Overlap, StaleWrite, LostUpdate}, 2},
    {"redis/redlock-fault-tolerance-3-down.toml", {Stuck}, 238},
    {"redis/redlock-restart-no-persistence.toml", {Overlap, StaleWrite, LostUpdate}, 18},
    {"redis/setnx-no-ttl-crash.toml", {Stuck}, 50},
    {"redis/setnx-timestamp-race.toml", {Overlap}, 52},
    {"redisson/fenced-lock-failover.toml", {Overlap, StaleWrite, LostUpdate}, 61},
    {"redisson/multilock-node-down-redlock.toml", {Overlap, StaleWrite, LostUpdate}, 377},
    {"redisson/multilock-node-down.toml", {Stuck}, 160},
    {"redisson/watchdog-stw-pause.toml", {Overlap, StaleWrite, LostUpdate}, 3},
    {"zookeeper/partition-suspended-vs-lost.toml", {Overlap, StaleWrite, LostUpdate}, 37},
    {"zookeeper/session-expiry-pause-fenced.toml", {Overlap}, 3},
    {"zookeeper/session-expiry-pause.toml", {Overlap, StaleWrite, LostUpdate}, 3},
};

std::set<ViolationKind> found(const ExploreSummary& s) {
  std::set<ViolationKind> out;
  for (const auto& [k, n] : s.by_kind)
    if (n) out.insert(k);
  return out;
}

// The scenario's first fault anchored on an event of the reference run.
const FaultSpec* anchored(const Scenario& s) {
  for (const FaultSpec& f : s.faults)
    if (!f.at) return &f;
  return nullptr;
}

}  // namespace

TEST_CASE("unscripted, explore finds every violation kind of every catalogue scenario within the runs listed") {
  int scenarios = 0;
  for (const Expected& e : kCatalogue) {
    const Scenario base = catalogue(std::string("scenarios/") + e.file);
    INFO(std::string(e.file));
    std::set<ViolationKind> declared = base.expect.violations;
    if (std::string(e.file) == "kleppmann/gc-pause-fenced.toml") declared.insert(StaleWrite);
    CHECK(e.kinds == declared);  // the table follows the catalogue
    ExploreOptions o;
    o.runs = e.runs;
    const std::clock_t cpu_start = std::clock();  // this process's CPU time: one core, whatever else runs
    const ExploreSummary s = explore(base, o);
    const double cpu_s = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    const std::set<ViolationKind> got = found(s);
    CHECK(std::includes(got.begin(), got.end(), e.kinds.begin(), e.kinds.end()));
    MESSAGE(std::string(e.file) << ": " << e.runs << " runs, " << cpu_s << " s CPU");
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(LOCKSIM_SANITIZED_BUILD)
    // docs/explore.md's table: each within a second of one core, but
    // redlock-fault-tolerance-3-down (about 1.0 s: its clients retry forever
    // for the whole run while a majority is down); the margin is for a
    // loaded machine's caches.
    CHECK(cpu_s < 1.5);
#endif
    ++scenarios;
  }
  CHECK(scenarios == 37);
}

TEST_CASE("a schedule that waits for events is written and read back, and replays to the same trace") {
  const Scenario base = catalogue("scenarios/kleppmann/check-then-pause.toml");
  const ExploreOptions o;
  const Reference ref = reference_run(base, o);
  REQUIRE(!ref.anchors.empty());
  CHECK(ref.lease == Duration::s(10));
  int with_anchor = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const Scenario s = with_random_faults(base, seed, o, ref);
    const Scenario again = parse_scenario(to_toml(s), "drawn.toml");
    CHECK(run_scenario(s).trace_hash == run_scenario(again).trace_hash);
    with_anchor += anchored(s) != nullptr;
  }
  CHECK(with_anchor >= 5);
}

TEST_CASE("the reference run's anchors are the events the fault engine sees, counted per process and event") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  const Reference ref = reference_run(base, ExploreOptions{});
  // The storage announces itself before the faults are armed: not an anchor.
  CHECK(std::none_of(ref.anchors.begin(), ref.anchors.end(), [](const Anchor& a) { return a.process == "storage" && a.event == Ev::Started; }));
  const auto read = std::find_if(ref.anchors.begin(), ref.anchors.end(), [](const Anchor& a) { return a.name() == "client2 read"; });
  REQUIRE(read != ref.anchors.end());
  CHECK(read->on() == "client2 read");
  CHECK(read->at == Duration::ms(31004));
  // The lengths it measures by include the lease and a grant's validity.
  CHECK(std::any_of(ref.constants.begin(), ref.constants.end(), [](const NamedDuration& c) { return c.measure == Measure::Lease && c.value == Duration::s(30); }));
  CHECK(std::any_of(ref.constants.begin(), ref.constants.end(), [](const NamedDuration& c) { return c.measure == Measure::Validity; }));
}

TEST_CASE("explore's drawn restarts fall within the run, so every drawn schedule is a loadable file") {
  // A late crash with a long outage drew its restart after the end before.
  const Scenario base = catalogue("scenarios/redis/setnx-no-ttl-crash.toml");
  ExploreOptions o;
  o.kinds = {FaultKind::Crash};
  o.max_outage = Duration::s(50);
  const Reference ref = reference_run(base, o);
  int restarts = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const Scenario s = with_random_faults(base, seed, o, ref);
    for (const FaultSpec& f : s.faults) {
      if (f.kind != FaultKind::Restart || !f.at) continue;
      ++restarts;
      CHECK(*f.at < s.duration);
    }
    CHECK_NOTHROW(parse_scenario(to_toml(s), "drawn.toml"));
  }
  CHECK(restarts >= 50);
}

TEST_CASE("the summary says what found each violation, the same with 1 or 2 jobs") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  ExploreOptions o;
  o.runs = 400;
  const ExploreSummary one = explore(base, o);
  o.jobs = 2;
  const ExploreSummary two = explore(base, o);
  REQUIRE(one.anchors.count(Overlap) == 1);
  CHECK(one.anchors == two.anchors);
  CHECK(one.lengths == two.lengths);
  std::uint64_t labelled = 0;
  for (const auto& [label, n] : one.anchors.at(Overlap)) labelled += n;
  CHECK(labelled >= one.by_kind.at(Overlap));  // every overlapping run has at least one fault, so one label
  const std::string text = explore_text(base, ExploreOptions{.runs = 400}, one);
  CHECK(text.find("what found them") != std::string::npos);
}

TEST_CASE("the liveness phase finds a lock without a TTL stuck once its crashed holder restarts, and a TTL lock never") {
  ExploreOptions o;
  o.runs = 300;
  o.liveness = true;
  o.kinds = {FaultKind::Crash, FaultKind::Pause};
  const ExploreSummary setnx = explore(catalogue("scenarios/redis/setnx-no-ttl-crash-fixed.toml"), o);
  CHECK(setnx.stuck_after_heal == 0);  // the fixed twin has a TTL: the lock comes back
  const ExploreSummary no_ttl = explore(catalogue("scenarios/redis/setnx-no-ttl-crash.toml"), o);
  REQUIRE(no_ttl.stuck_after_heal > 0);
  // The safety verdict judges the fault phase alone: the same with or without the phase.
  ExploreOptions without = o;
  without.liveness = false;
  CHECK(explore(catalogue("scenarios/redis/setnx-no-ttl-crash.toml"), without).by_kind == no_ttl.by_kind);
  // The first stuck run, replayed: healed at the end of the fault phase, stuck after.
  const Scenario base = catalogue("scenarios/redis/setnx-no-ttl-crash.toml");
  RunOptions ro;
  ro.liveness = liveness_window_of(base, o);
  const RunResult r = run_scenario(with_random_faults(base, no_ttl.first_stuck_after_heal->seed, o), ro);
  REQUIRE(r.liveness);
  CHECK(r.liveness->stuck);
  CHECK(r.liveness->healed_at == Instant::zero() + base.duration);
}

TEST_CASE("the exhaustive search with --liveness counts a schedule whose lock is stuck after the heal, and its finding shows it") {
  const Scenario base = catalogue("scenarios/redis/setnx-no-ttl-crash.toml");
  ExploreOptions o;
  o.liveness = true;
  ExhaustiveOptions x;
  x.depth = 1;
  x.kinds = {FaultKind::Crash};
  const ExhaustiveSummary s = explore_exhaustive(base, o, x);
  o.liveness = false;
  const ExhaustiveSummary fault_phase = explore_exhaustive(base, o, x);
  // The fault phase's own stuck checker finds some (112 of the 504
  // schedules); the liveness phase after the heal finds more (140).
  REQUIRE(s.by_kind.count(ViolationKind::Stuck));
  REQUIRE(fault_phase.by_kind.count(ViolationKind::Stuck));
  CHECK(s.by_kind.at(ViolationKind::Stuck) > fault_phase.by_kind.at(ViolationKind::Stuck));
  CHECK(s.total() == fault_phase.total());
}

TEST_CASE("the same schedule gives the same fingerprints, and a pause that changes nothing leads back to the fault-free state") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  auto fingerprints = [](const Scenario& s) {
    std::map<std::string, std::uint64_t> out;
    std::map<std::string, int> seen;
    RunOptions ro;
    ro.at_anchor = [&](const Trace& t, const TraceEvent& e, const std::function<std::uint64_t()>& fp) {
      const std::string name = t.name(e.process) + " " + std::string(event_name(e.kind));
      out[name + "#" + std::to_string(++seen[name])] = fp();
    };
    run_scenario(s, ro);
    return out;
  };
  Scenario quiet = base;
  quiet.faults.clear();
  const auto clean = fingerprints(quiet);
  CHECK(clean == fingerprints(quiet));
  // client2 paused for 10 s at 5 s, long before it starts at 31 s: it had nothing to do.
  Scenario idle = quiet;
  FaultSpec pause;
  pause.kind = FaultKind::Pause;
  pause.target = "client2";
  pause.at = Duration::s(5);
  pause.duration = Duration::s(10);
  idle.faults.push_back(pause);
  const auto after = fingerprints(idle);
  CHECK(after.at("client2 started#1") == clean.at("client2 started#1"));
  // client1 paused for as long right after its read: a different state from then on.
  Scenario busy = quiet;
  pause.target = "client1";
  pause.at = Duration::ms(5);
  busy.faults.push_back(pause);
  CHECK(fingerprints(busy).at("client2 started#1") != clean.at("client2 started#1"));
}

TEST_CASE("the exhaustive search's lengths: a millisecond past each of the run's constants, and just short of the lease") {
  // A fault just longer than a constant (a TTL, a work time, a delay) is
  // where a verdict flips; just shorter than the lease is the near miss.
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  const std::vector<Duration> lengths = exhaustive_lengths(base, ExploreOptions{});
  const Reference ref = reference_run(base, ExploreOptions{});
  REQUIRE(ref.constants.size() > 2);
  auto has = [&](Duration d) { return std::find(lengths.begin(), lengths.end(), d) != lengths.end(); };
  for (const NamedDuration& c : ref.constants) {
    INFO(static_cast<int>(c.measure) << " " << c.of);
    CHECK(has(c.value + Duration::ms(1)));
  }
  CHECK(has(Duration::s(30) - Duration::ms(1)));  // the lease: ttl = 30s
  CHECK(has(Duration::s(30) + Duration::ms(1)));
  CHECK(std::is_sorted(lengths.begin(), lengths.end()));
  // Redlock's grant says what it is worth (its validity: the TTL less the
  // time the acquire took and the drift allowance): just short of it too.
  const Scenario redlock = catalogue("scenarios/kleppmann/redlock-pause-in-flight.toml");
  const Reference rref = reference_run(redlock, ExploreOptions{});
  const auto validity = std::find_if(rref.constants.begin(), rref.constants.end(), [](const NamedDuration& c) { return c.measure == Measure::Validity; });
  REQUIRE(validity != rref.constants.end());
  CHECK(validity->value != rref.lease);
  const std::vector<Duration> rl = exhaustive_lengths(redlock, ExploreOptions{});
  CHECK(std::find(rl.begin(), rl.end(), validity->value - Duration::ms(1)) != rl.end());
}

TEST_CASE("the exhaustive search finds the fenced read-modify-write window with one fault, and says how large its space was") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  ExhaustiveOptions x;
  x.depth = 1;
  const ExhaustiveSummary s = explore_exhaustive(base, ExploreOptions{}, x);
  CHECK(s.anchors == 24);
  CHECK(s.lengths == exhaustive_lengths(base, ExploreOptions{}));
  CHECK(s.total() == s.anchors * s.choices);
  REQUIRE(s.by_kind.count(StaleWrite) == 1);
  REQUIRE(s.first.at(StaleWrite).faults.size() == 1);
  // The finding replays as a scenario file with the stale write it shows.
  const Scenario found = parse_scenario(to_toml(exhaustive_scenario(base, ExploreOptions{}, s.first.at(StaleWrite), StaleWrite)), "found.toml");
  CHECK(run_scenario(found).verdict.count(StaleWrite) == 1);
  const std::string text = exhaustive_text(base, ExploreOptions{}, x, s);
  CHECK(text.find("Shown: no foreign-release or stuck in any schedule of 1 fault (pause, crash) over 24 anchors") != std::string::npos);
}

TEST_CASE("a finding that does not replay on its own is refused as a bug of ours, not written as a scenario") {
  // The search's runs (fingerprints, timers left stale in the queue) and a
  // plain run of the same schedule must be one run; a difference once came
  // from Chubby's KeepAlive reading a session that had ended (chubby.cpp).
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  ExhaustiveFinding nothing;  // no fault: no stale write
  nothing.described = "(none)";
  CHECK_THROWS_WITH_AS(exhaustive_scenario(base, ExploreOptions{}, nothing, StaleWrite),
                       doctest::Contains("found stale-write with the schedule \"(none)\", but the schedule run on its own does not show it"),
                       std::logic_error);
}

TEST_CASE("the exhaustive search's branching: a later choice on the same anchor, or a later anchor within the window") {
  const NextFaults any = next_faults({3, 2}, 8, 0);
  CHECK(any.first_choice == 3);  // choices 0-2 on anchor 3 were paired with this one already
  CHECK(any.anchors == std::vector<std::uint32_t>{4, 5, 6, 7});
  CHECK(next_faults({3, 2}, 8, 1).anchors == std::vector<std::uint32_t>{4});
  CHECK(next_faults({3, 0}, 8, 2).anchors == std::vector<std::uint32_t>{4, 5});
  CHECK(next_faults({7, 0}, 8, 0).anchors.empty());  // the run's last anchor
}

TEST_CASE("the exhaustive search's order: fewer faults first, then as the faults were placed") {
  const std::vector<Placement> one{{5, 0}}, two{{0, 0}, {1, 0}}, other{{0, 0}, {1, 1}};
  CHECK(before(one, two));
  CHECK_FALSE(before(two, one));
  CHECK(before(two, other));
  CHECK_FALSE(before(other, two));
}

TEST_CASE("an exhaustive search is as expected when it finds only what the file's expect table allows, and without one nothing") {
  ExhaustiveSummary s;
  CHECK(exhaustive_as_expected(Scenario{}, s));  // nothing found, nothing expected
  s.by_kind[ViolationKind::Overlap] = 3;
  Scenario none;
  CHECK_FALSE(exhaustive_as_expected(none, s));  // no [expect]: a finding is unexpected
  Scenario expects;
  expects.expect.present = true;
  expects.expect.violations = {ViolationKind::Overlap, ViolationKind::StaleWrite};
  CHECK(exhaustive_as_expected(expects, s));
  s.by_kind[ViolationKind::Stuck] = 1;
  CHECK_FALSE(exhaustive_as_expected(expects, s));
}

TEST_CASE("the pruning rule: a state reached again is searched again only with more faults left to place") {
  Visited visited;
  CHECK(claim_state(visited, 42, 1));        // first seen with one fault left
  CHECK_FALSE(claim_state(visited, 42, 1));  // again, as many: its subtree was searched
  CHECK_FALSE(claim_state(visited, 42, 0));  // fewer: a part of what was searched
  CHECK(claim_state(visited, 42, 2));        // more: deeper than before
  CHECK_FALSE(claim_state(visited, 42, 1));  // the set remembers the most
  CHECK(claim_state(visited, 7, 0));         // another state
}

TEST_CASE("pruning explores fewer schedules than no pruning and finds the same kinds") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  ExhaustiveOptions x;
  x.kinds = {FaultKind::Pause};
  x.lengths = {Duration::ms(2), Duration::ms(30001)};
  const ExhaustiveSummary pruned = explore_exhaustive(base, ExploreOptions{}, x);
  x.prune = false;
  const ExhaustiveSummary all = explore_exhaustive(base, ExploreOptions{}, x);
  CHECK(pruned.skipped > 0);
  CHECK(pruned.total() < all.total());
  CHECK(all.skipped == 0);
  // The first finding of a kind is the earliest in the search's order: one
  // fault, found before any schedule of two.
  REQUIRE(all.first.count(StaleWrite));
  CHECK(all.first.at(StaleWrite).faults.size() == 1);
  CHECK(pruned.first.at(StaleWrite).path == all.first.at(StaleWrite).path);
  std::set<ViolationKind> a, b;
  for (const auto& [k, n] : pruned.by_kind) a.insert(k);
  for (const auto& [k, n] : all.by_kind) b.insert(k);
  CHECK(a == b);
}

TEST_CASE("the first finding of a kind is the earliest schedule in the search's order, also when only two faults show it") {
  // Two pauses of 16 s make an overlap that one (under the 30 s lease) cannot:
  // 26 schedules of two faults show it; the first in the search's order is kept.
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  ExhaustiveOptions x;
  x.kinds = {FaultKind::Pause};
  x.lengths = {Duration::s(16)};
  x.window = 3;
  x.prune = false;
  const ExhaustiveSummary s = explore_exhaustive(base, ExploreOptions{}, x);
  REQUIRE(s.by_kind.count(Overlap));
  CHECK(s.by_kind.at(Overlap) == 26);
  CHECK(finding_faults_text(s.first.at(Overlap)) ==
        "on client1 acquiring: storage pauses for 16s; on storage resumed: client1 pauses for 16s");
  // A wider window searches a superset: its first is no later.
  x.window = 4;
  const ExhaustiveSummary wider = explore_exhaustive(base, ExploreOptions{}, x);
  CHECK_FALSE(before(s.first.at(Overlap).path, wider.first.at(Overlap).path));
}

TEST_CASE("the shards of an exhaustive search add up to the unsharded search, with 1 or 2 jobs") {
  const Scenario base = catalogue("scenarios/kleppmann/check-then-pause.toml");
  ExhaustiveOptions x;
  x.kinds = {FaultKind::Pause, FaultKind::Crash};
  x.lengths = {Duration::ms(10001)};
  x.window = 4;  // a second fault within 4 events of the first: a smaller search, the same bookkeeping
  ExploreOptions o;
  const ExhaustiveSummary whole = explore_exhaustive(base, o, x);
  std::vector<std::string> texts, names;
  o.shard_count = 3;
  o.jobs = 2;
  for (std::uint64_t k = 0; k < 3; ++k) {
    o.shard_index = k;
    texts.push_back(exhaustive_json(base, o, x, explore_exhaustive(base, o, x)));
    names.push_back("shard" + std::to_string(k + 1));
  }
  const MergedExhaustive m = merge_exhaustive(texts, names);
  CHECK(m.missing_shards.empty());
  CHECK(m.summary.schedules == whole.schedules);
  CHECK(m.summary.states == whole.states);
  CHECK(m.summary.skipped == whole.skipped);
  CHECK(m.summary.by_kind == whole.by_kind);
  for (const auto& [k, f] : whole.first) CHECK(m.summary.first.at(k).path == f.path);
  CHECK_THROWS_AS(merge_exhaustive({texts[0], texts[0]}, {"a", "b"}), ScenarioError);
}

TEST_CASE("the boundary search finds the pause gc-pause needs, to the nanosecond, with the run on each side") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  const BoundaryResult b = find_boundary(base, "fault[1].duration");
  REQUIRE(b.lower);
  // Above: a pause that ends after the 60 s run does — client1 never writes again, only the overlap is left.
  REQUIRE(b.upper);
  CHECK(b.upper->above.verdict == std::set<ViolationKind>{Overlap});
  CHECK(b.upper->above.value > Duration::s(58));
  const BoundaryEdge& e = *b.lower;
  CHECK(e.above.value - e.below.value == Duration::ns(1));
  CHECK(e.above.verdict == base.expect.violations);  // the file's verdict starts here
  CHECK(e.below.verdict != e.above.verdict);
  CHECK(e.above.value > Duration::s(30));  // the lease, and the network's few milliseconds
  CHECK(e.above.value < Duration::s(31));
  // Each side, run again, gives its verdict.
  CHECK(run_scenario(e.below.scenario).verdict == e.below.verdict);
  CHECK(run_scenario(e.above.scenario).verdict == e.above.verdict);
  CHECK(boundary_text(base, b).find("needs a pause of at least " + format_duration(e.above.value)) != std::string::npos);
}

TEST_CASE("the boundary search looks both ways: gc-pause's lease is unsafe from 1 ms up to the edge just above the pause") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  const BoundaryResult b = find_boundary(base, "lock.ttl");
  REQUIRE(b.lower);
  REQUIRE(b.upper);
  // Below: a lease of a millisecond is shorter than a round trip, and its liveness window too.
  CHECK(b.lower->above.value == Duration::ms(1));
  CHECK(b.lower->above.verdict == base.expect.violations);
  CHECK(b.lower->below.verdict.count(ViolationKind::Stuck) == 1);
  // Above: the edge the lecture is about — a lease that outlasts the 40 s pause (from 1 s)
  // and the few milliseconds of the network is safe.
  CHECK(b.upper->above.value - b.upper->below.value == Duration::ns(1));
  CHECK(b.upper->below.verdict == base.expect.violations);
  CHECK(b.upper->above.verdict.empty());
  CHECK(b.upper->above.value > Duration::s(40));
  CHECK(b.upper->above.value < Duration::s(42));
  for (const BoundaryEdge* e : b.edges()) {
    CHECK(run_scenario(e->below.scenario).verdict == e->below.verdict);
    CHECK(run_scenario(e->above.scenario).verdict == e->above.verdict);
  }
  const std::string text = boundary_text(base, b);
  CHECK(text.find("needs lock.ttl = at most " + format_duration(b.upper->below.value)) != std::string::npos);
  CHECK(text.find("lock.ttl = at most 999.999us also gives stuck") != std::string::npos);
  CHECK(text.find("holds from 1ms to " + format_duration(b.upper->below.value)) != std::string::npos);
}

TEST_CASE("the boundary search refuses what it cannot move, and says what it can") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  CHECK_THROWS_WITH_AS(find_boundary(base, "ttl"), doctest::Contains("fault[N].duration"), ScenarioError);
  CHECK_THROWS_WITH_AS(find_boundary(base, "client[1].drift_ppm"), doctest::Contains("not a duration"), ScenarioError);
  CHECK_THROWS_WITH_AS(find_boundary(base, "lock.algorithm"), doctest::Contains("only durations and integers"), ScenarioError);
  CHECK_THROWS_WITH_AS(find_boundary(base, "client[client9].work"), doctest::Contains("no client named 'client9'"), ScenarioError);
  CHECK_THROWS_WITH_AS(find_boundary(base, "fault[2].duration"), doctest::Contains("has 1 fault"), ScenarioError);
  CHECK_THROWS_WITH_AS(find_boundary(base, "fault[1].by"), doctest::Contains("has no 'by'"), ScenarioError);
  CHECK_THROWS_WITH_AS(find_boundary(base, "fault[1].after"), doctest::Contains("not an 'after'"), ScenarioError);
}

TEST_CASE("a run that throws is counted and reported with its seed, and the search finishes the other runs") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  for (int jobs : {1, 2}) {
    ExploreOptions o;
    o.runs = 40;
    o.jobs = jobs;
    const ExploreSummary clean = explore(base, o);
    o.before_run_for_test = [](std::uint64_t index) {
      if (index == 7) throw std::logic_error("test hook: an internal check failed");
    };
    const ExploreSummary s = explore(base, o);
    CHECK(s.runs == 40);
    CHECK(!s.partial);
    CHECK(s.internal_errors == 1);
    REQUIRE(s.first_internal_error);
    CHECK(s.first_internal_error->index == 7);
    CHECK(s.first_internal_error->seed == run_seed(1, 7));
    CHECK(s.first_internal_error->internal_error == "test hook: an internal check failed");
    // Every other run judged as without the failure: at most run 7's verdict is missing.
    CHECK(s.violating + 1 >= clean.violating);
    CHECK(s.violating <= clean.violating);
    const std::string text = explore_text(base, o, s);
    CHECK(text.find("internal errors (a bug in locksim, not a verdict): 1 run failed, first run 7 (seed " +
                    std::to_string(run_seed(1, 7)) + "): test hook: an internal check failed") != std::string::npos);
    CHECK(text.find("--replay " + std::to_string(run_seed(1, 7))) != std::string::npos);
    // Shards carry it to the merge.
    const Merged m = merge_results({explore_json(base, o, s)}, {"one.json"});
    CHECK(m.summary.internal_errors == 1);
    CHECK(m.summary.first_internal_error->seed == run_seed(1, 7));
  }
}

TEST_CASE("a stopped exploration sums the runs that finished and says it is partial") {
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause.toml");
  ExploreOptions o;
  o.runs = 1000;
  int asked = 0;
  o.stop = [&asked] { return ++asked > 25; };
  const ExploreSummary s = explore(base, o);
  CHECK(s.partial);
  CHECK(s.runs == 25);
  CHECK(s.planned == 1000);
  CHECK(explore_text(base, o, s).find("PARTIAL: interrupted; the summary of the 25 of 1000 runs that finished") !=
        std::string::npos);
  // A partial shard is not merged as if it were whole.
  CHECK_THROWS_AS(merge_results({explore_json(base, o, s)}, {"cut.json"}), ScenarioError);
}

TEST_CASE("with fenced reads the bounded search finds no lost update where writes-only fencing has one, and says over what space") {
  // gc-pause-fenced, scripted faults removed, searched at depth 1 (the suite's
  // budget; docs/explore.md has depth 2): fencing on writes only loses an
  // update in the read-modify-write window; with the read's token recorded
  // too, no schedule does.
  Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  ExhaustiveOptions x;
  x.depth = 1;
  const ExhaustiveSummary writes_only = explore_exhaustive(base, ExploreOptions{}, x);
  CHECK(writes_only.by_kind.count(LostUpdate) == 1);
  base.storage.fenced_reads = true;
  const ExhaustiveSummary reads_too = explore_exhaustive(base, ExploreOptions{}, x);
  CHECK(reads_too.anchors == writes_only.anchors);
  CHECK(reads_too.total() == reads_too.anchors * reads_too.choices);
  CHECK(reads_too.by_kind.count(LostUpdate) == 0);
  // Nor a stale write: the superseded holder's writes that still land are in
  // token order before the next holder's first accepted read, which the
  // judge does not count (judge/checkers.cpp StaleWriteChecker); writes-only
  // fencing has stale ones, after the next holder's read.
  CHECK(writes_only.by_kind.count(StaleWrite) == 1);
  CHECK(reads_too.by_kind.count(StaleWrite) == 0);
  const std::string text = exhaustive_text(base, ExploreOptions{}, x, reads_too);
  CHECK(text.find("no stale-write, lost-update") != std::string::npos);
  CHECK(text.find(" in any schedule of 1 fault (pause, crash) over 24 anchors") != std::string::npos);
}

TEST_CASE("what found a violation is a structured label: its JSON key says it in English and reads back, its Chinese is its own") {
  using K = FoundLabel::Kind;
  const std::vector<std::pair<FoundLabel, std::string>> labels{
      {{.kind = K::Time}, "a time"},
      {{.kind = K::Time, .struck = 3}, "a time, 3 nodes at once"},
      {{.kind = K::Event, .process = "client1", .event = Ev::StorageRead}, "client1 storage-read"},
      {{.kind = K::Event, .process = "redis1", .event = Ev::KeyDeleted, .struck = 2}, "redis1 key-deleted, 2 nodes at once"},
      {{.kind = K::Random}, "random"},
      {{.kind = K::Until, .process = "client2", .event = Ev::Acquired}, "until client2 acquired"},
      {{.kind = K::Constant, .measure = Measure::Lease}, "lease"},
      {{.kind = K::Constant, .measure = Measure::TwoLeases}, "2 x lease"},
      {{.kind = K::Constant, .process = "redis2", .measure = Measure::ReplicationLag}, "redis2 replication lag"},
      {{.kind = K::Constant, .process = "client1", .measure = Measure::StorageTimeout}, "client1 storage timeout"},
      {{.kind = K::Constant, .process = "client2", .measure = Measure::Start}, "client2 start"},
  };
  for (const auto& [label, key] : labels) {
    INFO(key);
    CHECK(found_label_key(label) == key);
    const auto back = found_label_of_key(key);
    REQUIRE(back);
    CHECK(*back == label);
  }
  CHECK_FALSE(found_label_of_key("client1 no-such-event"));
  CHECK_FALSE(found_label_of_key("nonsense"));
}

}  // namespace explore_search_test
