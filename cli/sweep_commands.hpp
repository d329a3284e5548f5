// The command line's sweep (main.cpp has the others): a grid of runs over one
// or two numbers of a scenario, a table, CSV, JSON and a heatmap.
// Exit statuses as explore's: 0 when no run violated anything the scenario's
// [expect] does not allow, 1 when one did, 2 bad input or usage, 3 a bug in
// locksim (a run that failed inside it).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>

namespace locksim::cli {

// Adds `sweep` to `app`; the function returned runs it if it was parsed
// (nullopt: it was not). Throws ScenarioError on bad input.
std::function<std::optional<int>()> add_sweep_command(CLI::App& app);

}  // namespace locksim::cli
