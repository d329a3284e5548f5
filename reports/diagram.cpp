// The space-time diagram: chooses the lanes and the arrows, lays out the
// axis and the lanes, and stacks the layers (diagram_canvas.hpp) into one SVG.
#include "reports/diagram.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "reports/diagram_canvas.hpp"

namespace locksim {

namespace diagram {

std::string Canvas::clock_note(ProcId p) const {
  const auto it = clock_notes.find(trace.name(p));
  return it == clock_notes.end() ? std::string() : it->second;
}

std::string Canvas::colour(ProcId p) const {
  // Tableau's ten, in the clients' order: client1 blue, client2 orange, ...
  static constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#9c755f",
                                             "#e15759", "#76b7b2", "#edc948", "#ff9da7", "#bab0ac"};
  const auto it = std::find(lanes.clients.begin(), lanes.clients.end(), p);
  if (it == lanes.clients.end()) return "#888";
  return kPalette[static_cast<std::size_t>(it - lanes.clients.begin()) % std::size(kPalette)];
}

std::string Canvas::clocks(const TraceEvent& e) const {
  return say(W::TipClocks, {{"t", format_instant(e.at)}, {"who", trace.name(e.process)}, {"wall", format_instant(e.wall)},
                            {"mono", format_instant(e.mono)}});
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
    if (e.kind == Ev::Sent || e.kind == Ev::Command || e.kind == Ev::Holder) continue;
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
Canvas lay_out(const RunResult& r, const Lanes& lanes, const TimeAxis& axis, const DiagramOptions& o) {
  const Trace& trace = r.world->trace();
  Canvas c{.run = r, .trace = trace, .lanes = lanes, .axis = axis, .clock_notes = clock_notes(*r.scenario, o.lang)};
  c.slides = o.slides;
  c.lang = o.lang;
  // Type a page is read at: its smallest label 11 px (9 px at scale 1 were
  // too small to read at 1,400 px); a slide's larger still.
  c.font = o.slides ? 1.6 : 1.25;
  double name_w = 60;
  for (ProcId p = 0; p < trace.processes().size(); ++p)
    name_w = std::max({name_w, markup::text_width(trace.name(p), c.fs(11)), lanes.shown[p] ? markup::text_width(c.clock_note(p), c.fs(9)) : 0.0});
  if (lanes.hidden) name_w = std::max(name_w, markup::text_width(lanes.others_name, c.fs(11)));
  c.left = name_w + 24 + c.fs(8);
  c.lane = c.fs(lanes.count <= 8 ? 58 : lanes.count <= 16 ? 46 : 36);
  c.total_w = c.left + axis.width() + 60;
  c.title_h = c.fs(26);
  // The axis's caption beside the title where both fit on the line, else under it.
  const double beside = 8 + markup::text_width(r.scenario->title, c.fs(14)) + c.fs(16) + markup::text_width(diagram::axis_caption(c), c.fs(10));
  c.caption_y = c.fs(16);
  if (beside > c.left + axis.width()) {
    c.caption_y = c.title_h + c.fs(4);
    c.title_h += c.fs(14);
  }

  // Violation labels in up to four rows above the axis; one that finds no
  // room is left out (its box and its line below the lanes remain).
  LabelRows violation_rows(4);
  for (const Violation& v : r.violations) {
    const double w = markup::text_width(kind_words(o.lang, v.kind), c.fs(11)), x0 = diagram::inside(c, c.x(v.at), w);
    c.violation_row.push_back(violation_rows.free_row(x0, x0 + w + 8));
  }
  c.axis_y = c.title_h + c.fs(14) * static_cast<double>(violation_rows.used()) + c.fs(30);
  c.top = c.axis_y + c.fs(14);
  c.lanes_bottom = c.top + c.lane * static_cast<double>(lanes.count);
  return c;
}

// The layers drawn event by event, in the order of the events: a client
// without a lane of its own shows only its critical sections.
void draw_events(const Canvas& c, EventInk& ink) {
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
}

std::string document(const Canvas& c, double height, const std::string& content) {
  std::string s;
  s += fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" class="locksim-diagram{}" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" font-family="{}" font-size="{:g}">)~",
                   c.slides ? " slides" : "", c.total_w, height, c.total_w, height, c.say(W::FontFamily), c.fs(11));
  s += R"~(<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="2"/></pattern>)~"
       R"~(<pattern id="retry" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="4" height="4" fill="#eee"/><line x1="0" y1="0" x2="0" y2="4" stroke="#bbb" stroke-width="1.5"/></pattern>)~"
       R"~(<marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#666"/></marker></defs>)~";
  s += R"~(<rect width="100%" height="100%" fill="white"/>)~";
  s += fmt::format(R"~(<text class="title" x="8" y="{:.0f}" font-size="{:g}" font-weight="bold">{}</text>)~", c.fs(18), c.fs(14),
                   markup::esc(c.run.scenario->title));
  s += content;
  s += "</svg>";
  return s;
}

// A slide's picture has no tooltips: what matters is written on it.
std::string without_tooltips(const std::string& svg) {
  std::string out;
  out.reserve(svg.size());
  std::size_t at = 0;
  for (auto open = svg.find("<title>"); open != std::string::npos; open = svg.find("<title>", at)) {
    out.append(svg, at, open - at);
    at = svg.find("</title>", open) + 8;
  }
  out.append(svg, at, std::string::npos);
  return out;
}

}  // namespace

}  // namespace diagram

Duration shortest_interval(const RunResult& r) {
  const Trace& t = r.world->trace();
  std::int64_t shortest = std::max<std::int64_t>(1, r.stats.sim_time.ns());
  auto take = [&](Instant a, Instant b) {
    if (b > a) shortest = std::min(shortest, (b - a).count_ns());
  };
  std::map<ProcId, Instant> held, paused, down;
  std::optional<std::pair<ProcId, Instant>> last_grant;
  for (const TraceEvent& e : t.events()) {
    switch (e.kind) {
      case Ev::Acquired:
        held[e.process] = e.at;
        // Two clients granted the lock close together: a race the picture must tell apart.
        if (last_grant && last_grant->first != e.process) take(last_grant->second, e.at);
        last_grant = {e.process, e.at};
        break;
      case Ev::Releasing: case Ev::Lost:
        if (held.count(e.process)) take(held[e.process], e.at);
        held.erase(e.process);
        break;
      case Ev::Paused: paused[e.process] = e.at; break;
      case Ev::Resumed:
        if (paused.count(e.process)) take(paused[e.process], e.at);
        paused.erase(e.process);
        break;
      case Ev::Crashed:
        if (held.count(e.process)) take(held[e.process], e.at);
        held.erase(e.process);
        down[e.process] = e.at;
        break;
      case Ev::Restarted:
        if (down.count(e.process)) take(down[e.process], e.at);
        down.erase(e.process);
        break;
      default: break;
    }
  }
  for (const Violation& v : r.violations) take(v.at, v.until);
  return Duration::ns(shortest);
}

Instant story_end(const RunResult& r) {
  Instant last = Instant::zero();
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind != Ev::Sent && e.kind != Ev::Delivered && e.kind != Ev::Dropped && e.kind != Ev::Command && e.kind != Ev::Holder &&
        e.kind != Ev::StorageRead)
      last = std::max(last, e.at);
  for (const Violation& v : r.violations) last = std::max(last, v.until);
  const Instant end = last + std::max(Duration::ms(1), Duration::ns(last.ns() / 20));
  return std::min(end, r.stats.sim_time);
}

namespace {

// The linear axis's end: the story's, rounded up to a tick (so that the last
// label is exact), within the run.
Instant linear_end(const RunResult& r, double width, double font) {
  const std::int64_t end = std::max<std::int64_t>(1, story_end(r).ns());
  const std::int64_t step = diagram::tick_step(width / static_cast<double>(end), 70 * font);
  return std::min(r.stats.sim_time, Instant::from_ns((end + step - 1) / step * step));
}

}  // namespace

bool linear_axis(const RunResult& r, const DiagramOptions& o) {
  if (o.axis != AxisChoice::Auto) return o.axis == AxisChoice::Linear;
  const double px_per_ns = o.width / static_cast<double>(std::max<std::int64_t>(1, story_end(r).ns()));
  return static_cast<double>(shortest_interval(r).count_ns()) * px_per_ns >= kLinearMinPx;
}

std::string svg_diagram(const RunResult& r, const DiagramOptions& o) {
  using namespace diagram;
  const Lanes lanes = select_lanes(r, o.max_client_lanes, o.lang);
  // Messages as arrows, sent -> delivered (or dropped), the lock's and the
  // storage's, but a retry loop's; when there are more than max_arrows, the
  // most relevant.
  const std::vector<RetryRun> retries = retry_runs(r.world->trace());
  Messages messages = collect_messages(r.world->trace(), lanes, o.storage_messages, retries);
  const TimeAxis axis = linear_axis(r, o) ? TimeAxis::to_scale(linear_end(r, o.width, o.slides ? 1.6 : 1), o.width)
                                          : TimeAxis(axis_marks(r, lanes, messages.arrows), r.stats.sim_time, o.width);
  const Canvas c = lay_out(r, lanes, axis, o);

  // What holds over spans first, so that their labels get the first rows.
  EventInk ink;
  const std::string body = draw_lanes(c) + draw_axis(c) + draw_partitions(c, ink, partitions(r)) + draw_holdings(c, holdings(r, retries)) +
                           draw_retries(c, ink, retries);
  draw_events(c, ink);
  select_arrows(c, messages, o.max_arrows);
  label_arrows(r.world->trace(), r.scenario->lock.key, messages.arrows);
  const std::string arrows = draw_arrows(c, messages.arrows);
  // The violations, over their interval and the lanes of the clients
  // involved, labelled above the axis; their explanations below the lanes.
  const std::string violations = draw_violations(c);
  Notes notes{.y = c.lanes_bottom + c.fs(22)};
  note_violations(c, notes);
  const std::string drawn = body + ink.bars + arrows + ink.marks + draw_arrow_labels(c, ink, messages.arrows) + violations;
  note_legend(c, notes, messages, drawn);
  const std::string svg = document(c, notes.y + 4, drawn + notes.svg);
  return o.slides ? without_tooltips(svg) : svg;
}

}  // namespace locksim
