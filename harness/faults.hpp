// Faults are data: the engine turns each [[fault]] of a scenario into actions
// on the world, at an absolute time or when a named event appears in the
// trace. What each kind does is its own (harness/faults/).
#pragma once

#include <vector>

#include "harness/faults/kind.hpp"
#include "harness/scenario.hpp"
#include "sim/trace.hpp"
#include "sim/world.hpp"

namespace locksim {

// What became of one [[fault]] by the end of a run.
struct FaultFate {
  bool applied = false;
  int seen = 0;  // an `on` fault: how many times its event came (it waits for on_occurrence)
};

class FaultEngine {
 public:
  // REQUIRES: the scenario outlives the engine; every name in it is a process of `world`.
  FaultEngine(World& world, const Scenario& scenario);
  // Schedule the timed faults, and gather the triggers of the others: from
  // now on the owner shows observe() every event the trace records (the
  // run's one listener, harness/run.cpp).
  void arm();
  // An event of the trace: counts towards the triggers that wait for it.
  void observe(const TraceEvent& e) {
    if (trigger_kinds_.has(e.kind)) on_event(e);
  }
  // The kinds some trigger waits for (observe() skips the others).
  EvSet trigger_kinds() const { return trigger_kinds_; }
  // Undo what can be undone, now, and apply no fault after: pauses end,
  // crashed processes restart, partitions heal, link rules go (explore's
  // liveness phase, TigerBeetle's VOPR). Clocks stay where faults put them.
  void heal_all();
  bool healed() const { return healed_; }
  // The faults still to come (not applied yet), for explore --exhaustive's
  // fingerprint of a state: what is applied lives on in the world.
  void digest(Digest& d) const;
  // Each of the scenario's faults, by position: applied, or not (its time or
  // the time after its event lay past the run's end, or its event never came).
  std::vector<FaultFate> fates() const;

 private:
  struct Trigger {
    const FaultSpec* fault;
    ProcId process;
    Ev event;
    int seen = 0;
  };
  void on_event(const TraceEvent& e);
  void apply(const FaultSpec& f);

  FaultContext ctx_;
  std::vector<Trigger> triggers_;
  EvSet trigger_kinds_;  // the kinds some trigger waits for
  bool healed_ = false;
  std::vector<bool> applied_;  // by position in the scenario's faults
};

// Ev from its trace name ("acquired"), for `on = "client1 acquired"`.
std::optional<Ev> event_from_name(std::string_view name);
// Whether `on = "<process> <event>"` may name `e`: not the network's and the
// commands' events, nor a retry loop's waits, too many to count by hand (and
// not among explore's anchors, whose schedules stay as they were before
// `retrying` was traced), nor a fault's own.
bool fault_may_wait_for(Ev e);

}  // namespace locksim
