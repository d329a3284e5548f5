// `locksim explore FILE --boundary "fault[1].duration"`: where, to the
// nanosecond, the verdict of a scenario flips as one of its numbers changes,
// found by bisection on each side of the file's value, with the run on each
// side of each flip ("the attack needs a pause of at least 30.001s").
//
// The numbers it can move are the durations of harness/scenario_knobs.hpp's
// table: the faults' times and lengths, [lock] durations (lock.ttl), the
// clients' and nodes' durations.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/scenario.hpp"
#include "sim/phrase.hpp"

namespace locksim {

struct BoundarySide {
  Duration value;
  std::set<ViolationKind> verdict;
  Phrase detail;       // the first violation (id kNoWord when none)
  Scenario scenario;   // the file with this value
};

// Where the verdict flips: above.value == below.value + 1ns, their verdicts
// differ, and one of them is the file's.
struct BoundaryEdge {
  BoundarySide below, above;
};

// The search looks both ways from the file's value: the nearest flip below
// it and the nearest above it. gc-pause's lease, for one, has two: below
// 1 ms a client is stuck, above about 40 s the pause no longer outlives it.
struct BoundaryResult {
  std::string parameter;  // as given: "fault[1].duration"
  Phrase subject;         // "fault[1], at 1s client1 pauses for 40s" (W::KnobFault)
  Phrase noun;            // "a pause of", "a clock jump of", "fault[1] at"
  BoundarySide given;
  std::optional<BoundaryEdge> lower, upper;  // the nearest flip below and above the given value
  Duration lowest, highest;                  // the range searched (the verdict was given's between the edges)
  int runs = 0;
  bool found() const { return lower || upper; }
  // The edges found, lower first.
  std::vector<const BoundaryEdge*> edges() const;
};

// Throws ScenarioError for a parameter it cannot move (naming the ones it can).
BoundaryResult find_boundary(const Scenario& s, const std::string& parameter, std::uint64_t max_events = 2'000'000);

// What the parameters look like, for messages and --help.
std::string boundary_parameters();

}  // namespace locksim
