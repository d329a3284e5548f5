#include "harness/explore_boundary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <regex>

#include "harness/faults/kind.hpp"
#include "harness/scenario_knobs.hpp"
#include "harness/run.hpp"

namespace locksim {

namespace {

// A number of a scenario the search can move (harness/scenario_knobs.hpp's
// table), as a duration: the bisection and its report count nanoseconds.
Knob knob_of(const Scenario& s, const std::string& parameter) {
  Knob k = knob_of(s, parameter, "--boundary");
  if (k.unit != KnobUnit::Duration)
    throw ScenarioError("--boundary: \"" + parameter + "\" is " + std::string(knob_unit_name(k.unit)) +
                        ", not a duration: the search moves durations (locksim sweep moves any number)");
  if (!k.get(s))
    throw ScenarioError("--boundary: " + s.path + " does not give " + parameter + " a single value to start from: write one");
  return k;
}

Duration given_value(const Knob& k, const Scenario& s) { return Duration::ns(*k.get(s)); }

class Prober {
 public:
  Prober(const Scenario& s, const Knob& k, std::uint64_t max_events) : s_(s), k_(k), max_events_(max_events) {}
  BoundarySide at(Duration value) {
    ++runs;
    BoundarySide side{value, {}, {}, s_};
    k_.set(side.scenario, value.count_ns());
    RunOptions o;
    o.max_events = max_events_;
    o.keep_events = 0;
    const RunResult r = run_scenario(side.scenario, o);
    side.verdict = r.verdict;
    if (!r.violations.empty()) side.detail = r.violations.front().detail;
    return side;
  }
  int runs = 0;

 private:
  const Scenario& s_;
  const Knob& k_;
  std::uint64_t max_events_;
};

}  // namespace

std::string boundary_parameters() { return "a duration of " + knob_parameters(); }

std::vector<const BoundaryEdge*> BoundaryResult::edges() const {
  std::vector<const BoundaryEdge*> v;
  if (lower) v.push_back(&*lower);
  if (upper) v.push_back(&*upper);
  return v;
}

namespace {

// Bisects, to the nanosecond, between a value known to give the file's
// verdict and one that does not.
BoundaryEdge bisect(Prober& probe, const std::set<ViolationKind>& verdict, BoundarySide given, BoundarySide not_given) {
  while ((given.value > not_given.value ? given.value - not_given.value : not_given.value - given.value) > Duration::ns(1)) {
    const Duration lo = min(given.value, not_given.value), hi = max(given.value, not_given.value);
    BoundarySide mid = probe.at(lo + (hi - lo) / 2);
    if (mid.verdict == verdict) given = std::move(mid);
    else not_given = std::move(mid);
  }
  if (given.value < not_given.value) return {std::move(given), std::move(not_given)};
  return {std::move(not_given), std::move(given)};
}

// Walks from the file's value toward `limit` — halving the distance to the
// least value going down, doubling going up — and stops at the first value
// whose verdict differs: the nearest flip on that side, not merely some flip
// (a lease of 1 ms is stuck, but gc-pause's question is the edge near 40 s).
std::optional<BoundaryEdge> nearest_edge(Prober& probe, const BoundarySide& given, Duration limit, Duration& reached) {
  const bool down = limit < given.value;
  BoundarySide same = given;
  while (same.value != limit) {
    Duration next = down ? same.value - max((same.value - limit) / 2, Duration::ns(1))
                         : min(limit, max(same.value * 2, same.value + Duration::ms(1)));
    if (down && next - limit < Duration::ms(1)) next = limit;  // the last steps down: the least value itself
    reached = next;
    BoundarySide probe_side = probe.at(next);
    if (probe_side.verdict != given.verdict) return bisect(probe, given.verdict, std::move(same), std::move(probe_side));
    same = std::move(probe_side);
  }
  return std::nullopt;
}

}  // namespace

BoundaryResult find_boundary(const Scenario& s, const std::string& parameter, std::uint64_t max_events) {
  const Knob k = knob_of(s, parameter);
  Prober probe(s, k, max_events);
  BoundaryResult b;
  b.parameter = parameter;
  b.subject = k.subject;
  b.noun = k.noun;
  b.given = probe.at(given_value(k, s));
  b.lowest = b.highest = b.given.value;
  const Duration lowest = Duration::ns(std::max<std::int64_t>(k.lowest, 0)), highest = Duration::ns(k.search_highest);
  if (lowest < b.given.value) b.lower = nearest_edge(probe, b.given, lowest, b.lowest);
  if (b.given.value < highest) b.upper = nearest_edge(probe, b.given, highest, b.highest);
  b.runs = probe.runs;
  return b;
}

}  // namespace locksim
