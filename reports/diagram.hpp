// The space-time diagram of a run: one lane per process, true time along the
// axis, and on it the critical sections, each lease as the client believes it
// and as it really ends on the nodes, pauses, crashes, clock jumps,
// partitions, lock messages, storage writes and the violations.
//
// The axis is linear (to scale) where that shows what matters: when every
// interval the picture is about — each critical section, pause, down time
// and violation, and the time between two clients' grants — is at least
// kLinearMinPx wide at the page's width, the axis running to a little
// after the last thing that happens. Else
// it is compressed: piecewise linear, long quiet stretches elided (a 40 s
// pause must not squash the interesting 5 ms), the scale chosen so that
// events apart in time are apart on the page, down to microseconds. The
// picture says which (--axis linear|compressed chooses). Ticks are picked per
// stretch, from 1 us to minutes, one precision per stretch.
//
// Written on the picture: the moments the verdict turns on (a key's,
// session's or lease's expiry on the service; a lease's end by its client's
// clock; a pause's length), the arrows that matter (grants, releases,
// writes with their token), who a partition cuts off from whom, and for
// Redis-family nodes whose value each holds over time. A client's retry loop
// is one mark, not its hundreds of messages.
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
#include "reports/lang.hpp"

namespace locksim {

enum class AxisChoice { Auto, Linear, Compressed };

// Intervals narrower than this on a linear axis of the page's width make
// the compressed axis the default.
inline constexpr double kLinearMinPx = 12;

struct DiagramOptions {
  int width = 1200;                 // px of the time axis
  AxisChoice axis = AxisChoice::Auto;
  // For a slide: larger type, and every label that matters written out,
  // since nobody hovers over a projected picture (no tooltips).
  bool slides = false;
  std::size_t max_arrows = 400;     // message arrows beyond this are left out (counted in the legend)
  std::size_t max_client_lanes = 24;  // clients beyond this share one lane
  bool storage_messages = true;
  Lang lang = Lang::En;             // the words on the picture (its classes and tooltips stay English)
};

// The shortest interval the picture is about (critical sections, pauses,
// down times, violations, and the time between two clients' grants); the
// run's length when there is none.
Duration shortest_interval(const RunResult& r);
// Where the picture's time ends: a little after the last thing that happens
// (not the chatter), or the run's end.
Instant story_end(const RunResult& r);
// Whether the run's diagram is drawn to scale under these options.
bool linear_axis(const RunResult& r, const DiagramOptions& options);

std::string svg_diagram(const RunResult& r, const DiagramOptions& options = {});
// One self-contained page: the diagram, the scenario's story, the narrative,
// the verdict and the replay command. No network access, no external files.
std::string html_report(const RunResult& r, const DiagramOptions& options = {});

}  // namespace locksim
