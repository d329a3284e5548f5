#include "reports/diagram.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "reports/report.hpp"

namespace locksim {

namespace {

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// True time to x, piecewise linear: quiet stretches longer than `gap` are
// drawn `elided_px` wide with a break mark.
class TimeAxis {
 public:
  TimeAxis(std::vector<Instant> marks, Instant end, int width) {
    marks.push_back(Instant::zero());
    marks.push_back(end);
    std::sort(marks.begin(), marks.end());
    marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
    const Duration span = end - Instant::zero();
    // A stretch is quiet when it is longer than a twentieth of the run and than 50 ms.
    const Duration gap = max(span / 20, Duration::ms(50));
    Duration linear;
    int elided = 0;
    for (std::size_t i = 1; i < marks.size(); ++i) {
      const Duration d = marks[i] - marks[i - 1];
      if (d > gap) ++elided;
      else linear += d;
    }
    const double usable = std::max(100.0, width - kElided * elided);
    scale_ = linear > Duration::zero() ? usable / static_cast<double>(linear.count_ns()) : 0.0;
    double x = 0;
    for (std::size_t i = 0; i < marks.size(); ++i) {
      if (i > 0) {
        const Duration d = marks[i] - marks[i - 1];
        if (d > gap) {
          breaks_.push_back({marks[i - 1], marks[i], x});
          x += kElided;
        } else {
          x += scale_ * static_cast<double>(d.count_ns());
        }
      }
      points_.push_back({marks[i], x});
    }
  }

  double x(Instant t) const {
    if (points_.empty()) return 0;
    if (t <= points_.front().t) return points_.front().x;
    auto it = std::upper_bound(points_.begin(), points_.end(), t, [](Instant v, const Point& p) { return v < p.t; });
    if (it == points_.end()) return points_.back().x;
    const Point& b = *it;
    const Point& a = *(it - 1);
    const double f = static_cast<double>((t - a.t).count_ns()) / static_cast<double>(std::max<std::int64_t>(1, (b.t - a.t).count_ns()));
    return a.x + f * (b.x - a.x);
  }
  double width() const { return points_.empty() ? 0 : points_.back().x; }

  struct Break {
    Instant from, to;
    double x;
  };
  const std::vector<Break>& breaks() const { return breaks_; }
  static constexpr double kElided = 36;

 private:
  struct Point {
    Instant t;
    double x;
  };
  std::vector<Point> points_;
  std::vector<Break> breaks_;
  double scale_ = 0;
};

bool lock_message(const std::string& detail) {
  for (const char* p : {"SET ", "SETNX", "DEL ", "GET ", "EVAL ", "INCR", "CREATE", "GETCHILDREN", "EXISTS", "DELETE",
                        "TXN", "RANGE", "WATCH", "NOTIFY", "LEASE", "CLAIM", "WRITE", "READ"})
    if (detail.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

std::string svg_diagram(const RunResult& r, const DiagramOptions& o) {
  const Trace& trace = r.world->trace();
  const auto& procs = trace.processes();
  const auto& events = trace.events();
  const Instant end = r.stats.sim_time;

  // What is worth room on the axis: everything but the chatter.
  std::vector<Instant> marks;
  for (const TraceEvent& e : events)
    if (e.kind != Ev::Sent && e.kind != Ev::Delivered && e.kind != Ev::Command && e.kind != Ev::Dropped) marks.push_back(e.at);
  for (const Violation& v : r.violations) {
    marks.push_back(v.at);
    marks.push_back(v.until);
  }
  const TimeAxis axis(marks, end, o.width);

  const double left = 110, top = 70, lane = 54;
  const double height = top + lane * static_cast<double>(procs.size()) + 60;
  const double total_w = left + axis.width() + 40;
  auto X = [&](Instant t) { return left + axis.x(t); };
  auto Y = [&](ProcId p) { return top + lane * static_cast<double>(p) + lane / 2; };
  auto name = [&](ProcId p) { return esc(trace.name(p)); };

  std::string s;
  s += fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" class="locksim-diagram" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" font-family="sans-serif" font-size="11">)~",
                   total_w, height, total_w, height);
  s += R"~(<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="2"/></pattern>)~"
       R"~(<marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#666"/></marker></defs>)~";
  s += R"~(<rect width="100%" height="100%" fill="white"/>)~";

  // Lanes.
  for (ProcId p = 0; p < procs.size(); ++p) {
    const char* role = procs[p].role == ProcessRole::Client ? "client" : procs[p].role == ProcessRole::Storage ? "storage" : "node";
    s += fmt::format(R"~(<g class="lane lane-{}" data-process="{}"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ccc"/><text x="8" y="{:.1f}" font-weight="bold">{}</text></g>)~",
                     role, name(p), left, Y(p), left + axis.width(), Y(p), Y(p) + 4, name(p));
  }
  // The axis: ticks at each mark cluster's start, and breaks for elided stretches.
  s += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333"/>)~", left, top - 20, left + axis.width(), top - 20);
  double last_label = -100;
  for (Instant t : {Instant::zero(), end}) {
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)~", X(t), top - 26, format_instant(t));
    last_label = X(t);
  }
  double last_break_label = -1e9;
  for (const TimeAxis::Break& b : axis.breaks()) {
    const double x = left + b.x;
    // Adjacent breaks share one label row: only label one that has room.
    const bool room = x - last_break_label > 70;
    if (room) last_break_label = x;
    s += fmt::format(R"~(<g class="elided"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#f4f4f4"/><text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#777">{}</text><title>{} of quiet elided ({} to {})</title></g>)~",
                     x + 4, top - 10, TimeAxis::kElided - 8, lane * static_cast<double>(procs.size()), x + TimeAxis::kElided / 2,
                     top - 12, room ? "≈" + esc(format_duration(b.to - b.from)) : std::string(), esc(format_duration(b.to - b.from)), format_instant(b.from), format_instant(b.to));
  }
  (void)last_label;

  // Intervals per process: critical sections, pauses, down times.
  std::map<ProcId, Instant> cs_open, pause_open, down_open;
  std::map<ProcId, const TraceEvent*> acquired;
  std::string bars, marks_svg, arrows;
  auto bar = [&](const char* cls, ProcId p, Instant a, Instant b, const char* fill, double h, const std::string& tip) {
    bars += fmt::format(R"~(<rect class="{}" data-process="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"><title>{}</title></rect>)~",
                        cls, name(p), X(a), Y(p) - h / 2, std::max(1.0, X(b) - X(a)), h, fill, esc(tip));
  };
  auto clocks = [&](const TraceEvent& e) {
    return fmt::format("t={} · {}'s wall clock {} · monotonic {}", format_instant(e.at), trace.name(e.process),
                       format_instant(e.wall), format_instant(e.mono));
  };
  for (const TraceEvent& e : events) {
    const ProcId p = e.process;
    switch (e.kind) {
      case Ev::Acquired: {
        cs_open[p] = e.at;
        acquired[p] = &e;
        if (e.value >= 0) {  // the lease as the client believes it, on its monotonic clock
          const Instant believed_end = e.at + (Instant::from_ns(e.value) - e.mono);
          marks_svg += fmt::format(R"~(<g class="lease-believed"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#2b7" stroke-width="2" stroke-dasharray="4 3"/><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#2b7" stroke-width="2"/><title>{}'s lease as it believes it: until {} on its monotonic clock (≈ t={})</title></g>)~",
                                   X(e.at), Y(p) - 14, X(believed_end), Y(p) - 14, X(believed_end), Y(p) - 18, X(believed_end), Y(p) - 10,
                                   name(p), format_instant(Instant::from_ns(e.value)), format_instant(believed_end));
        }
        break;
      }
      case Ev::Releasing:
      case Ev::Lost:
        if (cs_open.count(p)) {
          const TraceEvent* a = acquired[p];
          bar("critical-section", p, cs_open[p], e.at, "#4a90d9", 14,
              fmt::format("{} holds the lock from {} to {}{}", trace.name(p), format_instant(cs_open[p]), format_instant(e.at),
                          a && a->token >= 0 ? fmt::format(" (token {})", a->token) : ""));
          cs_open.erase(p);
        }
        break;
      case Ev::Paused:
        pause_open[p] = e.at;
        break;
      case Ev::Resumed:
        if (pause_open.count(p)) {
          bar("pause", p, pause_open[p], e.at, "url(#hatch)", 26,
              fmt::format("{} paused (stop-the-world) from {} to {}; {}", trace.name(p), format_instant(pause_open[p]), format_instant(e.at), clocks(e)));
          pause_open.erase(p);
        }
        break;
      case Ev::Crashed:
        if (cs_open.count(p)) {
          bar("critical-section", p, cs_open[p], e.at, "#4a90d9", 14, trace.name(p) + " holds the lock until it crashes");
          cs_open.erase(p);
        }
        down_open[p] = e.at;
        marks_svg += fmt::format(R"~(<g class="crash"><text x="{:.1f}" y="{:.1f}" fill="#c00" font-size="16" text-anchor="middle">✕</text><title>{} crashes at {}</title></g>)~",
                                 X(e.at), Y(p) + 6, name(p), format_instant(e.at));
        break;
      case Ev::Restarted:
        if (down_open.count(p)) {
          bar("down", p, down_open[p], e.at, "#eee", 20, trace.name(p) + " is down");
          down_open.erase(p);
        }
        marks_svg += fmt::format(R"~(<g class="restart"><text x="{:.1f}" y="{:.1f}" fill="#080" font-size="14" text-anchor="middle">↻</text><title>{} restarts at {}</title></g>)~",
                                 X(e.at), Y(p) + 5, name(p), format_instant(e.at));
        break;
      case Ev::ClockJumped:
      case Ev::ClockDrift:
        marks_svg += fmt::format(R"~(<g class="clock"><text x="{:.1f}" y="{:.1f}" fill="#a50" text-anchor="middle">◆ {}</text><title>{}: {}; {}</title></g>)~",
                                 X(e.at), Y(p) + 20, esc(e.kind == Ev::ClockJumped ? e.detail : std::to_string(e.value / 1000) + " ppm"),
                                 name(p), e.kind == Ev::ClockJumped ? "wall clock jumps " + esc(e.detail) : "clock drift now " + std::to_string(e.value / 1000) + " ppm",
                                 esc(clocks(e)));
        break;
      case Ev::Expired:
        marks_svg += fmt::format(R"~(<g class="key-expired"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#d33" stroke-width="3"/><title>{} expires {} ({}'s): {}; {}</title></g>)~",
                                 X(e.at), Y(p) - 12, X(e.at), Y(p) + 12, name(p), esc(e.key), esc(trace.name(e.owner)), esc(e.detail), esc(clocks(e)));
        break;
      case Ev::StorageWrite:
      case Ev::StorageReject: {
        const bool ok = e.kind == Ev::StorageWrite;
        marks_svg += fmt::format(R"~(<g class="{}"><circle cx="{:.1f}" cy="{:.1f}" r="6" fill="{}"/><text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="10">{}</text><title>{} {}'s write of counter = {}{}{}</title></g>)~",
                                 ok ? "write-accepted" : "write-rejected", X(e.at), Y(p), ok ? "#3a3" : "#d33", X(e.at), Y(p) - 10,
                                 esc((ok ? "=" : "✕") + std::to_string(e.value) + (e.token >= 0 ? " t" + std::to_string(e.token) : "")),
                                 ok ? "storage accepts" : "storage rejects", name(e.peer), e.value,
                                 e.token >= 0 ? fmt::format(" (token {})", e.token) : "", ok ? "" : ": " + esc(e.detail));
        break;
      }
      case Ev::Fault:
        if (p == kNoProc)
          marks_svg += fmt::format(R"~(<g class="network-fault"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#a0a" stroke-dasharray="2 3"/><text x="{:.1f}" y="{:.1f}" fill="#a0a" font-size="10">⚡</text><title>{}: {}</title></g>)~",
                                   X(e.at), top, X(e.at), top + lane * static_cast<double>(procs.size()), X(e.at) + 2, top + 10,
                                   format_instant(e.at), esc(e.detail));
        break;
      default:
        break;
    }
  }
  for (const auto& [p, t] : cs_open) bar("critical-section", p, t, end, "#4a90d9", 14, trace.name(p) + " still holds the lock when the run ends");
  for (const auto& [p, t] : pause_open) bar("pause", p, t, end, "url(#hatch)", 26, trace.name(p) + " is paused when the run ends");
  for (const auto& [p, t] : down_open) bar("down", p, t, end, "#eee", 20, trace.name(p) + " is down when the run ends");

  // Messages as arrows, sent -> delivered (or dropped), the lock's and the storage's.
  std::map<std::int64_t, const TraceEvent*> sent;
  std::size_t drawn = 0, skipped = 0;
  for (const TraceEvent& e : events) {
    if (e.kind == Ev::Sent) {
      if (lock_message(e.detail) && (o.storage_messages || procs[e.peer].role != ProcessRole::Storage)) sent[e.value] = &e;
      continue;
    }
    if (e.kind != Ev::Delivered && e.kind != Ev::Dropped) continue;
    auto it = sent.find(e.value);
    if (it == sent.end()) continue;
    const TraceEvent& from = *it->second;
    sent.erase(it);
    if (drawn >= o.max_arrows) {
      ++skipped;
      continue;
    }
    ++drawn;
    const bool lost = e.kind == Ev::Dropped;
    const ProcId to = lost ? from.peer : e.process;
    arrows += fmt::format(R"~(<line class="message{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1" marker-end="url(#arrow)"><title>{} → {}: {} (sent {}, {} {}){}</title></line>)~",
                          lost ? " dropped" : "", X(from.at), Y(from.process), X(e.at), lost ? (Y(from.process) + Y(to)) / 2 : Y(to),
                          lost ? "#d33" : "#999", name(from.process), name(to), esc(from.detail), format_instant(from.at),
                          lost ? "lost at" : "delivered", format_instant(e.at), lost ? ": " + esc(e.detail) : "");
  }

  // The violations, over their interval and the lanes of the clients involved.
  std::string violations;
  double label_y = top - 48;
  for (const Violation& v : r.violations) {
    double y0 = top + lane * static_cast<double>(procs.size()), y1 = top;
    for (ProcId p : v.processes) {
      y0 = std::min(y0, Y(p) - lane / 2);
      y1 = std::max(y1, Y(p) + lane / 2);
    }
    if (v.processes.empty()) {
      y0 = top;
      y1 = top + lane * static_cast<double>(procs.size());
    }
    const double x0 = X(v.at), x1 = std::max(X(v.until), x0 + 4);
    violations += fmt::format(R"~(<g class="violation violation-{}"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#f33" fill-opacity="0.15" stroke="#d00" stroke-width="1.5"/><text x="{:.1f}" y="{:.1f}" fill="#c00" font-weight="bold">{}</text><title>{}: {}</title></g>)~",
                              violation_name(v.kind), x0, y0, x1 - x0, y1 - y0, x0, label_y, violation_name(v.kind), violation_name(v.kind),
                              esc(v.detail));
    label_y = label_y < top - 40 ? top - 36 : top - 48;  // alternate two rows of labels
  }
  s += bars + arrows + marks_svg + violations;
  if (skipped)
    s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" fill="#777">{} more messages not drawn</text>)~", left, height - 20, skipped);
  s += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" fill="#555">blue: critical section · dashed green: lease as the client believes it · red bar: key expires on a node · hatched: paused · ✕ crash · ◆ clock jump or drift · ⚡ network fault · ● storage write</text>)~",
                   left, height - 6);
  s += "</svg>";
  return s;
}

std::string html_report(const RunResult& r, const DiagramOptions& o) {
  const Scenario& sc = *r.scenario;
  std::string steps;
  for (const Step& st : narrate(r.world->trace()))
    steps += fmt::format("<li><span class=\"t\">t={}</span> {}</li>\n", format_instant(st.at), esc(st.text));
  std::string verdict;
  for (ViolationKind k : r.verdict) verdict += (verdict.empty() ? "" : ", ") + std::string(violation_name(k));
  if (verdict.empty()) verdict = "no violation";
  std::string details;
  for (const Violation& v : r.violations)
    details += fmt::format("<li><b>{}</b> {}</li>\n", violation_name(v.kind), esc(v.detail));
  return fmt::format(R"~(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; }}
.about {{ white-space: pre-wrap; background: #f7f7f7; padding: 12px; border-left: 4px solid #4a90d9; }}
.verdict {{ font-size: 1.2em; font-weight: bold; color: {vcolour}; }}
.diagram {{ overflow-x: auto; border: 1px solid #ddd; margin: 16px 0; }}
.diagram svg *:hover {{ opacity: 0.7; }}
ol li {{ margin: 2px 0; }} .t {{ font-family: monospace; color: #555; }}
code {{ background: #f0f0f0; padding: 2px 4px; }}
</style></head>
<body>
<h1>{title}</h1>
<p>{path} · source: {source}</p>
<p class="about">{about}</p>
<p class="verdict" id="verdict">Verdict: {verdict}{expected}</p>
<ul class="violations">{details}</ul>
<div class="diagram">{svg}</div>
<p>Hover over anything in the diagram for its times, local clock readings and message content.</p>
<h2>What happened</h2>
<ol class="narrative">{steps}</ol>
<p>seed {seed} · trace {hash} · replay: <code>{replay}</code></p>
</body></html>
)~",
                     fmt::arg("title", esc(sc.title)), fmt::arg("path", esc(sc.path)), fmt::arg("source", esc(sc.source)),
                     fmt::arg("about", esc(sc.about)), fmt::arg("verdict", verdict),
                     fmt::arg("expected", sc.expect.present ? (r.as_expected() ? " — as expected" : " — NOT as expected") : ""),
                     fmt::arg("vcolour", r.verdict.empty() ? "#2a2" : "#c00"), fmt::arg("details", details),
                     fmt::arg("svg", svg_diagram(r, o)), fmt::arg("steps", steps), fmt::arg("seed", r.seed),
                     fmt::arg("hash", r.trace_hash), fmt::arg("replay", esc(replay_command(r))));
}

}  // namespace locksim
