#include "harness/explore_boundary.hpp"

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <regex>

#include "harness/faults/kind.hpp"
#include "harness/run.hpp"
#include "judge/words.hpp"

namespace locksim {

namespace {

// A number of a scenario the search can move: read it, set it, and the range it may take.
struct Knob {
  std::string subject, noun;
  std::function<Duration(const Scenario&)> get;
  std::function<void(Scenario&, Duration)> set;
  Duration lowest, highest;
};

// The table of what --boundary can move. A [lock] option is one more entry
// here ("lock.ttl"), once the lock options API exposes the lease
// (options.lease()): get and set it, from a nanosecond up.
Knob knob_of(const Scenario& s, const std::string& parameter) {
  static const std::regex fault(R"(fault\[(\d+)\]\.(duration|by|at|after))");
  std::smatch m;
  if (!std::regex_match(parameter, m, fault))
    throw ScenarioError("--boundary: \"" + parameter + "\" is not a number the search can move (" + boundary_parameters() + ")");
  const std::size_t n = std::stoul(m[1]);
  const std::string field = m[2];
  if (n < 1 || n > s.faults.size())
    throw ScenarioError("--boundary: " + s.path + " has " + counted(s.faults.size(), "fault") + "; fault[" + m[1].str() +
                        "] is not one (they count from 1, in file order)");
  const std::size_t i = n - 1;
  const FaultSpec& f = s.faults[i];
  const std::string name = "fault[" + std::to_string(n) + "]";
  Knob k;
  k.subject = name + ", " + describe_fault(f);
  const Duration longest = s.duration * 4;
  if (field == "duration") {
    if (!f.duration) throw ScenarioError("--boundary: " + name + " (" + std::string(fault_kind_name(f.kind)) + ") has no duration");
    k.noun = "a " + std::string(fault_kind_name(f.kind)) + " of";
    k.get = [i](const Scenario& t) { return *t.faults[i].duration; };
    k.set = [i](Scenario& t, Duration d) { t.faults[i].duration = d; };
    k.lowest = Duration::ns(1);
    k.highest = max(longest, *f.duration);
  } else if (field == "by") {
    if (f.by.is_zero()) throw ScenarioError("--boundary: " + name + " (" + std::string(fault_kind_name(f.kind)) + ") has no 'by'");
    k.noun = f.kind == FaultKind::ClockJump ? "a clock jump of" : "a delay of";
    const bool back = f.by < Duration::zero();
    k.get = [i, back](const Scenario& t) { return back ? -t.faults[i].by : t.faults[i].by; };
    k.set = [i, back](Scenario& t, Duration d) { t.faults[i].by = back ? -d : d; };
    k.lowest = Duration::ns(1);
    k.highest = max(longest, k.get(s));
  } else if (field == "at") {
    if (!f.at) throw ScenarioError("--boundary: " + name + " waits for an event (on = ...): move its 'after' instead");
    k.noun = name + " at";
    k.get = [i](const Scenario& t) { return *t.faults[i].at; };
    k.set = [i](Scenario& t, Duration d) { t.faults[i].at = d; };
    k.lowest = Duration::zero();
    k.highest = s.duration - Duration::ns(1);
  } else {
    if (f.at) throw ScenarioError("--boundary: " + name + " has a time (at = ...), not an 'after'");
    k.noun = name + " this long after its event:";
    k.get = [i](const Scenario& t) { return t.faults[i].after; };
    k.set = [i](Scenario& t, Duration d) { t.faults[i].after = d; };
    k.lowest = Duration::zero();
    k.highest = max(longest, f.after);
  }
  return k;
}

class Prober {
 public:
  Prober(const Scenario& s, const Knob& k, std::uint64_t max_events) : s_(s), k_(k), max_events_(max_events) {}
  BoundarySide at(Duration value) {
    ++runs;
    BoundarySide side{value, {}, "", s_};
    k_.set(side.scenario, value);
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

std::string boundary_parameters() { return "fault[N].duration, fault[N].by, fault[N].at, fault[N].after; N counts from 1"; }

BoundaryResult find_boundary(const Scenario& s, const std::string& parameter, std::uint64_t max_events) {
  const Knob k = knob_of(s, parameter);
  Prober probe(s, k, max_events);
  BoundaryResult b;
  b.parameter = parameter;
  b.subject = k.subject;
  b.noun = k.noun;
  b.given = probe.at(k.get(s));
  b.lowest = b.highest = b.given.value;
  // The other verdict: toward the least value first, then up, doubling.
  std::optional<BoundarySide> other;
  BoundarySide same = b.given;
  if (k.lowest < b.given.value) {
    b.lowest = k.lowest;
    BoundarySide low = probe.at(k.lowest);
    if (low.verdict != b.given.verdict) other = std::move(low);
  }
  for (Duration up = b.given.value; !other && up < k.highest;) {
    up = min(k.highest, max(up * 2, up + Duration::ms(1)));
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
