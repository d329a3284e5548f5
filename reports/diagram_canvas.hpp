// The parts of the space-time diagram (reports/diagram.hpp) and what they
// share: which processes get lanes, which messages become arrows, the canvas
// every layer draws on, and one renderer per layer. Internal to reports/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "reports/diagram.hpp"
#include "reports/markup.hpp"
#include "reports/time_axis.hpp"

namespace locksim::diagram {

// ---- Lanes (diagram_lanes.cpp) ----

bool is_client(const Trace& trace, ProcId p);

// Which processes get a lane: every process but the clients beyond
// max_client_lanes, which share one lane after the last client shown.
struct Lanes {
  std::vector<ProcId> clients;  // every client, in trace order
  std::vector<bool> shown;      // per process: whether it has a lane of its own
  std::size_t hidden = 0;       // clients without a lane of their own
  std::vector<double> lane_of;  // per process: its lane (the shared one for a hidden client)
  std::size_t count = 0;        // lanes drawn, the shared one included
  double others_lane = -1;      // the shared lane, when some clients are hidden
  std::string others_name;      // the shared lane's name: "N other clients"
};
Lanes select_lanes(const RunResult& r, std::size_t max_client_lanes);

// Per process name: how the scenario sets its clock off or drifting ("" when it does not).
std::map<std::string, std::string> clock_notes(const Scenario& sc);

// ---- Messages (diagram_arrows.cpp) ----

// A message: its send and its delivery (or loss).
struct Arrow {
  const TraceEvent* sent;
  const TraceEvent* end;
  int relevance = 0;
};

struct Messages {
  std::vector<Arrow> arrows;  // in the order of their ends
  std::size_t of_hidden = 0;  // messages to or from a client without a lane, not drawn
  std::size_t skipped = 0;    // messages left out by select_arrows
};
// The lock's and the storage's messages between processes with lanes: the
// chatter (heartbeats and their answers) is left out.
Messages collect_messages(const Trace& trace, const Lanes& lanes, bool storage_messages);

// ---- The canvas ----

// Labels on one lane (or the axis), in rows: a label goes in the first row
// where it does not overlap the labels already there.
class LabelRows {
 public:
  explicit LabelRows(std::size_t rows) : right_(rows, -1e9) {}
  // The row for a label over [x0, x1], or the least crowded one when all are taken.
  std::size_t place(double x0, double x1) {
    if (auto r = free_row(x0, x1)) return *r;
    const auto it = std::min_element(right_.begin(), right_.end());
    *it = std::max(*it, x1);
    return static_cast<std::size_t>(it - right_.begin());
  }
  // The row for a label over [x0, x1], if one has room.
  std::optional<std::size_t> free_row(double x0, double x1) {
    for (std::size_t r = 0; r < right_.size(); ++r)
      if (x0 > right_[r] + 4) {
        right_[r] = x1;
        return r;
      }
    return std::nullopt;
  }
  std::size_t used() const {
    std::size_t n = 0;
    for (double r : right_) n += r > -1e9;
    return n;
  }

 private:
  std::vector<double> right_;
};

// What every layer reads: the run, the lanes, the axis and the vertical
// layout (title, violation labels, the axis, the lanes, the notes below).
struct Canvas {
  const RunResult& run;
  const Trace& trace;
  const Lanes& lanes;
  const TimeAxis& axis;
  std::map<std::string, std::string> clock_notes;
  double left = 0;          // px: x of the axis's start (after the lane names)
  double lane = 0;          // px per lane
  double total_w = 0;       // px: the whole diagram's width
  double title_h = 26;      // px of the title
  double axis_y = 0;        // px: y of the axis line
  double top = 0;           // px: y of the first lane's top
  double lanes_bottom = 0;  // px: y below the last lane
  // Per violation: its label's row above the axis, none when it found no room.
  std::vector<std::optional<std::size_t>> violation_row;

  double x(Instant t) const { return left + axis.x(t); }
  double y(ProcId p) const { return top + lane * lanes.lane_of[p] + lane / 2; }
  std::string name(ProcId p) const { return markup::esc(trace.name(p)); }
  bool shown(ProcId p) const { return lanes.shown[p]; }
  std::string clock_note(ProcId p) const;
  // An event's instant and its process's two clocks, for a tooltip.
  std::string clocks(const TraceEvent& e) const;
};

// What the event layers draw, in the order of the events, and what they
// carry from one event to the next.
struct EventInk {
  std::string bars;   // critical sections, pauses and down times, under the marks
  std::string marks;  // leases, crashes, restarts, clocks, key expiries, writes, faults
  std::map<ProcId, Instant> cs_open, pause_open, down_open;
  std::map<ProcId, const TraceEvent*> acquired;
  std::map<double, LabelRows> lane_labels;  // per lane: row 0 above the line, row 1 below

  LabelRows& labels(const Canvas& c, ProcId p) { return lane_labels.try_emplace(c.lanes.lane_of[p], 2).first->second; }
};

// ---- The layers, bottom to top ----

// The lanes: one line and name per process with a lane, the clock notes, the shared lane.
std::string draw_lanes(const Canvas& c);
// The axis line, its ticks per linear stretch and a break per elided stretch (time_axis.cpp).
std::string draw_axis(const Canvas& c);

// Each event layer draws its part of one event (and ignores the others).
// Critical sections as bars, the lease as the client believes it, pauses and down times.
void draw_holding(const Canvas& c, EventInk& ink, const TraceEvent& e);
// The bars still open when the run ends, drawn to its end.
void close_holding(const Canvas& c, EventInk& ink);
// Crashes, restarts, clock jumps and drifts, promotions: marks on a lane.
void draw_lane_mark(const Canvas& c, EventInk& ink, const TraceEvent& e);
// A key expiring on a node: a red tick across its lane.
void draw_key_tick(const Canvas& c, EventInk& ink, const TraceEvent& e);
// A write the storage accepts or rejects: a dot, labelled where there is room.
void draw_storage_write(const Canvas& c, EventInk& ink, const TraceEvent& e);
// A network fault: a dashed line across all lanes.
void draw_fault(const Canvas& c, EventInk& ink, const TraceEvent& e);

// When there are more than max_arrows messages, keeps the most relevant
// max_arrows (diagram_arrows.cpp) and counts the others in m.skipped.
void select_arrows(const Canvas& c, Messages& m, std::size_t max_arrows);
std::string draw_arrows(const Canvas& c, const std::vector<Arrow>& arrows);

// The violations: a box over their interval and their clients' lanes,
// labelled above the axis (diagram_notes.cpp).
std::string draw_violations(const Canvas& c);

// The notes below the lanes, wrapped to the diagram's width.
struct Notes {
  std::string svg;
  double y = 0;  // px: the baseline of the next line
  void add(const Canvas& c, const std::string& text, const char* fill, bool bold_first_word);
};
// The violations in words, the first few.
void note_violations(const Canvas& c, Notes& notes);
// What was left out (clients without lanes, messages not drawn) and the legend.
void note_legend(const Canvas& c, Notes& notes, const Messages& m);

}  // namespace locksim::diagram
