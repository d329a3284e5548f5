#include "harness/explore_reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "harness/explore_schedule.hpp"
#include "harness/faults.hpp"

namespace locksim {

std::string Anchor::name() const { return process + " " + std::string(event_name(event)); }

std::string Anchor::on() const { return occurrence != 1 ? fmt::format("{}#{}", name(), occurrence) : name(); }

Scenario unfaulted(const Scenario& base, const ExploreOptions& o) {
  Scenario s = base;
  const auto window = s.expect.liveness_window;
  s.expect = Expectation{};
  s.expect.liveness_window = window;
  if (!o.keep_faults) s.faults.clear();
  return s;
}

Duration lease_of(const Scenario& s) {
  return s.lock.options->lease();
}

namespace {

// The durations a scenario file gives that a lock's safety is measured against.
std::vector<NamedDuration> constants_of(const Scenario& s, Duration lease, Duration handover,
                                        const std::vector<Duration>& validities) {
  std::vector<NamedDuration> all;
  auto add = [&](std::string name, Duration d) {
    if (d > Duration::zero()) all.push_back({std::move(name), d, ""});
  };
  add("lease", lease);
  add("2 x lease", lease * 2);
  add("handover", handover);  // past it, another client may hold the lock (lockalgos/options.hpp)
  for (Duration v : validities) add("validity", v);
  for (const NodeConfig& n : s.nodes) {
    if (!n.replica_of.empty()) add(n.name + " replication lag", n.replication_lag.hi);
    add(n.name + " restart delay", n.restart_delay);
  }
  if (s.sentinel.present) {
    add("down-after", s.sentinel.down_after);
    add("sentinel ping", s.sentinel.ping_period);
  }
  for (const ClientConfig& c : s.clients) {
    add(c.name + (c.job == JobKind::Hold ? " hold" : " work"), c.job == JobKind::Hold ? c.hold.hi : c.work.hi);
    add(c.name + " start", c.start.hi);
    add(c.name + " think", c.think.hi);
    add(c.name + " storage timeout", c.storage_timeout);
  }
  add("network delay", s.network.delay.hi);
  // One name per value: the first (the lease before what equals it).
  std::vector<NamedDuration> out;
  for (NamedDuration& d : all)
    if (std::none_of(out.begin(), out.end(), [&](const NamedDuration& o) { return o.value == d.value; }))
      out.push_back(std::move(d));
  return out;
}

}  // namespace

Reference reference_run(const Scenario& base, const ExploreOptions& o) {
  Reference ref;
  ref.lease = lease_of(base);
  std::map<std::pair<ProcId, Ev>, int> seen;
  std::vector<Duration> validities;
  RunOptions ro;
  ro.max_events = o.max_events;
  ro.keep_events = 0;
  ro.listener = [&](const Trace&, const TraceEvent&) { ++ref.events; };
  // The events the fault engine sees (those before it is armed are not anchors).
  ro.at_anchor = [&](const Trace& t, const TraceEvent& e, const std::function<std::uint64_t()>&) {
    const int n = ++seen[{e.process, e.kind}];
    if (e.kind == Ev::Acquired && e.value >= 0 && validities.size() < 2) {
      const Duration v = Duration::ns(e.value - e.mono.ns());
      if (std::find(validities.begin(), validities.end(), v) == validities.end()) validities.push_back(v);
    }
    if (ref.anchors.size() < kMaxAnchors) ref.anchors.push_back({t.name(e.process), e.kind, n, e.at - Instant::zero()});
  };
  run_scenario(unfaulted(base, o), ro);
  ref.constants = constants_of(base, ref.lease, base.lock.options->handover(), validities);
  return ref;
}

void events_after(const Reference& r, Duration from, Duration within, std::vector<FaultDraw::Later>& out,
                  std::size_t limit) {
  out.clear();
  auto it = std::upper_bound(r.anchors.begin(), r.anchors.end(), from,
                             [](Duration t, const Anchor& a) { return t < a.at; });
  for (; it != r.anchors.end() && out.size() < limit && it->at - from <= within; ++it)
    out.push_back({&it->process, it->event, it->at - from});
}

}  // namespace locksim
