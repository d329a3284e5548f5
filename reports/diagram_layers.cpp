// The diagram's layers drawn per lane: the lanes themselves, what a process
// holds or suffers over time (bars), and the marks of single events.
#include <fmt/format.h>

#include <algorithm>

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
    out += fmt::format(R"~(<g class="lane lane-{}" data-process="{}"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ccc"/><text x="8" y="{:.1f}" font-weight="bold">{}</text></g>)~",
                       role, c.name(p), c.left, c.y(p), c.left + c.axis.width(), c.y(p), c.y(p) + 4, c.name(p));
    if (const std::string note = c.clock_note(p); !note.empty())
      out += fmt::format(R"~(<text class="clock-note" x="8" y="{:.1f}" font-size="9" fill="#a50">{}</text>)~", c.y(p) + 15, esc(note));
  }
  if (c.lanes.hidden) {
    const double y = c.top + c.lane * c.lanes.others_lane + c.lane / 2;
    out += fmt::format(R"~(<g class="lane-others"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ccc" stroke-dasharray="6 3"/><text x="8" y="{:.1f}" font-style="italic">{}</text><title>{} clients share this lane: their critical sections are drawn here, their messages are not</title></g>)~",
                       c.left, y, c.left + c.axis.width(), y, y + 4, esc(c.lanes.others_name), c.lanes.hidden);
  }
  return out;
}

namespace {

// An interval of process p as a bar h px high (half-transparent on the shared lane).
void bar(const Canvas& c, EventInk& ink, const char* cls, ProcId p, Instant a, Instant b, const char* fill, double h, const std::string& tip) {
  const bool own = c.shown(p);
  ink.bars += fmt::format(R"~(<rect class="{}" data-process="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"{}><title>{}</title></rect>)~",
                          cls, c.name(p), c.x(a), c.y(p) - h / 2, std::max(1.5, c.x(b) - c.x(a)), h, fill, own ? "" : R"~( fill-opacity="0.5")~",
                          esc(tip));
}

// The lease as the client believes it, on its monotonic clock, from a grant.
void draw_believed_lease(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  const ProcId p = e.process;
  const Instant believed_end = e.at + (Instant::from_ns(e.value) - e.mono);
  // A lease that by the client's own clock ran out before the grant
  // (a library that does not check): orange, back to where it ended.
  const bool over = believed_end < e.at;
  ink.marks += fmt::format(R"~(<g class="lease-believed{}"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2" stroke-dasharray="4 3"/><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"/><title>{}'s lease as it believes it: until {} on its monotonic clock (≈ t={}){}</title></g>)~",
                           over ? " lease-over" : "", c.x(e.at), c.y(p) - 13, c.x(believed_end), c.y(p) - 13, over ? "#e70" : "#2b7",
                           c.x(believed_end), c.y(p) - 17, c.x(believed_end), c.y(p) - 9, over ? "#e70" : "#2b7", c.name(p),
                           format_instant(Instant::from_ns(e.value)), format_instant(believed_end),
                           over ? fmt::format(": it had already run out when {} was granted the lock at {}", c.name(p), format_instant(e.at)) : "");
}

}  // namespace

void draw_holding(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  const ProcId p = e.process;
  switch (e.kind) {
    case Ev::Acquired:
      ink.cs_open[p] = e.at;
      ink.acquired[p] = &e;
      if (e.value >= 0 && c.shown(p)) draw_believed_lease(c, ink, e);
      break;
    case Ev::Releasing:
    case Ev::Lost:
      if (ink.cs_open.count(p)) {
        const TraceEvent* a = ink.acquired[p];
        bar(c, ink, "critical-section", p, ink.cs_open[p], e.at, "#4a90d9", 12,
            fmt::format("{} holds the lock from {} to {}{}", c.trace.name(p), format_instant(ink.cs_open[p]), format_instant(e.at),
                        a && a->token >= 0 ? fmt::format(" (token {})", a->token) : ""));
        ink.cs_open.erase(p);
      }
      break;
    case Ev::Paused:
      ink.pause_open[p] = e.at;
      break;
    case Ev::Resumed:
      if (ink.pause_open.count(p)) {
        bar(c, ink, "pause", p, ink.pause_open[p], e.at, "url(#hatch)", 24,
            fmt::format("{} paused (stop-the-world) from {} to {}; {}", c.trace.name(p), format_instant(ink.pause_open[p]), format_instant(e.at),
                        c.clocks(e)));
        ink.pause_open.erase(p);
      }
      break;
    case Ev::Crashed:
      if (ink.cs_open.count(p)) {
        bar(c, ink, "critical-section", p, ink.cs_open[p], e.at, "#4a90d9", 12, c.trace.name(p) + " holds the lock until it crashes");
        ink.cs_open.erase(p);
      }
      if (c.shown(p)) ink.down_open[p] = e.at;
      break;
    case Ev::Restarted:
      if (ink.down_open.count(p)) {
        bar(c, ink, "down", p, ink.down_open[p], e.at, "#e4e4e4", 18, c.trace.name(p) + " is down");
        ink.down_open.erase(p);
      }
      break;
    default:
      break;
  }
}

void close_holding(const Canvas& c, EventInk& ink) {
  const Instant end = c.run.stats.sim_time;
  for (const auto& [p, t] : ink.cs_open) bar(c, ink, "critical-section", p, t, end, "#4a90d9", 12, c.trace.name(p) + " still holds the lock when the run ends");
  for (const auto& [p, t] : ink.pause_open) bar(c, ink, "pause", p, t, end, "url(#hatch)", 24, c.trace.name(p) + " is paused when the run ends");
  for (const auto& [p, t] : ink.down_open) bar(c, ink, "down", p, t, end, "#e4e4e4", 18, c.trace.name(p) + " is down when the run ends");
}

void draw_lane_mark(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  const ProcId p = e.process;
  switch (e.kind) {
    case Ev::Crashed:
      if (!c.shown(p)) break;
      ink.marks += fmt::format(R"~(<g class="crash"><text x="{:.1f}" y="{:.1f}" fill="#c00" font-size="16" text-anchor="middle">✕</text><title>{} crashes at {}</title></g>)~",
                               c.x(e.at), c.y(p) + 6, c.name(p), format_instant(e.at));
      break;
    case Ev::Restarted:
      ink.marks += fmt::format(R"~(<g class="restart"><text x="{:.1f}" y="{:.1f}" fill="#080" font-size="14" text-anchor="middle">↻</text><title>{} restarts at {}</title></g>)~",
                               c.x(e.at), c.y(p) + 5, c.name(p), format_instant(e.at));
      break;
    case Ev::ClockJumped:
    case Ev::ClockDrift: {
      const std::string label = "◆ " + (e.kind == Ev::ClockJumped ? e.detail : std::to_string(e.value / 1000) + " ppm");
      const double x = c.x(e.at);
      const std::size_t row = ink.labels(c, p).place(x - 5, x - 5 + text_width(label, 10));
      ink.marks += fmt::format(R"~(<g class="clock"><text x="{:.1f}" y="{:.1f}" fill="#a50" font-size="10">{}</text><title>{}: {}; {}</title></g>)~",
                               x - 5, row == 0 ? c.y(p) + 22 : c.y(p) - 18, esc(label), c.name(p),
                               e.kind == Ev::ClockJumped ? "wall clock jumps " + esc(e.detail) : "clock drift now " + std::to_string(e.value / 1000) + " ppm",
                               esc(c.clocks(e)));
      break;
    }
    case Ev::Promoted: {
      const double x = c.x(e.at);
      const std::size_t row = ink.labels(c, p).place(x - 5, x - 5 + text_width("▲ promoted", 10));
      ink.marks += fmt::format(R"~(<g class="promoted"><text x="{:.1f}" y="{:.1f}" fill="#06c" font-size="10">▲ promoted</text><title>{} is promoted to master at {}; {}</title></g>)~",
                               x - 5, row == 0 ? c.y(p) + 22 : c.y(p) - 18, c.name(p), format_instant(e.at), esc(c.clocks(e)));
      break;
    }
    default:
      break;
  }
}

void draw_key_tick(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  if (e.kind != Ev::Expired) return;
  const ProcId p = e.process;
  ink.marks += fmt::format(R"~(<g class="key-expired"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#d33" stroke-width="3"/><title>{} expires {} ({}'s): {}; {}</title></g>)~",
                           c.x(e.at), c.y(p) - 12, c.x(e.at), c.y(p) + 12, c.name(p), esc(e.key), esc(c.trace.name(e.owner)), esc(e.detail),
                           esc(c.clocks(e)));
}

void draw_storage_write(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  if (e.kind != Ev::StorageWrite && e.kind != Ev::StorageReject) return;
  const ProcId p = e.process;
  const bool ok = e.kind == Ev::StorageWrite;
  const std::string label = (ok ? "=" : "✕") + std::to_string(e.value) + (e.token >= 0 ? " t" + std::to_string(e.token) : "");
  const double x = c.x(e.at), w = text_width(label, 10);
  // Its label only where there is room for it (a run of hundreds of
  // writes keeps its dots, and the values in their tooltips).
  const auto row = ink.labels(c, p).free_row(x - w / 2, x + w / 2);
  const std::string text = row ? fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="10">{}</text>)~", x,
                                             *row == 0 ? c.y(p) - 9 : c.y(p) + 17, esc(label))
                               : "";
  ink.marks += fmt::format(R"~(<g class="{}"><circle cx="{:.1f}" cy="{:.1f}" r="5" fill="{}"/>{}<title>{} {}'s write of counter = {}{}{}</title></g>)~",
                           ok ? "write-accepted" : "write-rejected", x, c.y(p), ok ? "#3a3" : "#d33", text,
                           ok ? "storage accepts" : "storage rejects", c.name(e.peer), e.value,
                           e.token >= 0 ? fmt::format(" (token {})", e.token) : "", ok ? "" : ": " + esc(e.detail));
}

void draw_fault(const Canvas& c, EventInk& ink, const TraceEvent& e) {
  if (e.kind != Ev::Fault || e.process != kNoProc) return;
  ink.marks += fmt::format(R"~(<g class="network-fault"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#a0a" stroke-dasharray="2 3"/><text x="{:.1f}" y="{:.1f}" fill="#a0a" font-size="10">⚡</text><title>{}: {}</title></g>)~",
                           c.x(e.at), c.top, c.x(e.at), c.lanes_bottom, c.x(e.at) + 2, c.top + 10, format_instant(e.at), esc(e.detail));
}

}  // namespace locksim::diagram
