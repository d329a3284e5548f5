// The diagram's layers drawn per lane: the lanes themselves, what a process
// holds or suffers over time (bars), and the marks of single events.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "reports/diagram_canvas.hpp"

namespace locksim::diagram {

using markup::esc;
using markup::text_width;

std::string draw_lanes(const Canvas& c) {
  const auto& procs = c.trace.processes();
  std::string out;
  for (ProcId p = 0; p < procs.size(); ++p) {
    if (!c.shown(p)) continue;
    const char* role = procs[p].role == ProcessRole::Client ? "client" : procs[p].role == ProcessRole::Storage ? "storage" : "node";
    // A client's colour (its bars, the node strips of its value) in a swatch before the lane.
    const std::string swatch = procs[p].role == ProcessRole::Client
                                   ? fmt::format(R"~(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"/>)~", c.left - c.fs(16),
                                                 c.y(p) - c.fs(5), c.fs(10), c.fs(10), c.colour(p))
                                   : "";
    out += fmt::format(R"~(<g class="lane lane-{}" data-process="{}"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ccc"/><text x="8" y="{:.1f}" font-weight="bold">{}</text>{}</g>)~",
                       role, c.name(p), c.left, c.y(p), c.left + c.axis.width(), c.y(p), c.y(p) + c.fs(4), c.name(p), swatch);
    if (const std::string note = c.clock_note(p); !note.empty())
      out += fmt::format(R"~(<text class="clock-note" x="8" y="{:.1f}" font-size="{:g}" fill="#a50">{}</text>)~", c.y(p) + c.fs(15), c.fs(9), esc(note));
  }
  if (c.lanes.hidden) {
    const double y = c.top + c.lane * c.lanes.others_lane + c.lane / 2;
    out += fmt::format(R"~(<g class="lane-others"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ccc" stroke-dasharray="6 3"/><text x="8" y="{:.1f}" font-style="italic">{}</text><title>{}</title></g>)~",
                       c.left, y, c.left + c.axis.width(), y, y + c.fs(4), esc(c.lanes.others_name),
                       esc(c.say(W::TipSharedLane, {{"n", std::to_string(c.lanes.hidden)}})));
  }
  return out;
}

namespace {

// Whether `text` names the process: its name as a whole word.
bool names_process(const std::string& text, const std::string& name) {
  for (auto at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool start = at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
    const bool end = at + name.size() == text.size() || !std::isalnum(static_cast<unsigned char>(text[at + name.size()]));
    if (start && end) return true;
  }
  return false;
}

// ", 0 keys", from the node's "keys it holds: 0".
std::string keys_held(const Canvas& c, const std::string& detail) {
  const auto at = detail.find("keys it holds: ");
  if (at == std::string::npos) return "";
  const std::string n = detail.substr(at + 15);
  if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) return "";
  return n == "0" ? c.say(W::LabelNoKeys) : c.say(W::LabelKeys, {{"keys", say_count(c.lang, std::stoull(n), W::KeyOne, W::KeyMany)}});
}

// An interval of process p as a bar h px high (half-transparent on the shared lane).
void bar(const Canvas& c, EventInk& ink, const char* cls, ProcId p, Instant a, Instant b, const char* fill, double h, const std::string& tip) {
  const bool own = c.shown(p);
  h = c.fs(h);
  ink.bars += fmt::format(R"~(<rect class="{}" data-process="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"{}><title>{}</title></rect>)~",
                          cls, c.name(p), c.x(a), c.y(p) - h / 2, std::max(1.5, c.x(b) - c.x(a)), h, fill, own ? "" : R"~( fill-opacity="0.5")~",
                          esc(tip));
}

// The lease as the client believes it, on its monotonic clock, from its
// grant to where it believes it ends or to its release, whichever is first.
// Where it ends before the release, that moment decides the story: labelled.
void draw_believed_lease(const Canvas& c, EventInk& ink, const TraceEvent& e, Instant released) {
  const ProcId p = e.process;
  const Instant believed_end = e.at + (Instant::from_ns(e.value) - e.mono);
  // A lease that by the client's own clock ran out before the grant
  // (a library that does not check): orange, back to where it ended.
  const bool over = believed_end < e.at;
  const bool runs_out = believed_end <= released;
  const Instant end = runs_out ? believed_end : released;
  const double y = c.y(p) - c.fs(13);
  const std::string tick = runs_out ? fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"/>)~",
                                                  c.x(end), y - 4, c.x(end), y + 4, over ? "#e70" : "#2b7")
                                    : "";
  std::string label;
  if (runs_out && !over)
    if (const auto at = lane_label(c, ink, p, c.x(end) + 3, c.say(W::LabelLeaseEnds)))
      label = fmt::format(R"~(<text class="moment" x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="#186">{}</text>)~", at->x,
                          at->y, c.fs(10), esc(c.say(W::LabelLeaseEnds)));
  ink.marks += fmt::format(R"~(<g class="lease-believed{}"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2" stroke-dasharray="4 3"/>{}{}<title>{}</title></g>)~",
                           over ? " lease-over" : "", c.x(e.at), y, c.x(end), y, over ? "#e70" : "#2b7", tick, label,
                           c.say(W::TipLease, {{"who", c.name(p)}, {"until", format_instant(Instant::from_ns(e.value))}, {"t", format_instant(believed_end)},
                                               {"more", over       ? c.say(W::TipLeaseOver, {{"who", c.name(p)}, {"t", format_instant(e.at)}})
                                                        : runs_out ? ""
                                                                   : c.say(W::TipLeaseToRelease, {{"t", format_instant(released)}})}}));
}

// The critical section that ends now (a release, a loss, a crash, the run's
// end), and the lease the client believed it had over it.
void close_section(const Canvas& c, EventInk& ink, ProcId p, Instant at, const std::string& how) {
  if (!ink.cs_open.count(p)) return;
  const TraceEvent* a = ink.acquired[p];
  bar(c, ink, "critical-section", p, ink.cs_open[p], at, c.colour(p).c_str(), 12,
      c.say(W::TipHolds, {{"who", c.trace.name(p)}, {"from", format_instant(ink.cs_open[p])}, {"how", how},
                          {"token", a && a->token >= 0 ? c.say(W::TokenSuffix, {{"token", std::to_string(a->token)}}) : ""}}));
  if (a && a->value >= 0 && c.shown(p)) draw_believed_lease(c, ink, *a, at);
  ink.cs_open.erase(p);
}

}  // namespace

double inside(const Canvas& c, double x, double width) { return std::min(x, c.total_w - width - 2); }

std::optional<LabelAt> lane_label(const Canvas& c, EventInk& ink, ProcId p, double wanted, const std::string& text, bool always) {
  const double w = text_width(text, c.fs(10)), x = inside(c, wanted, w);
  std::optional<std::size_t> row = ink.labels(c, p).free_row(x, x + w);
  if (!row && always) row = ink.labels(c, p).place(x, x + w);
  if (!row) return std::nullopt;
  const double y = *row == 0 ? c.y(p) - c.fs(16) : c.y(p) + c.fs(24);
  ink.label_boxes.push_back({x, y - c.fs(9), x + w, y + c.fs(2)});
  return LabelAt{x, y};
}

void draw_holding(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  const ProcId p = e.process;
  switch (e.kind) {
    case Ev::Acquired:
      ink.cs_open[p] = e.at;
      ink.acquired[p] = &e;
      break;
    case Ev::Releasing:
    case Ev::Lost:
      close_section(c, ink, p, e.at, c.say(W::TipHoldsTo, {{"t", format_instant(e.at)}}));
      break;
    case Ev::Paused:
      ink.pause_open[p] = e.at;
      ink.pause_event[p] = &e;
      break;
    case Ev::Resumed:
      if (ink.pause_open.count(p)) {
        const Instant from = ink.pause_open[p];
        bar(c, ink, "pause", p, from, e.at, "url(#hatch)", 24,
            c.say(W::TipPaused, {{"who", c.trace.name(p)}, {"from", format_instant(from)}, {"to", format_instant(e.at)}, {"clocks", c.clocks(e)}}));
        // How long, written on the picture: the point of a pause story.
        const std::string text = c.say(W::LabelPaused, {{"d", short_duration(e.at - from)}});
        if (const auto at = lane_label(c, ink, p, c.x(from) + 2, text, true))
          ink.marks += fmt::format(R"~(<text class="moment" x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="#444">{}</text>)~", at->x, at->y,
                                   c.fs(10), esc(text));
        ink.pause_open.erase(p);
      }
      break;
    case Ev::Crashed:
      close_section(c, ink, p, e.at, c.say(W::TipHoldsUntilCrash));
      if (c.shown(p)) ink.down_open[p] = e.at;
      break;
    case Ev::Restarted:
      if (ink.down_open.count(p)) {
        const Instant from = ink.down_open[p];
        bar(c, ink, "down", p, from, e.at, "#e4e4e4", 18, c.say(W::TipDown, {{"who", c.trace.name(p)}}));
        const std::string text = c.say(W::LabelDown, {{"d", short_duration(e.at - from)}});
        if (const auto at = lane_label(c, ink, p, c.x(from) + 8, text))
          ink.marks += fmt::format(R"~(<text class="moment" x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="#444">{}</text>)~", at->x, at->y,
                                   c.fs(10), esc(text));
        ink.down_open.erase(p);
      }
      break;
    default:
      break;
  }
}

void close_holding(const Canvas& c, EventInk& ink) {
  const Instant end = c.run.stats.sim_time;
  for (const auto& [p, t] : std::map(ink.cs_open)) close_section(c, ink, p, end, c.say(W::TipHoldsUntilEnd));
  for (const auto& [p, t] : ink.pause_open)
    bar(c, ink, "pause", p, t, end, "url(#hatch)", 24, c.say(W::TipPausedAtEnd, {{"who", c.trace.name(p)}}));
  for (const auto& [p, t] : ink.down_open) bar(c, ink, "down", p, t, end, "#e4e4e4", 18, c.say(W::TipDownAtEnd, {{"who", c.trace.name(p)}}));
}

void draw_lane_mark(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  const ProcId p = e.process;
  switch (e.kind) {
    case Ev::Crashed:
      if (!c.shown(p)) break;
      ink.marks += fmt::format(R"~(<g class="crash"><text x="{:.1f}" y="{:.1f}" fill="#c00" font-size="{:g}" text-anchor="middle">✕</text><title>{}</title></g>)~",
                               c.x(e.at), c.y(p) + c.fs(6), c.fs(16), c.say(W::TipCrash, {{"who", c.name(p)}, {"t", format_instant(e.at)}}));
      break;
    case Ev::Restarted:
      ink.marks += fmt::format(R"~(<g class="restart"><text x="{:.1f}" y="{:.1f}" fill="#080" font-size="{:g}" text-anchor="middle">↻</text><title>{}</title></g>)~",
                               c.x(e.at), c.y(p) + c.fs(5), c.fs(14), c.say(W::TipRestart, {{"who", c.name(p)}, {"t", format_instant(e.at)}}));
      break;
    case Ev::ClockJumped:
    case Ev::ClockDrift: {
      const std::string label = c.say(W::LabelClock, {{"what", e.kind == Ev::ClockJumped ? e.detail : std::to_string(e.value / 1000) + " ppm"}});
      const auto [x, y] = *lane_label(c, ink, p, c.x(e.at) - 5, label, true);
      ink.marks += fmt::format(R"~(<g class="clock"><text x="{:.1f}" y="{:.1f}" fill="#a50" font-size="{:g}">{}</text><title>{}</title></g>)~",
                               x, y, c.fs(10), esc(label),
                               e.kind == Ev::ClockJumped
                                   ? c.say(W::TipClockJump, {{"who", c.name(p)}, {"by", esc(e.detail)}, {"clocks", esc(c.clocks(e))}})
                                   : c.say(W::TipClockDrift, {{"who", c.name(p)}, {"ppm", std::to_string(e.value / 1000)}, {"clocks", esc(c.clocks(e))}}));
      break;
    }
    case Ev::Promoted: {
      const std::string label = c.say(W::LabelPromoted) + keys_held(c, e.detail);
      const auto [x, y] = *lane_label(c, ink, p, c.x(e.at) - 5, label, true);
      ink.marks += fmt::format(R"~(<g class="promoted"><text x="{:.1f}" y="{:.1f}" fill="#06c" font-size="{:g}">{}</text><title>{}</title></g>)~",
                               x, y, c.fs(10), esc(label),
                               c.say(W::TipPromoted, {{"who", c.name(p)}, {"t", format_instant(e.at)}, {"clocks", esc(c.clocks(e))}}));
      break;
    }
    default:
      break;
  }
}

void draw_key_tick(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  if (e.kind != Ev::Expired) return;
  const ProcId p = e.process;
  // The moment the lock ends on the service: labelled where there is room
  // (a contended run expires hundreds of keys; their ticks stay).
  const W what = e.detail.find("session expired") != std::string::npos ? W::LabelSession
                 : e.detail.find("lease expired") != std::string::npos ? W::LabelLease
                                                                       : W::LabelKey;
  const std::string text = c.say(W::LabelExpires, {{"who", c.trace.name(e.owner)}, {"what", c.say(what)}});
  std::string label;
  if (const auto at = lane_label(c, ink, p, c.x(e.at) + 3, text))
    label = fmt::format(R"~(<text class="moment" x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="#c22">{}</text>)~", at->x, at->y, c.fs(10), esc(text));
  ink.marks += fmt::format(R"~(<g class="key-expired"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#d33" stroke-width="3"/>{}<title>{}</title></g>)~",
                           c.x(e.at), c.y(p) - 12, c.x(e.at), c.y(p) + 12, label,
                           c.say(W::TipKeyExpires, {{"node", c.name(p)}, {"key", esc(e.key)}, {"owner", esc(c.trace.name(e.owner))},
                                                    {"detail", esc(translate_detail(c.lang, e.detail))}, {"clocks", esc(c.clocks(e))}}));
}

void draw_storage_write(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  if (e.kind != Ev::StorageWrite && e.kind != Ev::StorageReject) return;
  const ProcId p = e.process;
  const bool ok = e.kind == Ev::StorageWrite;
  const std::string label = (ok ? "=" : "✕") + std::to_string(e.value) + (e.token >= 0 ? " t" + std::to_string(e.token) : "");
  const double x = c.x(e.at), w = text_width(label, c.fs(10));
  // Its label only where there is room for it (a run of hundreds of
  // writes keeps its dots, and the values in their tooltips).
  const auto row = ink.labels(c, p).free_row(x - w / 2, x + w / 2);
  const std::string text = row ? fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="{:g}">{}</text>)~", x,
                                             *row == 0 ? c.y(p) - c.fs(9) : c.y(p) + c.fs(19), c.fs(10), esc(label))
                               : "";
  ink.marks += fmt::format(R"~(<g class="{}"><circle cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}"/>{}<title>{}</title></g>)~",
                           ok ? "write-accepted" : "write-rejected", x, c.y(p), c.fs(5), ok ? "#3a3" : "#d33", text,
                           c.say(ok ? W::TipWriteAccepted : W::TipWriteRejected,
                                 {{"peer", c.name(e.peer)}, {"value", std::to_string(e.value)},
                                  {"token", e.token >= 0 ? c.say(W::TokenSuffix, {{"token", std::to_string(e.token)}}) : ""},
                                  {"why", esc(translate_detail(c.lang, e.detail))}}));
}

void draw_fault(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  if (e.kind != Ev::Fault || e.process != kNoProc) return;
  // Partitions are bands (draw_partitions); their ends need no mark.
  if (e.detail.rfind("partition ", 0) == 0 || e.detail.rfind("healed: ", 0) == 0 || e.detail.rfind("heal:", 0) == 0) return;
  // Across the lanes the fault names (a link's two ends), else all.
  double top = c.lanes_bottom, bottom = c.top;
  for (ProcId p = 0; p < c.trace.processes().size(); ++p) {
    if (!c.shown(p) || !names_process(e.detail, c.trace.name(p))) continue;
    top = std::min(top, c.y(p) - c.lane / 2);
    bottom = std::max(bottom, c.y(p) + c.lane / 2);
  }
  if (top > bottom) {
    top = c.top;
    bottom = c.lanes_bottom;
  }
  const std::string text = "⚡ " + translate_detail(c.lang, e.detail.substr(0, e.detail.find(" until ")));
  const bool room = c.slides || text_width(text, c.fs(9)) < 260;
  // A fault late in the run: its label ends inside the picture (inside()).
  const double label_x = inside(c, c.x(e.at) + 2, text_width(room ? text : "⚡", c.fs(9)));
  ink.marks += fmt::format(R"~(<g class="network-fault"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#a0a" stroke-dasharray="2 3"/><text x="{:.1f}" y="{:.1f}" fill="#a0a" font-size="{:g}">{}</text><title>{}</title></g>)~",
                           c.x(e.at), top, c.x(e.at), bottom, label_x, top + c.fs(10), c.fs(9), esc(room ? text : "⚡"),
                           esc(c.say(W::TipAt, {{"t", format_instant(e.at)}, {"what", translate_detail(c.lang, e.detail)}})));
}

}  // namespace locksim::diagram
