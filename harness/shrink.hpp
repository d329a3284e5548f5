// Shrinking a failing run to a small scenario that still fails the same way
// (delta debugging): drop faults, shorten their durations and magnitudes,
// move them as late as they can come, round their times, drop clients not
// involved. Every trial is one run with
// the same seed, so what remains is exactly what the failure needs.
#pragma once

#include <functional>

#include "harness/scenario.hpp"

namespace locksim {

struct ShrinkResult {
  Scenario scenario;  // with [expect] saying what it shows (its words: reports/shrunk.hpp)
  int trials = 0;     // simulations run
};

// REQUIRES: a run of `failing` shows a violation of `kind`. `on_trial` hears
// the count of trials so far as each starts (the playground's progress).
ShrinkResult shrink(const Scenario& failing, ViolationKind kind, std::uint64_t max_events = 2'000'000,
                    const std::function<void(int trials)>& on_trial = {});

}  // namespace locksim
