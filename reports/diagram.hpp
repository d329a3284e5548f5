// The space-time diagram of a run: one lane per process, true time along the
// axis, and on it the critical sections, each lease as the client believes it
// and as it really ends on the nodes, pauses, crashes, clock jumps,
// partitions, lock messages, storage writes and the violations.
//
// The axis is piecewise linear: long quiet stretches are elided (a 40 s
// pause must not squash the interesting 5 ms), and the scale is chosen so
// that events apart in time are apart on the page, down to microseconds;
// ticks are picked per stretch, from 1 us to minutes.
//
// Many clients: at most `max_client_lanes` clients get a lane of their own
// (those in violations first, then those that held the lock); the others
// share one lane. At most `max_arrows` messages are drawn, the most relevant
// ones: those of violations' participants near the violation, of the lock's
// grants and releases, of storage writes, and lost messages.
//
// The parts: diagram_lanes.cpp (which processes get lanes), diagram_arrows.cpp
// (which messages are drawn), time_axis.cpp (the axis), diagram_layers.cpp and
// diagram_notes.cpp (the layers), over the canvas of diagram_canvas.hpp;
// html.cpp the page.
#pragma once

#include <string>

#include "harness/run.hpp"

namespace locksim {

struct DiagramOptions {
  int width = 1200;                 // px of the time axis
  std::size_t max_arrows = 400;     // message arrows beyond this are left out (counted in the legend)
  std::size_t max_client_lanes = 24;  // clients beyond this share one lane
  bool storage_messages = true;
};

std::string svg_diagram(const RunResult& r, const DiagramOptions& options = {});
// One self-contained page: the diagram, the scenario's story, the narrative,
// the verdict and the replay command. No network access, no external files.
std::string html_report(const RunResult& r, const DiagramOptions& options = {});

}  // namespace locksim
