// The explorer's figures a report needs that are not words: the Wilson
// interval, and the command that replays a run (its text, JSON and merged
// shards are reports/'s: reports/explore_output.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "harness/explore.hpp"
#include "harness/faults/kind.hpp"

namespace locksim {

std::pair<double, double> wilson95(std::uint64_t k, std::uint64_t n) {
  if (n == 0) return {0.0, 1.0};
  const double z = 1.959963984540054, nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
  const double denom = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

namespace {
// "pause,clock-jump": as --faults takes them.
std::string kinds_list(const std::vector<FaultKind>& kinds) {
  std::string s;
  for (FaultKind k : kinds) (s += s.empty() ? "" : ",") += fault_kind_name(k);
  return s;
}
}  // namespace

// Everything that shapes a run, so the command replays exactly that run.
std::string explore_replay_command(const Scenario& base, const ExploreOptions& o, std::uint64_t seed) {
  std::string cmd = fmt::format("locksim explore {} --replay {}", base.path, seed);
  if (!o.kinds.empty()) cmd += " --faults " + kinds_list(o.kinds);
  if (o.max_faults != ExploreOptions{}.max_faults) cmd += fmt::format(" --max-faults {}", o.max_faults);
  if (o.keep_faults) cmd += " --keep-faults";
  if (o.max_events != ExploreOptions{}.max_events) cmd += fmt::format(" --max-events {}", o.max_events);
  if (o.max_pause) cmd += " --max-pause " + format_duration(*o.max_pause);
  if (o.max_jump) cmd += " --max-jump " + format_duration(*o.max_jump);
  if (o.max_outage) cmd += " --max-outage " + format_duration(*o.max_outage);
  if (o.max_drift_ppm != ExploreOptions{}.max_drift_ppm) cmd += fmt::format(" --max-drift-ppm {}", o.max_drift_ppm);
  if (o.liveness) cmd += " --liveness";
  if (o.liveness_window) cmd += " --liveness-window " + format_duration(*o.liveness_window);
  return cmd;
}

}  // namespace locksim
