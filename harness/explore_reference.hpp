// What explore measures its faults against, besides the seed: the base
// scenario's reference run (without faults; with its own under
// --keep-faults) — the events a fault can wait for and when they came — and
// the scenario's own durations (the lease, a validity, a replication lag, a
// client's work). One per exploration, a function of the base scenario and
// the options: a run stays a function of its seed.
#pragma once

#include <string>
#include <vector>

#include "harness/explore.hpp"
#include "harness/faults/kind.hpp"

namespace locksim {

// An event of the reference run a fault can wait for: on = "client1 acquired#2".
struct Anchor {
  std::string process;
  Ev event = Ev::Started;
  int occurrence = 1;  // 1-based, per process and event
  Duration at;         // when it came in the reference run
  std::string name() const;  // "client1 acquired": the event, whichever occurrence
  std::string on() const;    // "client1 acquired#2", as on = "..." takes it
};

struct Reference {
  std::vector<Anchor> anchors;           // in the order they came (at most kMaxAnchors)
  std::vector<NamedDuration> constants;  // distinct values, the lease first
  Duration lease;                        // the lease explore's bounds are scaled to
  std::uint64_t events = 0;              // the reference run's events, anchors or not
};

inline constexpr std::size_t kMaxAnchors = 100'000;

// The base scenario as explore runs it before adding faults: no [expect]
// (what it expects was about its own faults), no faults unless kept.
Scenario unfaulted(const Scenario& base, const ExploreOptions& o);

Reference reference_run(const Scenario& base, const ExploreOptions& o);

// The lease, as explore's bounds read it from [lock] (the ttl, session
// timeout, etcd lease or Redisson watchdog): the bound of a drawn pause is
// twice it by default.
Duration lease_of(const Scenario& s);

// The reference run's events in (from, from + within], measured from
// `from`, the first `limit` of them: "until client2 read". Into `out`
// (cleared first; its capacity kept from one fault to the next).
void events_after(const Reference& r, Duration from, Duration within, std::vector<FaultDraw::Later>& out,
                  std::size_t limit = 64);

}  // namespace locksim
