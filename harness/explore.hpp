// `locksim explore`: a scenario's topology, algorithm and clients under random
// fault schedules, seed after seed (swarm testing: each run also draws which
// fault kinds are enabled at all). A run is identified by its run seed alone:
// the seed fixes its schedule and every random draw of its simulation, so a
// run replays the same on any machine, with any number of jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/faults/kind.hpp"
#include "harness/run.hpp"
#include "harness/scenario.hpp"

namespace locksim {

struct ExploreOptions {
  std::uint64_t runs = 1000;
  std::uint64_t seed = 1;        // the base seed; run i has run_seed(seed, i)
  std::vector<FaultKind> kinds;  // empty: every kind the topology supports
  int jobs = 1;
  int max_faults = 4;            // per run, drawn uniformly in [1, max_faults]; 0: none (with keep_faults)
  std::uint64_t max_events = 2'000'000;  // per run; the simulated time is the scenario's duration
  bool keep_faults = false;      // keep the scenario's own [[fault]]s as well
  // Bounds of the drawn magnitudes (defaults from the lock's TTL or timeouts).
  std::optional<Duration> max_pause, max_jump, max_outage;
  std::int64_t max_drift_ppm = 50'000;
  std::uint64_t shard_index = 0, shard_count = 1;  // run only indices i with i % count == index
  // The liveness phase after each run's faults (liveness.hpp); its window
  // defaults to the scenario's [expect] liveness_window, else twice the lease.
  bool liveness = false;
  std::optional<Duration> liveness_window;
  // Polled before each run; once it says true, no further run starts and the
  // summary is marked partial (explore's Ctrl-C). Empty: never.
  std::function<bool()> stop;
  // Test-only: called before each run with its index; what it throws counts
  // as that run's internal error, as a bug in locksim would.
  std::function<void(std::uint64_t index)> before_run_for_test;
};

Duration liveness_window_of(const Scenario& base, const ExploreOptions& o);
// The command that tells run `seed` again, with every option that shapes it.
std::string explore_replay_command(const Scenario& base, const ExploreOptions& o, std::uint64_t seed);

std::uint64_t run_seed(std::uint64_t base_seed, std::uint64_t index);

struct Reference;  // explore_reference.hpp

// What a drawn fault waited for (an anchor: a process's event, or a time,
// on one node or several at once), or where its length came from (random, a
// constant of the scenario, or until another process's event): what found a
// violation, counted by explore and said by reports/ ("client1 read", "a
// time", "until client2 read", "lease").
struct FoundLabel {
  enum class Kind : std::uint8_t { Time, Event, Random, Constant, Until };
  Kind kind = Kind::Time;
  std::string process;  // Event, Until: whose event; Constant: whose measure ("" for the lock's)
  Ev event = Ev::Started;
  Measure measure = Measure::Lease;  // Constant
  std::size_t struck = 0;            // an anchor: on how many nodes at once (0, 1: one)
  auto operator<=>(const FoundLabel&) const = default;
};

// How a run's faults were drawn: per fault, what it waited for, and where
// its length came from (a fault without a length has none).
struct DrawNotes {
  std::vector<FoundLabel> anchors, lengths;
};

// The scenario with a random fault schedule drawn from `seed` (and its seed
// set to it), measured against the base's reference run.
Scenario with_random_faults(const Scenario& base, std::uint64_t seed, const ExploreOptions& options,
                            const Reference& reference, DrawNotes* notes = nullptr);
// The same, running the reference first (a replay, a shrink: one run).
Scenario with_random_faults(const Scenario& base, std::uint64_t seed, const ExploreOptions& options);

struct RunOutcome {
  std::uint64_t index = 0;
  std::uint64_t seed = 0;
  std::set<ViolationKind> verdict;
  Harm harm;  // the acknowledged increments the run lost (judge/harm.hpp)
  bool budget_exhausted = false;
  std::size_t faults = 0;
  bool stuck_after_heal = false;  // the liveness phase found the lock stuck
  DrawNotes notes;
  // Not empty: the run threw (a bug in locksim, not a verdict): what it said.
  std::string internal_error;
};

// Per violation kind, how many runs that showed it had a fault with each
// label ("client1 read", "until client2 read"): what found it.
using FoundBy = std::map<ViolationKind, std::map<FoundLabel, std::uint64_t>>;

struct ExploreSummary {
  std::uint64_t runs = 0;
  std::uint64_t budget_exhausted = 0;
  std::uint64_t violating = 0;  // runs with any violation
  std::map<ViolationKind, std::uint64_t> by_kind;
  std::map<ViolationKind, RunOutcome> first;  // lowest index of each kind
  HarmTally harm;                             // the runs' harm, for the pooled fraction and its interval
  FoundBy anchors, lengths;
  std::uint64_t stuck_after_heal = 0;           // runs the liveness phase found stuck
  std::optional<RunOutcome> first_stuck_after_heal;
  // Runs that threw instead of finishing (each still counted in `runs`).
  std::uint64_t internal_errors = 0;
  std::optional<RunOutcome> first_internal_error;
  // Interrupted (ExploreOptions::stop): `runs` of the `planned` ran.
  bool partial = false;
  std::uint64_t planned = 0;
  void add(const RunOutcome& r);
  // r's notes only (a worker's share; the sums do not depend on the order).
  void add_notes(const RunOutcome& r);
  void add_notes(const ExploreSummary& other);
  // Another part's runs (another worker's): sums added, the lowest index of
  // each kind kept; `planned` and `partial` are the caller's.
  void merge(const ExploreSummary& other);
};

// The 95% Wilson score interval of k successes in n trials.
std::pair<double, double> wilson95(std::uint64_t k, std::uint64_t n);

using Progress = std::function<void(std::uint64_t done, std::uint64_t total, std::uint64_t violating)>;
ExploreSummary explore(const Scenario& base, const ExploreOptions& options, const Progress& progress = {});

// Whether every violation found is one the base scenario's [expect] allows
// (without an [expect], none is); the liveness phase's stuck counts as stuck.
bool explore_as_expected(const Scenario& base, const ExploreSummary& s);

// `--matrix`: the same runs (the same seeds, so the same schedules) for each
// "algorithm" or "algorithm:flavour" in `variants`; one summary each.
struct MatrixRow {
  std::string variant;
  ExploreSummary summary;
};
std::vector<MatrixRow> explore_matrix(const Scenario& base, const ExploreOptions& options,
                                      const std::vector<std::string>& variants);

}  // namespace locksim
