// The command line's explore, merge and shrink (main.cpp has the others).
// Exit statuses as main.cpp's: 0 as expected, 1 not as expected (a run
// violated something the scenario's [expect] does not allow, a shard is
// missing, nothing to shrink), 2 bad input or usage, 3 a bug in locksim.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>

namespace locksim::cli {

// Adds the three subcommands to `app`; the function returned runs the one
// parsed (nullopt: none of them was). Throws ScenarioError on bad input.
std::function<std::optional<int>()> add_explore_commands(CLI::App& app);

}  // namespace locksim::cli
