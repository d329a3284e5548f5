// Inside explore: what drawing a run's fault schedule (explore_schedule.cpp)
// needs from the runner (explore.cpp).
#pragma once

#include "harness/explore.hpp"

namespace locksim {

struct ScheduleBounds {
  Duration pause, jump, outage;  // the largest pause, clock jump and outage drawn
  Duration horizon;              // faults start before this
};

// Scaled to the lock's lease unless the options say otherwise (explore.cpp,
// beside the lock options the lease comes from).
ScheduleBounds schedule_bounds(const Scenario& s, const ExploreOptions& o);

}  // namespace locksim
