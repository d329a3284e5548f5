// One run of a scenario: build the world it describes, inject its faults,
// simulate, and judge the trace.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "harness/scenario.hpp"
#include "reports/checkers.hpp"
#include "sim/world.hpp"

namespace locksim {

struct RunStats {
  std::uint64_t events = 0;
  std::uint64_t messages = 0;
  std::uint64_t acquisitions = 0;
  Instant sim_time;
};

struct RunResult {
  // The run's own copy: declared before the world, whose processes refer to
  // it, so the world goes first.
  std::shared_ptr<const Scenario> owned_scenario;
  const Scenario* scenario = nullptr;
  std::uint64_t seed = 0;
  std::unique_ptr<World> world;   // the trace, for reports
  std::vector<Violation> violations;
  std::set<ViolationKind> verdict;  // the kinds found
  RunStats stats;
  std::string trace_hash;
  bool budget_exhausted = false;

  // As the scenario's [expect] says (without one: no violation at all).
  bool as_expected() const;
};

struct RunOptions {
  std::optional<std::uint64_t> seed;  // overrides the scenario's
  std::uint64_t max_events = 50'000'000;
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options = {});

}  // namespace locksim
