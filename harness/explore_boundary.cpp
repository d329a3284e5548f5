#include "harness/explore_boundary.hpp"

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <regex>

#include "harness/faults/kind.hpp"
#include "harness/scenario_knobs.hpp"
#include "harness/run.hpp"
#include "judge/words.hpp"

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
    BoundarySide side{value, {}, "", s_};
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

std::string kinds_text(const std::set<ViolationKind>& v) {
  if (v.empty()) return "no violation";
  std::string s;
  for (ViolationKind k : v) s += (s.empty() ? "" : ", ") + std::string(violation_name(k));
  return s;
}

}  // namespace

std::string boundary_parameters() { return "a duration of " + knob_parameters(); }

BoundaryResult find_boundary(const Scenario& s, const std::string& parameter, std::uint64_t max_events) {
  const Knob k = knob_of(s, parameter);
  Prober probe(s, k, max_events);
  BoundaryResult b;
  b.parameter = parameter;
  b.subject = k.subject;
  b.noun = k.noun;
  b.given = probe.at(given_value(k, s));
  b.lowest = b.highest = b.given.value;
  // The other verdict: toward the least value first, then up, doubling.
  std::optional<BoundarySide> other;
  BoundarySide same = b.given;
  const Duration lowest = Duration::ns(std::max<std::int64_t>(k.lowest, 0)), highest = Duration::ns(k.search_highest);
  if (lowest < b.given.value) {
    b.lowest = lowest;
    BoundarySide low = probe.at(lowest);
    if (low.verdict != b.given.verdict) other = std::move(low);
  }
  for (Duration up = b.given.value; !other && up < highest;) {
    up = min(highest, max(up * 2, up + Duration::ms(1)));
    b.highest = up;
    BoundarySide high = probe.at(up);
    if (high.verdict != b.given.verdict) other = std::move(high);
    else same = std::move(high);  // the flip is above this
  }
  if (other) {
    // Bisect, to the nanosecond, between the nearest value known to give
    // the file's verdict and one that does not: the edge of the given verdict.
    BoundarySide given = other->value < b.given.value ? b.given : std::move(same);
    BoundarySide not_given = std::move(*other);
    while ((given.value > not_given.value ? given.value - not_given.value : not_given.value - given.value) > Duration::ns(1)) {
      const Duration lo = min(given.value, not_given.value), hi = max(given.value, not_given.value);
      BoundarySide mid = probe.at(lo + (hi - lo) / 2);
      if (mid.verdict == b.given.verdict) given = std::move(mid);
      else not_given = std::move(mid);
    }
    b.found = true;
    const bool given_below = given.value < not_given.value;
    b.below = given_below ? std::move(given) : std::move(not_given);
    b.above = given_below ? std::move(not_given) : std::move(given);
  }
  b.runs = probe.runs;
  return b;
}

std::string boundary_text(const Scenario& s, const BoundaryResult& b) {
  std::string out = fmt::format("{} — where the verdict flips as {} moves\n  {}\n", s.path, b.parameter, b.subject);
  if (!b.found) {
    out += fmt::format("\n  {} from {} to {}: the same verdict at every value tried ({}; {})\n",
                       b.parameter, format_duration(b.lowest), format_duration(b.highest), kinds_text(b.given.verdict),
                       counted(static_cast<std::uint64_t>(b.runs), "run"));
    return out;
  }
  out += fmt::format("\n  the verdict flips between {} and {} ({}, to the nanosecond):\n", format_duration(b.below.value),
                     format_duration(b.above.value), counted(static_cast<std::uint64_t>(b.runs), "run"));
  for (const BoundarySide* side : {&b.below, &b.above}) {
    out += fmt::format("    {:<22} {}\n", format_duration(side->value), kinds_text(side->verdict));
    if (!side->detail.empty()) out += fmt::format("    {:<22} {}\n", "", side->detail);
  }
  // Which side fails: the one with more violations (or any, against none).
  const bool up_fails = b.above.verdict.size() > b.below.verdict.size();
  out += fmt::format("\n  The failure ({}) needs {} {} {} (the file has {}).\n",
                     kinds_text(up_fails ? b.above.verdict : b.below.verdict), b.noun, up_fails ? "at least" : "at most",
                     format_duration(up_fails ? b.above.value : b.below.value), format_duration(b.given.value));
  return out;
}

std::string boundary_json(const Scenario& s, const BoundaryResult& b) {
  using json = nlohmann::ordered_json;
  auto side = [](const BoundarySide& x) {
    json v = json::array();
    for (ViolationKind k : x.verdict) v.push_back(violation_name(k));
    return json{{"value_ns", x.value.count_ns()}, {"value", format_duration(x.value)}, {"verdict", v}, {"detail", x.detail}};
  };
  json j = {{"scenario", s.path}, {"parameter", b.parameter}, {"subject", b.subject}, {"given", side(b.given)},
            {"found", b.found}, {"runs", b.runs},
            {"searched_ns", {b.lowest.count_ns(), b.highest.count_ns()}}};
  if (b.found) {
    j["below"] = side(b.below);
    j["above"] = side(b.above);
  }
  return j.dump();
}

}  // namespace locksim
