// The harm a run did, besides its kinds (product.md, "a report measures
// harm"): of the increments the storage accepted and acknowledged to the
// client that sent them, the fraction its final state does not hold — the
// figure Jepsen reports for a lock-protected set ("lost acknowledged
// updates"), here for the protected counter.
//
// Which increments the final state holds is read from the storage's own
// events, as a chain: each accepted write builds on the value its writer
// last read (the job writes what it read plus one), so each write's parent
// is the write that had produced that value (or the initial value). The
// final counter holds exactly the writes on the chain from the last
// accepted write back to the initial value; every other accepted write was
// overwritten by one that never saw it. An increment is acknowledged when
// its client recorded Wrote (the storage's reply reached it); an accepted
// write whose reply never arrived (the client crashed, the reply was lost)
// is counted in `accepted` only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "sim/trace.hpp"

namespace locksim {

struct Harm {
  std::uint64_t accepted = 0;      // increments the storage accepted
  std::uint64_t acknowledged = 0;  // of those, acknowledged to their client
  std::uint64_t lost = 0;          // of the acknowledged, not in the final state
  // lost / acknowledged; 0 when nothing was acknowledged.
  double fraction() const { return acknowledged == 0 ? 0.0 : static_cast<double>(lost) / static_cast<double>(acknowledged); }
  bool operator==(const Harm&) const = default;
};

// Streaming, like the checkers: observe() every event, finish() once.
class HarmMeter {
 public:
  static constexpr EvSet kReads{Ev::StorageRead, Ev::StorageWrite, Ev::Wrote};
  explicit HarmMeter(const Trace& t) : trace_(&t) {}
  void restart(const Trace& t);
  void observe(const TraceEvent& e);
  Harm finish() const;

 private:
  static constexpr std::uint32_t kInitial = ~std::uint32_t{0};  // the storage's initial value, no write
  struct Write {
    std::uint32_t parent;  // the write whose value the writer had read (kInitial: the initial value)
    ProcId client;
    bool acknowledged = false;
  };
  struct ClientState {
    std::uint32_t read = kInitial;        // the write its last read saw
    std::uint32_t last_write = kInitial;  // its last accepted write, until acknowledged
  };
  ClientState& client(ProcId p);

  const Trace* trace_;
  std::vector<Write> writes_;        // in the order the storage accepted them
  std::vector<ClientState> clients_;  // by ProcId
  std::uint32_t current_ = kInitial;  // the write the counter's value came from
};

// The same over a kept trace.
Harm measure_harm(const Trace& trace);

// The harm of many runs (explore): how many runs had each (lost,
// acknowledged) pair. The pooled fraction is all runs' lost over all runs'
// acknowledged increments. Its interval is a percentile bootstrap over
// runs, not a binomial (Wilson) interval over increments: the increments of
// one run are not independent trials — one pause loses several at once,
// and a run that loses any tends to lose many — so the run is the unit that
// is drawn independently, and the bootstrap resamples whole runs, keeping
// each run's losses together, and recomputes the pooled ratio. Drawn from a
// fixed seed over the pairs in order, the interval depends on the counts
// alone: the same with any --jobs and for merged shards.
struct HarmTally {
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::uint64_t> runs;  // (lost, acknowledged) -> runs
  static constexpr int kResamples = 1000;

  void add(const Harm& h) { ++runs[{h.lost, h.acknowledged}]; }
  void merge(const HarmTally& other) {
    for (const auto& [pair, n] : other.runs) runs[pair] += n;
  }
  std::uint64_t run_count() const;
  std::uint64_t lost() const;
  std::uint64_t acknowledged() const;
  // lost() / acknowledged(); 0 when nothing was acknowledged.
  double fraction() const;
  // The 95% percentile-bootstrap interval of fraction(), kResamples
  // resamples of run_count() runs each; nullopt when no run acknowledged
  // anything.
  std::optional<std::pair<double, double>> interval95() const;
};

}  // namespace locksim
