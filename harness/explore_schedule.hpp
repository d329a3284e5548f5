// Inside explore: what drawing a run's fault schedule (explore_schedule.cpp)
// needs from the runner (explore.cpp).
#pragma once

#include "harness/explore.hpp"
#include "harness/faults/kind.hpp"

namespace locksim {

struct Anchor;  // explore_reference.hpp

struct ScheduleBounds {
  Duration pause, jump, outage;  // the largest pause, clock jump and outage drawn
  Duration horizon;              // faults start before this
};

// Scaled to the lock's lease unless the options say otherwise (explore.cpp,
// beside the lock options the lease comes from).
ScheduleBounds schedule_bounds(const Scenario& s, const ExploreOptions& o);

// Draws runs' fault schedules from their seeds (with_random_faults). What
// does not depend on the seed — the bounds, the kinds on offer, the base's
// process names — is worked out once, at construction, and the vectors a
// draw fills keep their capacity from one run to the next: explore's
// workers keep one each. REQUIRES: base, options and reference outlive it.
class ScheduleDrawer {
 public:
  ScheduleDrawer(const Scenario& base, const ExploreOptions& o, const Reference& reference);
  ScheduleDrawer(const ScheduleDrawer&) = delete;
  ScheduleDrawer& operator=(const ScheduleDrawer&) = delete;
  // Appends run `seed`'s faults to `faults` and sorts them all (the base's
  // kept faults may be there already), as with_random_faults does; and
  // fills `notes` in, if given.
  void draw(std::uint64_t seed, std::vector<FaultSpec>& faults, DrawNotes* notes);
  // The notes of the last draw (cleared first): their words are built only
  // when asked for (explore keeps a run's notes only if it found something).
  void notes(DrawNotes& out) const;

 private:
  const Scenario& base_;
  const ExploreOptions& o_;
  const Reference& ref_;
  const ScheduleBounds bounds_;
  std::vector<FaultKind> allowed_;  // the kinds on offer to the swarm
  Rng rng_;                         // the run's schedule stream, drawn from anew each run
  FaultDraw d_;                     // its process names filled in once
  std::vector<FaultKind> enabled_;
  std::vector<FaultSpec> drawn_;      // a strike's fault, before it is struck on several nodes
  std::vector<std::size_t> pool_;     // the nodes not struck yet
  FaultSortScratch sort_scratch_;
  // The last draw's notes, per fault, as pointers into the reference (no words).
  struct Note {
    const Anchor* anchor;  // what it waited for (null: a time)
    std::size_t struck;    // on how many nodes at once (0, 1: one)
    FaultDraw::LengthSource length;
  };
  std::vector<Note> notes_;
};

}  // namespace locksim
