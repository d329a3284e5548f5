// `locksim sweep FILE --set KEY=SPEC [--set KEY2=SPEC2] --seeds N`: a grid
// of runs over one or two numbers of a scenario (harness/scenario_knobs.hpp
// names them), each point run with seeds 1..N, counted per point: how many
// runs violated something, and which kinds. The grid is the same whatever
// the number of threads: each run is one deterministic simulation, and the
// results land by their index.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/scenario_knobs.hpp"

namespace locksim {

inline constexpr std::size_t kMaxSweepPoints = 1000;        // per axis
inline constexpr std::uint64_t kMaxSweepRuns = 1'000'000;   // the whole grid

struct SweepAxis {
  Knob knob;
  std::string spec;                   // as given: "1s..40s:40"
  std::vector<std::int64_t> values;   // in the knob's unit (knob.unit), in the order given
};

// "fault[1].duration=1s..40s:40", "lock.ttl=5s,10s,30s",
// "client[1].drift_ppm=0..50000:step=10000": the axis, every value checked
// against what the number may take. Throws ScenarioError naming the key, the
// value, and what is allowed.
SweepAxis parse_sweep_axis(const Scenario& s, const std::string& set_argument);

struct SweepCell {
  std::uint64_t runs = 0, violating = 0;
  std::uint64_t internal_errors = 0;   // runs that threw: a bug in locksim
  std::uint64_t over_budget = 0;       // runs stopped at max_events
  std::map<ViolationKind, std::uint64_t> kinds;  // runs showing each kind
  std::uint64_t first_violating_seed = 0;        // 0: none
  std::string first_error;                       // the first internal error's words
  double rate() const { return runs ? static_cast<double>(violating) / static_cast<double>(runs) : 0.0; }
};

struct SweepResult {
  std::string path;
  std::vector<SweepAxis> axes;  // one or two
  std::uint64_t seeds = 1;
  std::vector<SweepCell> cells;  // row-major: the first axis's index * columns() + the second's
  std::size_t rows() const { return axes.front().values.size(); }
  std::size_t columns() const { return axes.size() > 1 ? axes[1].values.size() : 1; }
  const SweepCell& at(std::size_t row, std::size_t column) const { return cells[row * columns() + column]; }
  std::set<ViolationKind> found() const;  // every kind any run showed
  std::uint64_t internal_errors() const;
};

struct SweepOptions {
  std::uint64_t seeds = 1;  // seeds 1..seeds at every point
  int jobs = 1;             // threads
  std::uint64_t max_events = 2'000'000;
};

// Runs the grid. Throws ScenarioError when a point's values are refused
// (naming the point), before any run.
SweepResult run_sweep(const Scenario& s, const std::vector<SweepAxis>& axes, const SweepOptions& o);

// The scenario at one point of the grid (row, column; column 0 with one axis).
Scenario sweep_point(const Scenario& s, const std::vector<SweepAxis>& axes, std::size_t row, std::size_t column);

}  // namespace locksim
