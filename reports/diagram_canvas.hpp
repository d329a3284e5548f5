// The parts of the space-time diagram (reports/diagram.hpp) and what they
// share: which processes get lanes, which messages become arrows, the canvas
// every layer draws on, and one renderer per layer. Internal to reports/.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "reports/diagram.hpp"
#include "reports/markup.hpp"
#include "reports/time_axis.hpp"
#include "reports/words.hpp"

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
Lanes select_lanes(const RunResult& r, std::size_t max_client_lanes, Lang lang = Lang::En);

// Per process name: how the scenario sets its clock off or drifting ("" when it does not).
std::map<std::string, std::string> clock_notes(const Scenario& sc, Lang lang = Lang::En);

// ---- Messages (diagram_arrows.cpp) ----

// A message: its send and its delivery (or loss).
struct Arrow {
  const TraceEvent* sent;
  const TraceEvent* end;
  int relevance = 0;
  // What it does for the story (most: nothing); the words are the picture's ("grant", "write 1, token 34").
  enum class Label : std::uint8_t { None, Write, Release, Grant } label = Label::None;
};

// A client's retry loop: three or more attempts in a row that failed for
// too few nodes, drawn as one mark instead of its hundreds of messages.
struct RetryRun {
  ProcId client;
  Instant from, to;        // its first message and its last failed attempt
  std::size_t attempts = 0;
  std::size_t lost = 0;    // its messages the network lost meanwhile
  // The reasons, as the trace gives them ("2 of 5 nodes granted it (3 needed)"), each with how many times.
  std::vector<std::pair<std::string, std::size_t>> reasons;
};
std::vector<RetryRun> retry_runs(const Trace& trace);
// The retry loops by client, to ask whether one covers an instant.
class RetryIndex {
 public:
  explicit RetryIndex(const std::vector<RetryRun>& runs) {
    for (const RetryRun& r : runs) spans_[r.client].emplace_back(r.from, r.to);
  }
  bool covers(ProcId client, Instant t) const {
    const auto it = spans_.find(client);
    if (it == spans_.end()) return false;
    // A client's loops are disjoint and in order: the last one starting at or before t.
    const auto& s = it->second;
    auto after = std::upper_bound(s.begin(), s.end(), t, [](Instant v, const std::pair<Instant, Instant>& span) { return v < span.first; });
    return after != s.begin() && t <= (after - 1)->second;
  }

 private:
  std::map<ProcId, std::vector<std::pair<Instant, Instant>>> spans_;
};

struct Messages {
  std::vector<Arrow> arrows;  // in the order of their ends
  std::size_t of_hidden = 0;  // messages to or from a client without a lane, not drawn
  std::size_t skipped = 0;    // messages left out by select_arrows
  std::size_t in_retries = 0; // messages of retry loops, drawn as their loop's mark
};
// The lock's and the storage's messages between processes with lanes: the
// chatter (heartbeats and their answers) and the retry loops' are left out.
Messages collect_messages(const Trace& trace, const Lanes& lanes, bool storage_messages, const std::vector<RetryRun>& retries);
// Names the arrows that matter: the grants (the positive replies of the
// attempt that got the lock), the releases and the writes with their token.
void label_arrows(const Trace& trace, const std::string& lock_key, std::vector<Arrow>& arrows);

// ---- What holds over a span of time (diagram_spans.cpp) ----

// Whether a node's traced command ("SET lock v NX PX 30000 -> OK") took the
// lock's key for the client that sent it.
bool takes_lock(const std::string& command_detail, const std::string& key);
// The value a traced acquiring command sets ("SET lock VALUE NX ..." -> VALUE).
std::string lock_value(const std::string& command_detail);

// Whose value a node holds over [from, to): from the commands that set the
// lock's key and the expiries, deletions and crashes that end it.
struct Holding {
  ProcId node, holder;
  Instant from, to;
  bool granted = true;  // the value of an acquisition that got the lock (else a failed try's, drawn faint)
};
// Only where the trace says it all: Redis-family nodes without replicas
// (a replica's keys come by replication, which the trace does not list).
// A client's value set by a failed try of a retry loop is left out.
std::vector<Holding> holdings(const RunResult& r, const std::vector<RetryRun>& retries);


// A partition over [from, to): for each process cut off, whom from.
struct Cut {
  Instant from, to;
  std::vector<std::vector<ProcId>> groups;
  bool one_way = false;
};
std::vector<Cut> partitions(const RunResult& r);

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
  double title_h = 26;      // px of the title (and of the axis's caption, when it has a line of its own)
  double caption_y = 16;    // px: the axis caption's baseline: beside the title, or under it
  double axis_y = 0;        // px: y of the axis line
  double top = 0;           // px: y of the first lane's top
  double lanes_bottom = 0;  // px: y below the last lane
  double font = 1;          // type scale: 1, larger for slides
  bool slides = false;      // written for a slide: no tooltips, so every label that matters is on the picture
  Lang lang = Lang::En;     // the words written on the picture
  // Per violation: its label's row above the axis, none when it found no room.
  std::vector<std::optional<std::size_t>> violation_row;

  double x(Instant t) const { return left + axis.x(t); }
  double fs(double px) const { return px * font; }
  // A client's colour (its critical sections, the node strips of its value); grey for others.
  std::string colour(ProcId p) const;
  double y(ProcId p) const { return top + lane * lanes.lane_of[p] + lane / 2; }
  std::string name(ProcId p) const { return markup::esc(trace.name(p)); }
  bool shown(ProcId p) const { return lanes.shown[p]; }
  std::string clock_note(ProcId p) const;
  // An event's instant and its process's two clocks, for a tooltip.
  std::string clocks(const TraceEvent& e) const;
  // Words for the picture, in its language.
  std::string say(W id, WordArgs args = {}) const { return locksim::say(lang, id, args); }
};

// What the event layers draw, in the order of the events, and what they
// carry from one event to the next.
struct EventInk {
  std::string bars;   // critical sections, pauses and down times, under the marks
  std::string marks;  // leases, crashes, restarts, clocks, key expiries, writes, faults
  std::map<ProcId, Instant> cs_open, pause_open, down_open;
  std::map<ProcId, const TraceEvent*> pause_event;
  std::map<ProcId, const TraceEvent*> acquired;
  std::map<double, LabelRows> lane_labels;  // per lane: row 0 above the line, row 1 below
  std::vector<std::array<double, 4>> label_boxes;  // every lane label placed: x0, y0, x1, y1 (arrow labels keep off them)

  // Lanes too close for a row below (many of them) have one row, above.
  LabelRows& labels(const Canvas& c, ProcId p) {
    return lane_labels.try_emplace(c.lanes.lane_of[p], c.lane >= c.fs(50) ? 2 : 1).first->second;
  }
};

// ---- The layers, bottom to top ----

// The lanes: one line and name per process with a lane, the clock notes, the shared lane.
std::string draw_lanes(const Canvas& c);
// The axis line, its ticks per linear stretch and a break per elided stretch (time_axis.cpp).
std::string draw_axis(const Canvas& c);
// What the axis is, said on the picture: to scale, or compressed (time_axis.cpp).
std::string axis_caption(const Canvas& c);

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
// A network fault but a partition: a dashed line across the lanes it names.
void draw_fault(const Canvas& c, EventInk& ink, const TraceEvent& e);

// Partitions: a band on each lane cut off, saying from whom (diagram_spans.cpp).
std::string draw_partitions(const Canvas& c, EventInk& ink, const std::vector<Cut>& cuts);
// The node strips: whose value each lock node holds, in its client's colour.
std::string draw_holdings(const Canvas& c, const std::vector<Holding>& hs);
// A retry loop: one band on its client's lane, with its count and reason.
std::string draw_retries(const Canvas& c, EventInk& ink, const std::vector<RetryRun>& runs);
// Where a label goes: its x (moved left if it would pass the picture's right
// edge) and its baseline's y.
struct LabelAt {
  double x, y;
};
// A label on p's lane at x, in the first of its rows with room (row 0 above
// the line, row 1 below), or the least crowded if `always`.
std::optional<LabelAt> lane_label(const Canvas& c, EventInk& ink, ProcId p, double x, const std::string& text, bool always = false);
// The x of a label `width` px wide wanted at x: as wanted, or moved left so
// that it ends inside the picture.
double inside(const Canvas& c, double x, double width);

// When there are more than max_arrows messages, keeps the most relevant
// max_arrows (diagram_arrows.cpp) and counts the others in m.skipped.
void select_arrows(const Canvas& c, Messages& m, std::size_t max_arrows);
std::string draw_arrows(const Canvas& c, const std::vector<Arrow>& arrows);
// The labels of the arrows that have one, above the lanes' marks.
std::string draw_arrow_labels(const Canvas& c, const EventInk& ink, const std::vector<Arrow>& arrows);

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
// `drawn`: the picture, whose classes say which marks the legend explains.
void note_legend(const Canvas& c, Notes& notes, const Messages& m, const std::string& drawn);

}  // namespace locksim::diagram
