// Reports of a run: the story in numbered plain-word steps (text) and one
// JSON object per scenario (product.md, "The JSON report").
#pragma once

#include <string>
#include <vector>

#include "harness/run.hpp"

namespace locksim {

struct Step {
  Instant at;
  std::string text;
};

// The events that tell the story, in plain words, in true-time order.
std::vector<Step> narrate(const Trace& trace);

// The command that replays this run exactly.
std::string replay_command(const RunResult& r);

struct TextOptions {
  bool colour = false;
  std::size_t max_steps = 200;
};
std::string text_report(const RunResult& r, const TextOptions& options = {});
// One line for `locksim check`.
std::string check_line(const RunResult& r);
std::string json_report(const RunResult& r);

}  // namespace locksim
