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

#include "harness/run.hpp"
#include "harness/scenario.hpp"

namespace locksim {

struct ExploreOptions {
  std::uint64_t runs = 1000;
  std::uint64_t seed = 1;        // the base seed; run i has run_seed(seed, i)
  std::vector<FaultKind> kinds;  // empty: every kind the topology supports
  int jobs = 1;
  int max_faults = 4;            // per run, drawn uniformly in [1, max_faults]
  std::uint64_t max_events = 2'000'000;  // per run; the simulated time is the scenario's duration
  bool keep_faults = false;      // keep the scenario's own [[fault]]s as well
  // Bounds of the drawn magnitudes (defaults from the lock's TTL or timeouts).
  std::optional<Duration> max_pause, max_jump, max_outage;
  std::int64_t max_drift_ppm = 50'000;
  std::uint64_t shard_index = 0, shard_count = 1;  // run only indices i with i % count == index
};

std::uint64_t run_seed(std::uint64_t base_seed, std::uint64_t index);

// The scenario with a random fault schedule drawn from `seed` (and its seed set to it).
Scenario with_random_faults(const Scenario& base, std::uint64_t seed, const ExploreOptions& options);

struct RunOutcome {
  std::uint64_t index = 0;
  std::uint64_t seed = 0;
  std::set<ViolationKind> verdict;
  bool budget_exhausted = false;
  std::size_t faults = 0;
};

struct ExploreSummary {
  std::uint64_t runs = 0;
  std::uint64_t budget_exhausted = 0;
  std::uint64_t violating = 0;  // runs with any violation
  std::map<ViolationKind, std::uint64_t> by_kind;
  std::map<ViolationKind, RunOutcome> first;  // lowest index of each kind
  void add(const RunOutcome& r);
};

// The 95% Wilson score interval of k successes in n trials.
std::pair<double, double> wilson95(std::uint64_t k, std::uint64_t n);

using Progress = std::function<void(std::uint64_t done, std::uint64_t total, std::uint64_t violating)>;
ExploreSummary explore(const Scenario& base, const ExploreOptions& options, const Progress& progress = {});

std::string explore_text(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s);
std::string explore_json(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s);

// `--matrix`: the same runs (the same seeds, so the same schedules) for each
// "algorithm" or "algorithm:flavour" in `variants`; one summary each.
struct MatrixRow {
  std::string variant;
  ExploreSummary summary;
};
std::vector<MatrixRow> explore_matrix(const Scenario& base, const ExploreOptions& options,
                                      const std::vector<std::string>& variants);
std::string matrix_text(const Scenario& base, const ExploreOptions& o, const std::vector<MatrixRow>& rows);

// `locksim merge`: shards' JSON results (explore --format json, or --result)
// back into the summary one unsharded run gives. Throws ScenarioError when
// the files are not shards of one exploration.
struct Merged {
  std::string scenario_path;
  ExploreOptions options;  // as the shards ran (shard fields reset)
  ExploreSummary summary;
  std::vector<std::uint64_t> missing_shards;  // 1-based
};
Merged merge_results(const std::vector<std::string>& json_texts, const std::vector<std::string>& names);

}  // namespace locksim
