// The violations on the diagram and the notes below its lanes: each
// violation in words, what was left out, the legend.
#include <fmt/format.h>

#include <algorithm>

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
      label = fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" fill="#c00" font-weight="bold">{}</text>)~",
                          inside(c, c.x(v.at), markup::text_width(kind_words(c.lang, v.kind), c.fs(11))),
                          c.title_h + c.fs(14) * static_cast<double>(*c.violation_row[i]) + c.fs(12), esc(kind_words(c.lang, v.kind)));
    out += fmt::format(R"~(<g class="violation violation-{}"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#f33" fill-opacity="0.15" stroke="#d00" stroke-width="1.5"/>{}<title>{}</title></g>)~",
                       violation_name(v.kind), x0, y0, x1 - x0, y1 - y0, label,
                       c.say(W::TipViolation, {{"kind", esc(kind_words(c.lang, v.kind))}, {"detail", esc(say(c.lang, v.detail))}}));
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
    notes.add(c, kind_words(c.lang, v.kind) + " " + when + ": " + say(c.lang, v.detail), "#333", true);
  }
  if (violations.size() > kListed)
    notes.add(c, c.say(W::NoteMoreViolations, {{"violations", say_count(c.lang, violations.size() - kListed, W::ViolationOne, W::ViolationMany)}}),
              "#333", false);
  if (!violations.empty()) notes.y += 4;
}

void note_legend(const Canvas& c, Notes& notes, const Messages& m, const std::string& drawn) {
  const Lanes& l = c.lanes;
  if (l.hidden)
    notes.add(c,
              c.say(W::NoteHiddenLanes, {{"shown", std::to_string(l.clients.size() - l.hidden)}, {"all", std::to_string(l.clients.size())},
                                         {"hidden", std::to_string(l.hidden)}, {"lane", l.others_name}}),
              "#777", false);
  const auto messages = [&c](std::size_t n) { return say_count(c.lang, n, W::MessageOne, W::MessageMany); };
  if (m.in_retries) notes.add(c, c.say(W::NoteRetryMessages, {{"messages", messages(m.in_retries)}}), "#777", false);
  if (m.skipped || m.of_hidden) {
    std::string what = m.skipped ? c.say(W::NoteSkipped, {{"messages", messages(m.skipped)}, {"drawn", std::to_string(m.arrows.size())}}) : "";
    if (m.of_hidden) what += (what.empty() ? "" : c.say(W::NoteJoin)) + c.say(W::NoteOfHidden, {{"messages", messages(m.of_hidden)}});
    notes.add(c, what + c.say(W::NoteEnd), "#777", false);
  }
  // The legend of what this picture shows, by the classes drawn.
  struct Entry {
    const char* mark;  // a class the entry explains
    W words;
  };
  static constexpr Entry kLegend[] = {
      {"class=\"critical-section\"", W::LegendCriticalSection},
      {"class=\"lease-believed", W::LegendLeaseBelieved},
      {"class=\"holds\"", W::LegendHolds},
      {"class=\"key-expired\"", W::LegendKeyExpired},
      {"class=\"pause\"", W::LegendPause},
      {"class=\"down\"", W::LegendDown},
      {"class=\"partition\"", W::LegendPartition},
      {"class=\"retries\"", W::LegendRetries},
      {"class=\"crash\"", W::LegendCrash},
      {"class=\"restart\"", W::LegendRestart},
      {"class=\"clock\"", W::LegendClock},
      {"class=\"promoted\"", W::LegendPromoted},
      {"class=\"network-fault\"", W::LegendNetworkFault},
      {"class=\"write-", W::LegendWrite},
      {"class=\"message dropped\"", W::LegendLost},
      {"class=\"elided\"", W::LegendElided},
  };
  std::string legend;
  for (const Entry& e : kLegend)
    if (drawn.find(e.mark) != std::string::npos) legend += (legend.empty() ? "" : c.say(W::LegendSeparator)) + c.say(e.words);
  if (!legend.empty()) notes.add(c, legend, "#555", false);
}

}  // namespace locksim::diagram
