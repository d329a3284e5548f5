// `locksim explore --exhaustive`: a bounded exhaustive search. Every
// schedule of up to `depth` faults: each fault on an anchor (an event a fault
// can wait for) of the fault-free run, or of the run the faults before it
// lead to, × each of a few lengths around the scenario's constants × each
// target its kind takes (harness/faults/: FaultKindInfo::choices). Each
// schedule is one run from the start (a run cannot be forked); a state
// already explored with as many faults left to place is not explored again
// (TLC's fingerprint set; state_fingerprint.hpp says what a state is).
//
// What it shows when it finds nothing: no violation in any of these
// schedules, up to the fingerprint's abstraction (two states that agree on it
// are taken to have the same futures). Shards split the schedules by their
// first fault (--shard K/N); every shard runs the one-fault schedules, whose
// states decide which shard explores each state, so the shards' sums are
// the unsharded search's.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "harness/explore.hpp"

namespace locksim {

struct ExhaustiveOptions {
  int depth = 2;
  std::vector<FaultKind> kinds;   // empty: pause and crash
  std::vector<Duration> lengths;  // empty: exhaustive_lengths()
  bool prune = true;              // skip states already explored
  std::size_t window = 0;         // >0: a fault's anchor is among the first `window` after the previous fault's
};

// Where a fault goes in the search: the anchor's position among the anchors
// of the run it is placed in, and the choice's position at an anchor.
struct Placement {
  std::uint32_t anchor = 0, choice = 0;
  auto operator<=>(const Placement&) const = default;
};

// The search's branching: after a fault placed on anchor `last.anchor` with
// choice `last.choice`, the next goes on the same anchor with a later choice
// (two faults on one anchor commute: each pair once), or on a later anchor
// of that run (it has `anchors`), within `window` anchors of it (0: any).
struct NextFaults {
  std::uint32_t first_choice = 0;      // on the same anchor: this choice and the later ones
  std::vector<std::uint32_t> anchors;  // the later anchors, in order
};
NextFaults next_faults(Placement last, std::size_t anchors, std::size_t window);

// The pruning rule: a state (its fingerprint) reached again is explored
// again only with more faults left to place than it was explored with; the
// set remembers the most. False: skip it, its subtree was searched.
using Visited = std::unordered_map<std::uint64_t, int>;
bool claim_state(Visited& visited, std::uint64_t fingerprint, int budget);

// The search's order: fewer faults first, then as the search placed them.
bool before(const std::vector<Placement>& a, const std::vector<Placement>& b);

struct ExhaustiveFinding {
  std::vector<Placement> path;  // the schedule's identity, in the search's order
  std::vector<FaultSpec> faults;
  // A merged shard's finding: its faults as the shard's JSON said them, "; "-
  // separated (a merge has no FaultSpecs); a search's own has `faults`.
  std::string described;
};

struct ExhaustiveSummary {
  std::size_t anchors = 0;               // of the fault-free run
  std::size_t choices = 0;               // per anchor
  std::vector<Duration> lengths;
  std::vector<FaultKind> kinds;
  std::vector<std::uint64_t> schedules;  // by number of faults (index 0: one fault)
  std::uint64_t states = 0;              // distinct states explored (choices tried there)
  std::uint64_t skipped = 0;             // anchors whose state had been explored already
  std::uint64_t budget_exhausted = 0;
  std::map<ViolationKind, std::uint64_t> by_kind;        // schedules showing each
  std::map<ViolationKind, ExhaustiveFinding> first;      // the first in the search's order
  std::uint64_t total() const;
};

// The default lengths: each of the scenario's constants (explore_reference.hpp)
// and a millisecond more; the lease and a validity a millisecond less too.
std::vector<Duration> exhaustive_lengths(const Scenario& base, const ExploreOptions& o);

// REQUIRES: o.shard_count >= 1. Runs on o.jobs threads; the summary does not depend on them.
ExhaustiveSummary explore_exhaustive(const Scenario& base, const ExploreOptions& o, const ExhaustiveOptions& x,
                                     const Progress& progress = {});

bool exhaustive_as_expected(const Scenario& base, const ExhaustiveSummary& s);

}  // namespace locksim
