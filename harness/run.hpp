// One run of a scenario: build the world it describes, inject its faults,
// simulate, and judge the trace.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "harness/liveness.hpp"
#include "harness/scenario.hpp"
#include "judge/checkers.hpp"
#include "sim/world.hpp"

namespace locksim {

struct RunStats {
  std::uint64_t events = 0;          // recorded in the trace
  std::uint64_t queue_events = 0;    // run by the kernel (resumptions, timers, deliveries, actions)
  std::uint64_t messages = 0;         // sent
  std::uint64_t delivered = 0;        // reached their destination by the end of the run
  std::uint64_t acquisitions = 0;
  std::uint64_t failed_attempts = 0;  // tries of an acquire that did not get the lock
  Instant sim_time;
};

struct RunResult {
  // The run's own copy: declared before the world, whose processes refer to
  // it, so the world goes first.
  std::shared_ptr<const Scenario> owned_scenario;
  const Scenario* scenario = nullptr;
  std::uint64_t seed = 0;
  std::shared_ptr<const ClientConfig> probe;  // the liveness phase's client (the world refers to it)
  std::unique_ptr<World> world;   // the trace, for reports
  std::vector<Violation> violations;
  std::set<ViolationKind> verdict;  // the kinds found
  Harm harm;                        // the acknowledged increments the final state lost (judge/harm.hpp)
  RunStats stats;
  std::string trace_hash;  // empty when RunOptions::trace_hash is false
  bool budget_exhausted = false;
  // The command that replays this run, when it is not `locksim run FILE
  // --seed N` (an explored run: its schedule is drawn, not in the file).
  std::string replay;
  // Explore's liveness phase, when asked for (RunOptions::liveness).
  std::optional<LivenessVerdict> liveness;

  // As the scenario's [expect] says (without one: no violation at all).
  bool as_expected() const;
};

// What a caller that makes run after run of one scenario on one thread keeps
// from one to the next (explore's workers): what a run's world is built from
// that changes with neither the seed nor the faults (the algorithm, the
// processes' ids, the lock service's set-up), worked out at the first run;
// and the judge and the run's other watchers, restarted rather than rebuilt
// (their containers keep their capacity). REQUIRES: every run made with it
// is of one scenario, changed in nothing but its seed and faults; the
// result of a run made with it is destroyed before the next run made with
// it starts, and before it is (the result's trace shows its events to it).
class RunReuse {
 public:
  RunReuse();
  ~RunReuse();
  RunReuse(const RunReuse&) = delete;
  RunReuse& operator=(const RunReuse&) = delete;
  struct Impl;  // run.cpp
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

struct RunOptions {
  std::optional<std::uint64_t> seed;  // overrides the scenario's
  std::uint64_t max_events = ~std::uint64_t{0};
  // How many events the trace keeps for the reports (the first ones). The
  // checkers and the hash see every event whatever this is.
  std::uint64_t keep_events = ~std::uint64_t{0};
  // Build event details even when no event is kept (a listener writes them).
  bool details = false;
  // Hash the trace (RunResult::trace_hash). Off (explore's random runs, read
  // for their verdict only): a lean world (World::set_lean): no hash, and
  // the events no listener reads (the network's sent and delivered, when no
  // fault waits for them) counted, not built. Kept on whenever `at_anchor`
  // is set (its fingerprint folds the messages' content). Every run but an
  // at_anchor one has compact timers (World::set_compact_timers):
  // stats.queue_events does not count superseded timer events.
  bool hash = true;
  // Called with every event as it is recorded (a streaming --trace writer).
  std::function<void(const Trace&, const TraceEvent&)> listener;
  // Explore's liveness phase (liveness.hpp): after the scenario's duration,
  // heal every fault, let a fresh client ask for the lock, and run twice this
  // window longer. The verdict still judges the scenario's duration only.
  std::optional<Duration> liveness;
  // Called at each event a fault can wait for (faults.hpp), once the faults
  // are armed, before any fault it triggers; `fingerprint()` folds the state
  // of the run there (state_fingerprint.hpp). Explore's anchors and its
  // exhaustive search's states.
  std::function<void(const Trace&, const TraceEvent&, const std::function<std::uint64_t()>& fingerprint)> at_anchor;
  // Reused from one run to the next (see RunReuse); null: nothing is.
  RunReuse* reuse = nullptr;
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options = {});
// The same, for a scenario made for this run alone: no copy.
RunResult run_scenario(Scenario&& scenario, const RunOptions& options = {});
// The same, for a scenario the caller keeps unchanged until the result is
// gone (RunResult::scenario points to it, owned_scenario is empty): no copy
// and no allocation for it. Explore's workers keep one scenario each and
// draw its faults anew for each run.
RunResult run_scenario_borrowed(const Scenario& scenario, const RunOptions& options = {});

}  // namespace locksim
