// `locksim live` and `locksim check --live`: scenarios against real
// redis-server processes (live/live_run.hpp), told by the same reports.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/format.hpp"

namespace CLI {
class App;
}

namespace locksim {

struct LiveArgs {
  std::vector<std::string> files;
  std::int64_t time_scale = 1;
  std::string keep;
  Format format = Format::Text;
  std::string trace_path, svg_path, html_path;
  bool full = false;
};

// Adds `live` to `app`; returns it (parsed: *cmd is true).
CLI::App* add_live_command(CLI::App& app, LiveArgs& args);
// Exit status as `run`'s: 0 as expected, 1 not, 2 not runnable live (or bad input).
int cmd_live(const LiveArgs& args);

struct CheckLiveArgs {
  bool live = false;
  int reps = 3;
  std::int64_t time_scale = 10;
  std::string keep;
};
// Adds --live, --reps and --time-scale to `check`.
void add_check_live_flags(CLI::App& check, CheckLiveArgs& args);
// One table: each scenario's simulated verdict and its live verdicts; 0 only when all agree.
int cmd_check_live(const std::vector<std::string>& files, const CheckLiveArgs& args);

}  // namespace locksim

namespace locksim {

// Adds `diff-redis` to `app`: the Redis model against a real redis-server
// (live/diff_redis.hpp). The returned function, after parsing, runs it if it
// was chosen: its exit status (0: no mismatch, 1: mismatches, 2: cannot run),
// else nullopt.
std::function<std::optional<int>()> add_diff_redis_command(CLI::App& app);
// `diff-zookeeper` (cli/diff_zookeeper_command.cpp), as diff-redis.
std::function<std::optional<int>()> add_diff_zookeeper_command(CLI::App& app);

}  // namespace locksim
