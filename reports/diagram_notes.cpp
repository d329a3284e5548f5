// The violations on the diagram and the notes below its lanes: each
// violation in words, what was left out, the legend.
#include <fmt/format.h>

#include <algorithm>

#include "judge/words.hpp"
#include "reports/diagram_canvas.hpp"

namespace locksim::diagram {

using markup::esc;

std::string draw_violations(const Canvas& c) {
  std::string out;
  for (std::size_t i = 0; i < c.run.violations.size(); ++i) {
    const Violation& v = c.run.violations[i];
    double y0 = c.lanes_bottom, y1 = c.top;
    for (ProcId p : v.processes) {
      y0 = std::min(y0, c.y(p) - c.lane / 2);
      y1 = std::max(y1, c.y(p) + c.lane / 2);
    }
    if (v.processes.empty()) {
      y0 = c.top;
      y1 = c.lanes_bottom;
    }
    double x0 = c.x(v.at), x1 = c.x(v.until);
    if (x1 - x0 < 6) {
      x0 -= 3;
      x1 = x0 + 6;
    }
    std::string label;
    if (c.violation_row[i])
      label = fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" fill="#c00" font-weight="bold">{}</text>)~", c.x(v.at),
                          c.title_h + c.fs(14) * static_cast<double>(*c.violation_row[i]) + c.fs(12), violation_name(v.kind));
    out += fmt::format(R"~(<g class="violation violation-{}"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#f33" fill-opacity="0.15" stroke="#d00" stroke-width="1.5"/>{}<title>{}: {}</title></g>)~",
                       violation_name(v.kind), x0, y0, x1 - x0, y1 - y0, label, violation_name(v.kind), esc(v.detail));
  }
  return out;
}

void Notes::add(const Canvas& c, const std::string& text, const char* fill, bool bold_first_word) {
  const double text_w = std::max(600.0, c.total_w - c.left - 20);
  bool first = true;
  for (const std::string& line : markup::wrap(text, text_w, c.fs(11))) {
    std::string shown_line = esc(line);
    if (first && bold_first_word) {
      const auto sp = shown_line.find(' ');
      shown_line = "<tspan font-weight=\"bold\" fill=\"#c00\">" + shown_line.substr(0, sp) + "</tspan>" +
                   (sp == std::string::npos ? "" : shown_line.substr(sp));
    }
    svg += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)~", c.left, y, fill, shown_line);
    y += c.fs(15);
    first = false;
  }
}

void note_violations(const Canvas& c, Notes& notes) {
  const auto& violations = c.run.violations;
  constexpr std::size_t kListed = 8;
  for (std::size_t i = 0; i < violations.size() && i < kListed; ++i) {
    const Violation& v = violations[i];
    const std::string when = v.until != v.at ? format_instant(v.at) + "–" + format_instant(v.until) : format_instant(v.at);
    notes.add(c, std::string(violation_name(v.kind)) + " " + when + ": " + v.detail, "#333", true);
  }
  if (violations.size() > kListed)
    notes.add(c, fmt::format("… and {} more (hover over a red box for its explanation)", counted(violations.size() - kListed, "violation")), "#333",
              false);
  if (!violations.empty()) notes.y += 4;
}

void note_legend(const Canvas& c, Notes& notes, const Messages& m, const std::string& drawn) {
  const Lanes& l = c.lanes;
  if (l.hidden)
    notes.add(c,
              fmt::format("{} of {} clients have lanes of their own (those in violations first, then those that held the lock first); "
                          "the other {} share the lane \"{}\", which shows their critical sections only.",
                          l.clients.size() - l.hidden, l.clients.size(), l.hidden, l.others_name),
              "#777", false);
  if (m.in_retries)
    notes.add(c, fmt::format("{} of retry loops not drawn: each loop is one hatched band on its client's lane.", counted(m.in_retries, "message")),
              "#777", false);
  if (m.skipped || m.of_hidden) {
    std::string what = m.skipped ? fmt::format("{} not drawn: the {} drawn are the most relevant (near violations, of grants, releases "
                                               "and writes, lost ones)",
                                               counted(m.skipped, "message"), m.arrows.size())
                                 : "";
    if (m.of_hidden) what += (what.empty() ? "" : "; ") + fmt::format("{} of the clients without a lane not drawn", counted(m.of_hidden, "message"));
    notes.add(c, what + ".", "#777", false);
  }
  // The legend of what this picture shows, by the classes drawn.
  struct Entry {
    const char* mark;  // a class the entry explains
    const char* words;
  };
  static constexpr Entry kLegend[] = {
      {"class=\"critical-section\"", "bar: critical section, in its client's colour"},
      {"class=\"lease-believed", "dashed green: the lease as the client believes it, to its release (monotonic clock; orange: over before the grant)"},
      {"class=\"holds\"", "strip on a node: whose value it holds (faint: a failed try's)"},
      {"class=\"key-expired\"", "red tick: key, session or lease expires on the service"},
      {"class=\"pause\"", "hatched: paused"},
      {"class=\"down\"", "grey: down"},
      {"class=\"partition\"", "purple band: cut off by a partition"},
      {"class=\"retries\"", "hatched grey band: a retry loop"},
      {"class=\"crash\"", "✕\u00a0crash"},
      {"class=\"restart\"", "↻\u00a0restart"},
      {"class=\"clock\"", "◆\u00a0clock jump or drift"},
      {"class=\"promoted\"", "▲\u00a0replica promoted"},
      {"class=\"network-fault\"", "⚡\u00a0network fault"},
      {"class=\"write-", "●\u00a0storage write accepted (green) or rejected (red), with its value and token"},
      {"class=\"message dropped\"", "dashed red\u00a0✕: message lost"},
      {"class=\"elided\"", "grey band across the lanes: quiet stretch elided"},
  };
  std::string legend;
  for (const Entry& e : kLegend)
    if (drawn.find(e.mark) != std::string::npos) legend += (legend.empty() ? "" : " · ") + std::string(e.words);
  if (!legend.empty()) notes.add(c, legend, "#555", false);
}

}  // namespace locksim::diagram
