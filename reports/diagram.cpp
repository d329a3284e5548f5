// The space-time diagram: chooses the lanes and the arrows, lays out the
// axis and the lanes, and stacks the layers (diagram_canvas.hpp) into one SVG.
#include "reports/diagram.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "reports/diagram_canvas.hpp"

namespace locksim {

namespace diagram {

std::string Canvas::clock_note(ProcId p) const {
  const auto it = clock_notes.find(trace.name(p));
  return it == clock_notes.end() ? std::string() : it->second;
}

std::string Canvas::clocks(const TraceEvent& e) const {
  return fmt::format("t={} · {}'s wall clock {} · monotonic {}", format_instant(e.at), trace.name(e.process), format_instant(e.wall),
                     format_instant(e.mono));
}

namespace {

// What is worth room on the axis: everything but the chatter, and only
// what happens on a lane of its own.
// The messages drawn get a little room too, where they arrive.
std::vector<TimeAxis::Mark> axis_marks(const RunResult& r, const Lanes& lanes, const std::vector<Arrow>& arrows) {
  const std::size_t procs = r.world->trace().processes().size();
  std::vector<TimeAxis::Mark> marks;
  for (const TraceEvent& e : r.world->trace().events()) {
    if (e.process < procs && !lanes.shown[e.process]) continue;
    if (e.kind == Ev::Sent || e.kind == Ev::Command) continue;
    if (e.kind == Ev::Delivered || e.kind == Ev::Dropped) continue;
    marks.push_back({e.at, true});
  }
  for (const Arrow& a : arrows) marks.push_back({a.end->at, false});
  for (const Violation& v : r.violations) {
    marks.push_back({v.at, true});
    marks.push_back({v.until, true});
  }
  return marks;
}

// The horizontal layout (names, then the axis) and the vertical one: title,
// violation labels, the axis, the lanes.
Canvas lay_out(const RunResult& r, const Lanes& lanes, const TimeAxis& axis) {
  const Trace& trace = r.world->trace();
  Canvas c{.run = r, .trace = trace, .lanes = lanes, .axis = axis, .clock_notes = clock_notes(*r.scenario)};
  double name_w = 60;
  for (ProcId p = 0; p < trace.processes().size(); ++p)
    name_w = std::max({name_w, markup::text_width(trace.name(p), 11), lanes.shown[p] ? markup::text_width(c.clock_note(p), 9) : 0.0});
  if (lanes.hidden) name_w = std::max(name_w, markup::text_width(lanes.others_name, 11));
  c.left = name_w + 24;
  c.lane = lanes.count <= 8 ? 54 : lanes.count <= 16 ? 44 : 36;
  c.total_w = c.left + axis.width() + 60;

  // Violation labels in up to four rows above the axis; one that finds no
  // room is left out (its box and its line below the lanes remain).
  LabelRows violation_rows(4);
  for (const Violation& v : r.violations) {
    const double x0 = c.left + axis.x(v.at);
    c.violation_row.push_back(violation_rows.free_row(x0, x0 + markup::text_width(violation_name(v.kind), 11) + 8));
  }
  c.axis_y = c.title_h + 14.0 * static_cast<double>(violation_rows.used()) + 30;
  c.top = c.axis_y + 14;
  c.lanes_bottom = c.top + c.lane * static_cast<double>(lanes.count);
  return c;
}

// The layers drawn event by event, in the order of the events: a client
// without a lane of its own shows only its critical sections.
EventInk draw_events(const Canvas& c) {
  EventInk ink;
  for (const TraceEvent& e : c.trace.events()) {
    const ProcId p = e.process;
    if (p != kNoProc && !c.shown(p) && e.kind != Ev::Acquired && e.kind != Ev::Releasing && e.kind != Ev::Lost && e.kind != Ev::Crashed)
      continue;
    draw_holding(c, ink, e);
    draw_lane_mark(c, ink, e);
    draw_key_tick(c, ink, e);
    draw_storage_write(c, ink, e);
    draw_fault(c, ink, e);
  }
  close_holding(c, ink);
  return ink;
}

std::string document(const Canvas& c, double height, const std::string& content) {
  std::string s;
  s += fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" class="locksim-diagram" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" font-family="sans-serif" font-size="11">)~",
                   c.total_w, height, c.total_w, height);
  s += R"~(<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="2"/></pattern>)~"
       R"~(<marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#666"/></marker></defs>)~";
  s += R"~(<rect width="100%" height="100%" fill="white"/>)~";
  s += fmt::format(R"~(<text class="title" x="8" y="18" font-size="14" font-weight="bold">{}</text>)~", markup::esc(c.run.scenario->title));
  s += content;
  s += "</svg>";
  return s;
}

}  // namespace

}  // namespace diagram

std::string svg_diagram(const RunResult& r, const DiagramOptions& o) {
  using namespace diagram;
  const Lanes lanes = select_lanes(r, o.max_client_lanes);
  // Messages as arrows, sent -> delivered (or dropped), the lock's and the
  // storage's; when there are more than max_arrows, the most relevant.
  Messages messages = collect_messages(r.world->trace(), lanes, o.storage_messages);
  const TimeAxis axis(axis_marks(r, lanes, messages.arrows), r.stats.sim_time, o.width);
  const Canvas c = lay_out(r, lanes, axis);

  const std::string body = draw_lanes(c) + draw_axis(c);
  const EventInk ink = draw_events(c);
  select_arrows(c, messages, o.max_arrows);
  const std::string arrows = draw_arrows(c, messages.arrows);
  // The violations, over their interval and the lanes of the clients
  // involved, labelled above the axis; their explanations below the lanes.
  const std::string violations = draw_violations(c);
  Notes notes{.y = c.lanes_bottom + 22};
  note_violations(c, notes);
  note_legend(c, notes, messages);
  return document(c, notes.y + 4, body + ink.bars + arrows + ink.marks + violations + notes.svg);
}

}  // namespace locksim
