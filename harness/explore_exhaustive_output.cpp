// Whether a bounded exhaustive search found only what its scenario expects
// (its words, JSON and merged shards are reports/'s: reports/exhaustive_output.cpp).
#include <algorithm>
#include <set>

#include "harness/explore_exhaustive.hpp"

namespace locksim {

bool exhaustive_as_expected(const Scenario& base, const ExhaustiveSummary& s) {
  std::set<ViolationKind> found;
  for (const auto& [k, n] : s.by_kind)
    if (n) found.insert(k);
  if (!base.expect.present) return found.empty();
  return std::includes(base.expect.violations.begin(), base.expect.violations.end(), found.begin(), found.end());
}

}  // namespace locksim
