// A shrunk scenario's words (reports/shrunk.hpp).
#include "reports/shrunk.hpp"

#include <fmt/format.h>

#include <string>

#include "harness/faults/kind.hpp"
#include "reports/words.hpp"

namespace locksim {

void tell_shrunk(Scenario& shrunk, const Scenario& failing) {
  // Named by every kind the shrunk run shows: shrunk for another kind, the
  // same schedule is the same file (the command line writes it once).
  std::string what;
  for (ViolationKind v : shrunk.expect.violations) what += (what.empty() ? "" : ", ") + std::string(violation_name(v));
  shrunk.title = fmt::format("Found by explore: {} in \"{}\"", what, failing.title);
  shrunk.source = fmt::format("explore: {}, run seed {}", failing.path, failing.seed);
  std::string about = fmt::format(
      "locksim explore ran {} under random fault schedules\n"
      "and found {}. Shrunk to the smallest schedule that still fails\n"
      "the same way, the run needs these faults:\n",
      failing.path, what);
  for (const FaultSpec& f : shrunk.faults) about += "  - " + say(Lang::En, describe_fault(f)) + "\n";
  if (shrunk.faults.empty()) about += "  - none: the algorithm fails on its own with this seed\n";
  about += "`locksim run` on this file replays it; its narrative tells how it happened.\n";
  shrunk.about = about;
}

}  // namespace locksim
