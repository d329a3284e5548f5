// Properties of the harness, checked on generated inputs (RapidCheck): the
// writer's round trip, the shrinker, and merging explore's shards.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/explore.hpp"
#include "reports/explore_output.hpp"
#include "harness/scenario_writer.hpp"
#include "harness/shrink.hpp"
#include "lockalgos/registry.hpp"
#include "tests/property_support.hpp"
#include "tests/support.hpp"

namespace property_harness_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// Every catalogue scenario, loaded once.
const std::vector<Scenario>& bases() {
  static const std::vector<Scenario> all = [] {
    std::vector<std::string> paths;
    for (const auto& e : std::filesystem::recursive_directory_iterator(std::filesystem::path(LOCKSIM_SOURCE_DIR) / "scenarios"))
      if (e.path().extension() == ".toml") paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    std::vector<Scenario> out;
    for (const std::string& p : paths) out.push_back(load_scenario(p));
    return out;
  }();
  return all;
}

const Scenario& base_named(const std::string& relative) {
  for (const Scenario& s : bases())
    if (s.path.ends_with(relative)) return s;
  throw std::runtime_error("no catalogue scenario " + relative);
}

Duration any_ns(std::int64_t lo, std::int64_t hi) { return Duration::ns(*rc::gen::inRange<std::int64_t>(lo, hi)); }

// Explore's options, drawn: which fault kinds, how many, how large.
ExploreOptions random_explore_options() {
  ExploreOptions o;
  o.max_faults = *rc::gen::inRange(1, 9);
  o.keep_faults = *rc::gen::arbitrary<bool>();
  const auto kinds = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 9));  // all but failover
  for (const int k : kinds) o.kinds.push_back(static_cast<FaultKind>(k));
  std::erase_if(o.kinds, [](FaultKind k) { return k == FaultKind::Restart || k == FaultKind::Heal; });
  // From 1 ms: with_random_faults draws pauses and outages from [1 ms, bound],
  // and a bound below 1 ms makes Rng::between(lo > hi) draw anything at all
  // (`explore --max-pause 500us` finds 31 s pauses: reported).
  if (*rc::gen::arbitrary<bool>()) o.max_pause = any_ns(1'000'000, 60'000'000'000);
  if (*rc::gen::arbitrary<bool>()) o.max_jump = any_ns(1'000'000, 60'000'000'000);
  if (*rc::gen::arbitrary<bool>()) o.max_outage = any_ns(1'000'000, 60'000'000'000);
  o.max_drift_ppm = *rc::gen::inRange<std::int64_t>(0, 900'000);
  return o;
}

bool takes(const Scenario& s, std::string_view option) {
  const AlgorithmInfo* a = find_algorithm(s.lock.algorithm);
  return std::any_of(a->options.begin(), a->options.end(), [&](const OptionInfo& o) { return o.key == option; });
}

DurationRange any_range(std::int64_t max_ns) {
  const Duration lo = any_ns(0, max_ns);
  return {lo, lo + any_ns(0, max_ns)};
}

// A catalogue scenario with random faults and random values for what the
// writer has to render exactly: ranges, odd nanoseconds, fractional ppm,
// binary fractions.
Scenario random_scenario() {
  const Scenario& base = *rc::gen::elementOf(bases());
  Scenario s = with_random_faults(base, *rc::gen::inRange<std::uint64_t>(1, 1'000'000'000), random_explore_options());
  // with_random_faults draws a restart up to max_outage after its crash, which
  // may be past the end of the run: a scenario the loader refuses (and which
  // `explore --out` writes: a bug in harness/explore.cpp, reported). Such a
  // restart never happens, so the run is the same without it.
  std::erase_if(s.faults, [&](const FaultSpec& f) { return f.at && *f.at >= s.duration; });
  if (*rc::gen::arbitrary<bool>()) {
    s.network.delay = any_range(20'000'000);
    s.network.loss = std::ldexp(static_cast<double>(*rc::gen::inRange<std::int64_t>(0, 1LL << 50)), -52);  // [0, 0.25)
    s.network.fifo = *rc::gen::arbitrary<bool>();
  }
  for (ClientConfig& c : s.clients) {
    if (*rc::gen::arbitrary<bool>()) continue;
    c.clock.offset = any_ns(-10'000'000'000, 10'000'000'000);
    c.clock.drift_ppb = *rc::gen::inRange<std::int64_t>(-500'000'000, 500'000'000);
    c.think = any_range(500'000'000);
  }
  // The algorithm's options through the scenario's own text, as a user writes them.
  auto quoted = [](const std::string& t) { return "\"" + t + "\""; };
  if (takes(s, "retry_delay") && *rc::gen::arbitrary<bool>()) {
    // etcd's library flavours retry after one positive duration (the
    // application's loop, lockalgos/etcd.cpp), and only they take it; the
    // Redis algorithms draw from a range that may be zero.
    if (s.lock.algorithm == "etcd") {
      if (s.lock.flavour == "python-etcd3" || s.lock.flavour == "etcd3-node")
        set_lock_option(s, "retry_delay", quoted(format_duration(any_ns(1'000'000, 300'000'000))));
    } else
      set_lock_option(s, "retry_delay", quoted(format_range(any_range(300'000'000))));
  }
  if (takes(s, "request_timeout") && *rc::gen::arbitrary<bool>())
    set_lock_option(s, "request_timeout", quoted(format_duration(any_ns(1, 5'000'000'000))));
  if (takes(s, "drift_factor") && *rc::gen::arbitrary<bool>()) {
    const double f = std::ldexp(static_cast<double>(*rc::gen::inRange<std::int64_t>(0, 1LL << 50)), -53);
    std::string text = fmt::format("{}", f);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    set_lock_option(s, "drift_factor", text);
  }
  return s;
}

RunResult run_bounded(const Scenario& s) {
  RunOptions o;
  o.max_events = 100'000;
  o.keep_events = 0;
  return run_scenario(s, o);
}

}  // namespace

TEST_CASE("every random scenario written as TOML and read back runs to the same trace hash") {
  check_property("the writer's round trip", 1000, [] {
    const Scenario s = random_scenario();
    const std::string text = to_toml(s);
    RC_LOG() << text;
    Scenario again;
    try {
      again = parse_scenario(text, "written.toml");
    } catch (const ScenarioError& e) {
      RC_FAIL(std::string("the loader refuses what the writer wrote: ") + e.what());
    }
    RC_ASSERT(to_toml(again) == text);
    const RunResult a = run_bounded(s), b = run_bounded(again);
    RC_ASSERT(a.trace_hash == b.trace_hash);
    RC_ASSERT(a.budget_exhausted == b.budget_exhausted);
  });
}

namespace {

// Whether `small` can be the shrinker's version of `big`: the same fault (kind,
// target, link, groups), no larger in any magnitude: the shrinker rounds to
// readable units, but never past what the run drew.
bool no_larger(const FaultSpec& small, const FaultSpec& big) {
  if (small.kind != big.kind || small.target != big.target || small.from != big.from || small.to != big.to ||
      small.groups != big.groups || small.one_way != big.one_way || small.count != big.count ||
      small.probability != big.probability || small.duration.has_value() != big.duration.has_value())
    return false;
  auto within = [](Duration a, Duration b) { return (a >= Duration::zero()) == (b >= Duration::zero()) && (a < Duration::zero() ? -a <= -b : a <= b); };
  if (small.duration && !within(*small.duration, *big.duration)) return false;
  if (!within(small.by, big.by)) return false;
  return small.drift_ppb == 0 ? big.drift_ppb == 0
                              : (small.drift_ppb < 0) == (big.drift_ppb < 0) && std::abs(small.drift_ppb) <= std::abs(big.drift_ppb);
}

// The shrinker keeps its faults in the order it found them: what is left is a
// subsequence of the original, each fault no larger than the one it came from.
bool shrunk_from(const std::vector<FaultSpec>& small, const std::vector<FaultSpec>& big) {
  std::size_t j = 0;
  for (const FaultSpec& f : small) {
    while (j < big.size() && !no_larger(f, big[j])) ++j;
    if (j == big.size()) return false;
    ++j;
  }
  return true;
}

}  // namespace

TEST_CASE("the shrinker returns a scenario that fails the same way with fewer or equal faults, none larger") {
  // Short runs of three small catalogue scenarios, whose explored runs often fail.
  check_property("the shrinker's result", 300, [] {
    const Scenario& base = base_named(*rc::gen::element<std::string>("kleppmann/gc-pause.toml", "redisson/watchdog-stw-pause.toml",
                                                                     "zookeeper/session-expiry-pause.toml", "etcd/pause-after-lock.toml"));
    ExploreOptions o;
    o.max_faults = *rc::gen::inRange(1, 6);
    // The first failing run from a drawn seed on.
    const std::uint64_t from = *rc::gen::inRange<std::uint64_t>(1, 1'000'000);
    Scenario failing;
    std::set<ViolationKind> verdict;
    for (std::uint64_t seed = from; seed < from + 200 && verdict.empty(); ++seed) {
      failing = with_random_faults(base, seed, o);
      verdict = run_bounded(failing).verdict;
    }
    RC_PRE(!verdict.empty());
    const ViolationKind kind = *rc::gen::elementOf(std::vector<ViolationKind>(verdict.begin(), verdict.end()));
    RC_LOG() << to_toml(failing) << "\nshrinking for " << violation_name(kind) << "\n";
    const ShrinkResult shrunk = shrink(failing, kind, 100'000);
    RC_LOG() << to_toml(shrunk.scenario);
    RC_ASSERT(run_bounded(shrunk.scenario).verdict.count(kind) == 1u);
    RC_ASSERT(shrunk.scenario.faults.size() <= failing.faults.size());
    RC_ASSERT(shrunk.scenario.clients.size() <= failing.clients.size());
    RC_ASSERT(shrunk_from(shrunk.scenario.faults, failing.faults));
  });
}

namespace {

bool same(const ExploreSummary& a, const ExploreSummary& b) {
  if (a.runs != b.runs || a.violating != b.violating || a.budget_exhausted != b.budget_exhausted || a.by_kind != b.by_kind)
    return false;
  for (const auto& [k, r] : a.first)
    if (!b.first.count(k) || b.first.at(k).seed != r.seed || b.first.at(k).index != r.index) return false;
  return a.first.size() == b.first.size();
}

}  // namespace

TEST_CASE("merging explore's shards in any order gives the unsharded summary, and names exactly the missing ones") {
  check_property("merging shards", 60, [] {
    const Scenario& base = base_named(*rc::gen::element<std::string>("redisson/watchdog-stw-pause.toml", "kleppmann/redlock-clock-jump.toml",
                                                                     "redis/redlock-restart-no-persistence.toml"));
    ExploreOptions o;
    o.runs = *rc::gen::inRange<std::uint64_t>(0, 80);
    o.seed = *rc::gen::inRange<std::uint64_t>(1, 1'000'000'000);
    o.max_faults = *rc::gen::inRange(1, 6);
    const ExploreSummary whole = explore(base, o);
    o.shard_count = *rc::gen::inRange<std::uint64_t>(1, 7);
    std::vector<std::string> texts, names;
    for (std::uint64_t k = 0; k < o.shard_count; ++k) {
      o.shard_index = k;
      texts.push_back(explore_json(base, o, explore(base, o)));
      names.push_back("shard" + std::to_string(k + 1));
    }
    // Any order: sort the shards by drawn keys.
    const auto keys = *rc::gen::container<std::vector<int>>(texts.size(), rc::gen::arbitrary<int>());
    std::vector<std::size_t> order(texts.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    // And leave some out, perhaps.
    const auto keep = *rc::gen::inRange<std::size_t>(1, texts.size() + 1);
    std::vector<std::string> t, n;
    std::vector<std::uint64_t> missing;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i < keep) {
        t.push_back(texts[order[i]]);
        n.push_back(names[order[i]]);
      } else {
        missing.push_back(order[i] + 1);
      }
    }
    std::sort(missing.begin(), missing.end());
    const Merged m = merge_results(t, n);
    RC_ASSERT(m.missing_shards == missing);
    if (missing.empty()) RC_ASSERT(same(m.summary, whole));
    RC_ASSERT(m.summary.runs <= whole.runs);
    RC_ASSERT(m.options.runs == o.runs);
    RC_ASSERT(m.options.seed == o.seed);
  });
}

}  // namespace property_harness_test
