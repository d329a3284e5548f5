// What explore's draws have in common: a length measured against the
// scenario, and a target near the fault's anchor.
#include <algorithm>

#include "harness/faults/kind.hpp"

namespace locksim {

namespace {

// A value near `value`: itself, or a millisecond or a few either side, or up
// to a tenth more or less. Windows in a lock's life are often a network delay
// wide ("just after the read").
Duration give_or_take(Rng& rng, Duration value) {
  Duration little = Duration::zero();
  switch (rng.below(4)) {
    case 0: break;
    case 1: little = Duration::ms(1); break;
    case 2: little = rng.between(Duration::ms(1), Duration::ms(10)); break;
    default: little = rng.between(Duration::zero(), value / 10); break;
  }
  return rng.chance(0.25) ? value - little : value + little;
}

}  // namespace

Duration FaultDraw::length(Duration max, const std::string& avoid) {
  max = locksim::max(max, Duration::ms(1));
  std::vector<const Later*>& events = scratch_events;
  std::vector<const NamedDuration*>& fixed = scratch_fixed;
  events.clear();
  fixed.clear();
  for (const Later& e : later)
    if (*e.process != avoid && e.value <= max) events.push_back(&e);
  if (constants)
    for (const NamedDuration& c : *constants)
      if (c.value <= max) fixed.push_back(&c);
  const NamedDuration* constant = nullptr;
  const Later* event = nullptr;
  switch (rng.below(3)) {
    case 0: break;
    case 1: if (!fixed.empty()) constant = pick(rng, fixed); break;
    default:
      if (!events.empty()) event = pick(rng, events);
      else if (!fixed.empty()) constant = pick(rng, fixed);
      break;
  }
  length_source = {};
  if (!constant && !event) {
    length_source.random = true;
    return rng.between(Duration::ms(1), max);
  }
  length_source.constant = constant;
  if (event) {
    length_source.process = event->process;
    length_source.event = event->event;
  }
  return std::clamp(give_or_take(rng, constant ? constant->value : event->value), Duration::ms(1), max);
}

// A constant names itself ("lease"); an event of the reference run is "until client2 read".
const std::string& FaultDraw::target(const std::vector<std::string>& pool, double p) {
  const bool near = !anchor_process.empty() && std::find(pool.begin(), pool.end(), anchor_process) != pool.end();
  if (near && rng.chance(p)) return anchor_process;
  return pick(rng, pool);
}

}  // namespace locksim
