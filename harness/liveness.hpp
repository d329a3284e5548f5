// Explore's liveness phase (TigerBeetle's VOPR): after the fault phase every
// fault is healed, a fresh client asks for the lock, and the run goes on.
// If, for longer than the liveness window, some client waits while none
// holds the lock, the lock is stuck: reported apart from the safety verdict,
// which judges the fault phase only (so a run's safety verdict is the same
// with or without this phase).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/phrase.hpp"
#include "sim/trace.hpp"
#include "sim/world.hpp"

namespace locksim {

struct LivenessVerdict {
  Instant healed_at;
  Duration window;
  bool stuck = false;
  Duration longest_wait;             // the longest stretch after healed_at with waiters and no holder
  std::optional<Instant> reacquired;  // the first grant after healed_at
  Phrase detail;                      // the verdict's facts (reports/ words them)
};

// Follows who waits for and who holds the lock, from the start of the run
// (a trace listener), and judges the stretch after healed_at.
class LivenessWatch {
 public:
  // The kinds observe() reads (of clients): it skips the others.
  static constexpr EvSet kReads{Ev::Acquiring, Ev::Acquired, Ev::AcquireFailed, Ev::Releasing, Ev::Lost, Ev::Crashed};

  explicit LivenessWatch(const Trace& trace) : trace_(trace) {}
  void observe(const TraceEvent& e);
  // The phase began: everything healed, the probe about to ask.
  void healed(Instant at, Duration window);
  LivenessVerdict finish(Instant run_end);

 private:
  void update(Instant at);
  const Trace& trace_;
  std::vector<std::uint8_t> waiting_, holding_;
  std::size_t waiters_ = 0, holders_ = 0;
  std::optional<Instant> healed_at_, stretch_start_, reacquired_;
  Duration window_, longest_;
};

// A name for the probe client not taken by any process of the run.
std::string probe_name(const Trace& trace);

}  // namespace locksim
