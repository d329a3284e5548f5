// `locksim explore FILE --boundary "fault[1].duration"`: where, to the
// nanosecond, the verdict of a scenario flips as one of its numbers changes,
// found by bisection, with the run on each side ("the attack needs a pause
// of at least 30.001s").
//
// The numbers it can move are the durations of harness/scenario_knobs.hpp's
// table: the faults' times and lengths, [lock] durations (lock.ttl), the
// clients' and nodes' durations.
#pragma once

#include <set>
#include <string>

#include "harness/scenario.hpp"

namespace locksim {

struct BoundarySide {
  Duration value;
  std::set<ViolationKind> verdict;
  std::string detail;  // the first violation in words ("" when none)
  Scenario scenario;   // the file with this value
};

struct BoundaryResult {
  std::string parameter;  // as given: "fault[1].duration"
  std::string subject;    // "fault[1], at 1s client1 pauses for 40s"
  std::string noun;       // "a pause of", "a clock jump of", "fault[1] at"
  BoundarySide given;
  bool found = false;
  BoundarySide below, above;  // above.value == below.value + 1ns, their verdicts differ
  Duration lowest, highest;   // the range searched (the verdict was given's throughout when !found)
  int runs = 0;
};

// Throws ScenarioError for a parameter it cannot move (naming the ones it can).
BoundaryResult find_boundary(const Scenario& s, const std::string& parameter, std::uint64_t max_events = 2'000'000);

// What the parameters look like, for messages and --help.
std::string boundary_parameters();

std::string boundary_text(const Scenario& s, const BoundaryResult& b);
std::string boundary_json(const Scenario& s, const BoundaryResult& b);

}  // namespace locksim
