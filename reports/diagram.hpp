// The space-time diagram of a run: one lane per process, true time along the
// axis (long quiet stretches elided, so a 40 s pause does not squash the
// interesting 5 ms), and on it the critical sections, each lease as the
// client believes it and as it really ends on the nodes, pauses, crashes,
// clock jumps, partitions, lock messages, storage writes and the violations.
#pragma once

#include <string>

#include "harness/run.hpp"

namespace locksim {

struct DiagramOptions {
  int width = 1200;           // px of the time axis
  std::size_t max_arrows = 400;  // message arrows beyond this are left out (counted in the legend)
  bool storage_messages = true;
};

std::string svg_diagram(const RunResult& r, const DiagramOptions& options = {});
// One self-contained page: the diagram, the scenario's story, the narrative,
// the verdict and the replay command. No network access, no external files.
std::string html_report(const RunResult& r, const DiagramOptions& options = {});

}  // namespace locksim
