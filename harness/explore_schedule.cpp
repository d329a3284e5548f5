// Drawing one run's fault schedule from its seed: which kinds this run
// enables (the swarm), how many faults, when, and each fault's own draws
// (harness/faults/).
#include "harness/explore_schedule.hpp"

#include "harness/faults/kind.hpp"
#include "sim/rng.hpp"

namespace locksim {

Scenario with_random_faults(const Scenario& base, std::uint64_t seed, const ExploreOptions& o) {
  Scenario s = base;
  s.seed = seed;
  // What the base file expects was about its own faults, not these.
  const auto window = s.expect.liveness_window;
  s.expect = Expectation{};
  s.expect.liveness_window = window;
  if (!o.keep_faults) s.faults.clear();
  Rng rng = Rng(seed).fork("explore/schedule");
  const ScheduleBounds b = schedule_bounds(base, o);

  FaultDraw d{.rng = rng, .base = base, .max_pause = b.pause, .max_jump = b.jump, .max_outage = b.outage,
              .max_drift_ppm = o.max_drift_ppm};
  for (const ClientConfig& c : base.clients) d.clients.push_back(c.name);
  for (const NodeConfig& n : base.nodes) {
    d.nodes.push_back(n.name);
    if (!n.replica_of.empty()) d.masters_with_replicas.push_back(n.replica_of);
  }
  d.everyone = d.clients;
  d.everyone.insert(d.everyone.end(), d.nodes.begin(), d.nodes.end());
  d.everyone.push_back(base.storage.name);

  // Swarm: each kind on offer is enabled with probability 1/2 (at least one).
  std::vector<FaultKind> allowed = o.kinds.empty() ? drawn_kinds(base) : o.kinds;
  std::erase_if(allowed, [&](FaultKind k) { return fault_kind(k).offered && !fault_kind(k).offered(base); });
  std::vector<FaultKind> enabled;
  for (FaultKind k : allowed)
    if (rng.chance(0.5)) enabled.push_back(k);
  if (enabled.empty() && !allowed.empty()) enabled.push_back(pick(rng, allowed));
  if (enabled.empty()) return s;

  const int count = static_cast<int>(rng.between(std::int64_t{1}, std::int64_t{o.max_faults}));
  for (int i = 0; i < count; ++i) {
    FaultSpec f;
    f.kind = pick(rng, enabled);
    f.at = rng.between(Duration::zero(), b.horizon);
    // A kind explore does not draw on its own (named in o.kinds all the same) draws nothing.
    if (const auto draw = fault_kind(f.kind).draw) draw(d, f, s.faults);
  }
  // The fault engine schedules by time; keep the file readable in the same order.
  sort_faults(s.faults);
  return s;
}

}  // namespace locksim
