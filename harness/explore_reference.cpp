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
  auto add = [&](Measure m, const std::string& of, Duration d) {
    if (d > Duration::zero()) all.push_back({m, of, d});
  };
  add(Measure::Lease, "", lease);
  add(Measure::TwoLeases, "", lease * 2);
  add(Measure::Handover, "", handover);  // past it, another client may hold the lock (lockalgos/options.hpp)
  for (Duration v : validities) add(Measure::Validity, "", v);
  for (const NodeConfig& n : s.nodes) {
    if (!n.replica_of.empty()) add(Measure::ReplicationLag, n.name, n.replication_lag.hi);
    add(Measure::RestartDelay, n.name, n.restart_delay);
  }
  if (s.sentinel.present) {
    add(Measure::DownAfter, "", s.sentinel.down_after);
    add(Measure::SentinelPing, "", s.sentinel.ping_period);
  }
  for (const ClientConfig& c : s.clients) {
    if (c.job == JobKind::Hold) add(Measure::Hold, c.name, c.hold.hi);
    else add(Measure::Work, c.name, c.work.hi);
    add(Measure::Start, c.name, c.start.hi);
    add(Measure::Think, c.name, c.think.hi);
    add(Measure::StorageTimeout, c.name, c.storage_timeout);
  }
  add(Measure::NetworkDelay, "", s.network.delay.hi);
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
