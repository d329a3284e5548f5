#include "reports/diagram.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include "reports/report.hpp"
#include "judge/words.hpp"

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

// Rough width of a text in px (sans-serif, average glyph 0.6 em), for layout.
double text_width(std::string_view s, double font_px) {
  std::size_t glyphs = 0;
  for (unsigned char c : s) glyphs += (c & 0xC0) != 0x80;  // UTF-8 code points
  return static_cast<double>(glyphs) * font_px * 0.6;
}

// Words wrapped into lines of at most `width` px.
std::vector<std::string> wrap(const std::string& text, double width, double font_px) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t space = text.find(' ', start);
    if (space == std::string::npos) space = text.size();
    const std::string word = text.substr(start, space - start);
    const std::string candidate = line.empty() ? word : line + " " + word;
    if (!line.empty() && text_width(candidate, font_px) > width) {
      lines.push_back(line);
      line = word;
    } else {
      line = candidate;
    }
    start = space + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// A duration to two significant digits, for the label of an elided stretch.
std::string short_duration(Duration d) {
  std::int64_t n = d.count_ns();
  std::int64_t unit = 1;
  while (n / unit >= 100) unit *= 10;
  return format_duration(Duration::ns((n + unit / 2) / unit * unit));
}

// True time to x, piecewise linear through the instants where something
// happens (the marks). Between two marks the axis is linear at one base scale,
// but two marks apart in time are at least kMinGap px apart (so events 100 us
// apart do not overlap in a run of minutes), and while some detail is cramped
// the longest quiet stretch is elided: drawn kElided px wide with a break.
class TimeAxis {
 public:
  static constexpr double kElided = 44;       // px of an elided stretch
  static constexpr double kMinGap = 14;       // px between story marks apart in time
  static constexpr double kMinGapMessage = 3; // px next to a message's mark
  static constexpr double kWide = 110;        // px of blank worth eliding while detail is cramped
  static constexpr std::size_t kMaxBreaks = 16;

  struct Mark {
    Instant t;
    bool story;  // an event of the story (else a message's arrival)
  };

  TimeAxis(std::vector<Mark> all, Instant end, double width) {
    all.push_back({Instant::zero(), true});
    all.push_back({end, true});
    std::sort(all.begin(), all.end(), [](const Mark& a, const Mark& b) { return a.t < b.t || (a.t == b.t && a.story > b.story); });
    std::vector<Instant> marks;
    std::vector<bool> story;
    for (const Mark& m : all) {
      if (!marks.empty() && marks.back() == m.t) continue;  // the story mark sorts first
      marks.push_back(m.t);
      story.push_back(m.story);
    }
    const std::size_t gaps = marks.size() - 1;
    std::vector<double> d(gaps), want(gaps);  // want: the gap's least width, before a dense run shares it out
    for (std::size_t i = 0; i < gaps; ++i) {
      d[i] = static_cast<double>((marks[i + 1] - marks[i]).count_ns());
      want[i] = story[i] && story[i + 1] ? kMinGap : kMinGapMessage;
    }
    std::vector<std::size_t> longest(gaps);
    for (std::size_t i = 0; i < gaps; ++i) longest[i] = i;
    std::stable_sort(longest.begin(), longest.end(), [&](std::size_t a, std::size_t b) { return d[a] > d[b]; });

    std::vector<bool> elided(gaps, false);
    std::vector<double> min_gap(gaps);
    std::size_t breaks = 0, next = 0;
    for (;;) {
      const double avail = std::max(100.0, width - kElided * static_cast<double>(breaks));
      // A dense run cannot give every pair of marks its least width: share out what there is.
      double wanted = 0;
      for (std::size_t i = 0; i < gaps; ++i) wanted += !elided[i] && d[i] > 0 ? want[i] : 0;
      const double share = std::min(1.0, 0.6 * avail / std::max(1.0, wanted));
      for (std::size_t i = 0; i < gaps; ++i) min_gap[i] = want[i] * share;
      scale_ = solve(d, elided, avail, min_gap);
      if (breaks >= kMaxBreaks || next >= gaps) break;
      // Cramped: marks apart in time drawn less than twice their least width apart.
      bool cramped = false;
      for (std::size_t i = 0; i < gaps && !cramped; ++i) cramped = !elided[i] && d[i] > 0 && scale_ * d[i] < 2 * want[i];
      if (!cramped || scale_ * d[longest[next]] <= kWide) break;
      elided[longest[next++]] = true;
      ++breaks;
    }
    double x = 0;
    points_.push_back({marks[0], 0});
    for (std::size_t i = 0; i < gaps; ++i) {
      if (elided[i]) {
        breaks_.push_back({marks[i], marks[i + 1], x});
        x += kElided;
      } else {
        x += d[i] > 0 ? std::max(scale_ * d[i], min_gap[i]) : 0;
      }
      points_.push_back({marks[i + 1], x});
    }
    // The linear stretches between breaks.
    Instant from = marks[0];
    double x0 = 0;
    for (std::size_t i = 0; i <= gaps; ++i) {
      if (i == gaps || elided[i]) {
        stretches_.push_back({from, marks[i], x0, points_[i].x});
        if (i < gaps) {
          from = marks[i + 1];
          x0 = points_[i + 1].x;
        }
      }
    }
  }

  double x(Instant t) const {
    if (t <= points_.front().t) return points_.front().x;
    auto it = std::upper_bound(points_.begin(), points_.end(), t, [](Instant v, const Point& p) { return v < p.t; });
    if (it == points_.end()) return points_.back().x;
    const Point& b = *it;
    const Point& a = *(it - 1);
    const double f = static_cast<double>((t - a.t).count_ns()) / static_cast<double>(std::max<std::int64_t>(1, (b.t - a.t).count_ns()));
    return a.x + f * (b.x - a.x);
  }
  double width() const { return std::max(1.0, points_.back().x); }
  // px per ns of true time where the axis is linear.
  double scale() const { return scale_; }

  struct Break {
    Instant from, to;
    double x;
  };
  const std::vector<Break>& breaks() const { return breaks_; }
  struct Stretch {
    Instant from, to;
    double x0, x1;
  };
  const std::vector<Stretch>& stretches() const { return stretches_; }

 private:
  // The scale at which the gaps not elided, each at least min_gap wide, fill `avail` px.
  static double solve(const std::vector<double>& d, const std::vector<bool>& elided, double avail, const std::vector<double>& min_gap) {
    double shortest = 0, total = 0;
    for (std::size_t i = 0; i < d.size(); ++i)
      if (!elided[i] && d[i] > 0) {
        shortest = shortest == 0 ? d[i] : std::min(shortest, d[i]);
        total += d[i];
      }
    if (total == 0) return 0;
    auto fill = [&](double s) {
      double w = 0;
      for (std::size_t i = 0; i < d.size(); ++i)
        if (!elided[i] && d[i] > 0) w += std::max(s * d[i], min_gap[i]);
      return w;
    };
    double lo = 0, hi = avail / total;
    while (fill(hi) < avail) hi *= 2;
    for (int i = 0; i < 60; ++i) {
      const double mid = (lo + hi) / 2;
      (fill(mid) < avail ? lo : hi) = mid;
    }
    return lo;
  }

  struct Point {
    Instant t;
    double x;
  };
  std::vector<Point> points_;
  std::vector<Break> breaks_;
  std::vector<Stretch> stretches_;
  double scale_ = 0;
};

// A tick label: seconds with as many decimals as the tick spacing needs,
// minutes and seconds from a minute on.
std::string tick_label(Instant t, std::int64_t step_ns) {
  const std::int64_t n = t.ns();
  if (step_ns >= 1'000'000'000 && n >= 60'000'000'000) {
    const std::int64_t secs = n / 1'000'000'000;
    return secs % 60 == 0 ? fmt::format("{}m", secs / 60) : fmt::format("{}m{}s", secs / 60, secs % 60);
  }
  int decimals = 0;
  for (std::int64_t unit = 1'000'000'000; unit > step_ns && decimals < 9; unit /= 10) ++decimals;
  std::string whole = std::to_string(n / 1'000'000'000);
  if (decimals == 0) return whole + "s";
  std::string frac = std::to_string(n % 1'000'000'000);
  frac.insert(0, 9 - frac.size(), '0');
  return whole + "." + frac.substr(0, static_cast<std::size_t>(decimals)) + "s";
}

bool lock_message(const std::string& detail) {
  for (const char* p : {"SET ", "SETNX", "DEL ", "GET ", "EVAL ", "INCR", "CREATE", "GETCHILDREN", "EXISTS", "DELETE",
                        "TXN", "RANGE", "WATCH", "NOTIFY", "LEASE", "CLAIM", "WRITE", "READ", "CLIENT REPLY SKIP"})
    if (detail.rfind(p, 0) == 0) return true;
  return false;
}

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

// A message: its send and its delivery (or loss).
struct Arrow {
  const TraceEvent* sent;
  const TraceEvent* end;
  int relevance = 0;
};

}  // namespace

std::string svg_diagram(const RunResult& r, const DiagramOptions& o) {
  const Trace& trace = r.world->trace();
  const auto& procs = trace.processes();
  const auto& events = trace.events();
  const Instant end = r.stats.sim_time;
  auto is_client = [&](ProcId p) { return p < procs.size() && procs[p].role == ProcessRole::Client; };

  // Which clients get a lane: all of them when they fit; else those in
  // violations, then those that held the lock first; the rest share a lane.
  std::vector<ProcId> clients;
  for (ProcId p = 0; p < procs.size(); ++p)
    if (is_client(p)) clients.push_back(p);
  std::vector<bool> shown(procs.size(), true);
  std::size_t hidden = 0;
  if (clients.size() > o.max_client_lanes) {
    std::vector<ProcId> priority;
    auto take = [&](ProcId p) {
      if (std::find(priority.begin(), priority.end(), p) == priority.end()) priority.push_back(p);
    };
    for (const Violation& v : r.violations)
      for (ProcId p : v.processes) take(p);
    for (const TraceEvent& e : events)
      if (e.kind == Ev::Acquired) take(e.process);
    for (ProcId p : clients) take(p);
    for (std::size_t i = o.max_client_lanes; i < priority.size(); ++i) shown[priority[i]] = false;
    hidden = clients.size() - o.max_client_lanes;
  }
  // Lane order: the processes in trace order, the shared lane after the last client shown.
  std::vector<double> lane_of(procs.size(), 0);
  std::size_t lanes = 0;
  double others_lane = -1;
  ProcId last_client = clients.empty() ? 0 : clients.back();
  for (ProcId p = 0; p < procs.size(); ++p) {
    if (shown[p]) lane_of[p] = static_cast<double>(lanes++);
    if (hidden && p == last_client) others_lane = static_cast<double>(lanes++);
  }
  for (ProcId p = 0; p < procs.size(); ++p)
    if (!shown[p]) lane_of[p] = others_lane;

  // Messages as arrows, sent -> delivered (or dropped), the lock's and the
  // storage's; when there are more than max_arrows, the most relevant.
  std::vector<Arrow> all;
  std::size_t of_hidden = 0;
  {
    std::map<std::int64_t, const TraceEvent*> sent;
    // A server answers a client's requests in order: whether each answer
    // still to come is to a request we draw (a lock or storage command, not a
    // heartbeat).
    std::map<std::pair<ProcId, ProcId>, std::deque<bool>> pending;
    auto server = [&](ProcId p) { return p < procs.size() && procs[p].role != ProcessRole::Client; };
    for (const TraceEvent& e : events) {
      if (e.kind == Ev::Sent) {
        if (e.peer >= procs.size()) continue;
        if (!o.storage_messages && (procs[e.peer].role == ProcessRole::Storage || procs[e.process].role == ProcessRole::Storage)) continue;
        bool draw = lock_message(e.detail);
        if (is_client(e.process) && server(e.peer)) {
          if (e.detail.rfind("CLIENT REPLY SKIP", 0) != 0) pending[{e.peer, e.process}].push_back(draw);
        } else if (server(e.process) && is_client(e.peer) && !draw && e.detail.rfind("\"unlocked", 0) != 0) {
          auto& q = pending[{e.process, e.peer}];  // an answer: drawn when its request is
          if (!q.empty()) {
            draw = q.front();
            q.pop_front();
          }
        } else if (server(e.process) && is_client(e.peer)) {
          draw = true;  // a push: a watch notification, an unlock message
        }
        if (draw) sent[e.value] = &e;
        continue;
      }
      if (e.kind != Ev::Delivered && e.kind != Ev::Dropped) continue;
      auto it = sent.find(e.value);
      if (it == sent.end()) continue;
      const TraceEvent* from = it->second;
      sent.erase(it);
      const ProcId to = e.kind == Ev::Dropped ? from->peer : e.process;
      if (!shown[from->process] || !shown[to]) {
        ++of_hidden;
        continue;
      }
      all.push_back({from, &e});
    }
  }
  // What is worth room on the axis: everything but the chatter, and only
  // what happens on a lane of its own.
  // The messages drawn get a little room too, where they arrive.
  std::vector<TimeAxis::Mark> marks;
  for (const TraceEvent& e : events) {
    if (e.process < procs.size() && !shown[e.process]) continue;
    if (e.kind == Ev::Sent || e.kind == Ev::Command) continue;
    if (e.kind == Ev::Delivered || e.kind == Ev::Dropped) continue;
    marks.push_back({e.at, true});
  }
  for (const Arrow& a : all) marks.push_back({a.end->at, false});
  for (const Violation& v : r.violations) {
    marks.push_back({v.at, true});
    marks.push_back({v.until, true});
  }
  const TimeAxis axis(marks, end, o.width);

  // A process whose clock the scenario sets off or drifting says so under its name.
  std::map<std::string, std::string> clock_note;
  {
    auto note_of = [](const ClockSpec& c) {
      std::string n;
      if (c.drift_ppb != 0)
        n = fmt::format("clock {:g}% {}", static_cast<double>(c.drift_ppb < 0 ? -c.drift_ppb : c.drift_ppb) / 1e7, c.drift_ppb > 0 ? "fast" : "slow");
      if (c.offset != Duration::zero())
        n += (n.empty() ? "wall clock " : ", ") + std::string(c.offset > Duration::zero() ? "+" : "") + format_duration(c.offset) + " off";
      return n;
    };
    const Scenario& sc = *r.scenario;
    for (const NodeConfig& n : sc.nodes) clock_note[n.name] = note_of(n.clock);
    for (const ClientConfig& c : sc.clients) clock_note[c.name] = note_of(c.clock);
    clock_note[sc.storage.name] = note_of(sc.storage.clock);
  }
  auto clock_note_of = [&](ProcId p) {
    const auto it = clock_note.find(trace.name(p));
    return it == clock_note.end() ? std::string() : it->second;
  };

  // Vertical layout: title, violation labels, the axis, the lanes, the notes.
  double name_w = 60;
  for (ProcId p = 0; p < procs.size(); ++p)
    name_w = std::max({name_w, text_width(trace.name(p), 11), shown[p] ? text_width(clock_note_of(p), 9) : 0.0});
  const std::string others_name = fmt::format("{} other clients", hidden);
  if (hidden) name_w = std::max(name_w, text_width(others_name, 11));
  const double left = name_w + 24;
  const double lane = lanes <= 8 ? 54 : lanes <= 16 ? 44 : 36;
  const double total_w = left + axis.width() + 60;

  // Violation labels in up to four rows above the axis; one that finds no
  // room is left out (its box and its line below the lanes remain).
  LabelRows violation_rows(4);
  std::vector<std::optional<std::size_t>> violation_row;
  for (const Violation& v : r.violations) {
    const double x0 = left + axis.x(v.at);
    violation_row.push_back(violation_rows.free_row(x0, x0 + text_width(violation_name(v.kind), 11) + 8));
  }
  const double title_h = 26;
  const double axis_y = title_h + 14.0 * static_cast<double>(violation_rows.used()) + 30;
  const double top = axis_y + 14;
  auto X = [&](Instant t) { return left + axis.x(t); };
  auto Y = [&](ProcId p) { return top + lane * lane_of[p] + lane / 2; };
  auto name = [&](ProcId p) { return esc(trace.name(p)); };
  const double lanes_bottom = top + lane * static_cast<double>(lanes);

  std::string s;  // the document, finished below once its height is known
  std::string body;

  // Lanes.
  for (ProcId p = 0; p < procs.size(); ++p) {
    if (!shown[p]) continue;
    const char* role = procs[p].role == ProcessRole::Client ? "client" : procs[p].role == ProcessRole::Storage ? "storage" : "node";
    body += fmt::format(R"~(<g class="lane lane-{}" data-process="{}"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ccc"/><text x="8" y="{:.1f}" font-weight="bold">{}</text></g>)~",
                        role, name(p), left, Y(p), left + axis.width(), Y(p), Y(p) + 4, name(p));
    if (const std::string note = clock_note_of(p); !note.empty())
      body += fmt::format(R"~(<text class="clock-note" x="8" y="{:.1f}" font-size="9" fill="#a50">{}</text>)~", Y(p) + 15, esc(note));
  }
  if (hidden) {
    const double y = top + lane * others_lane + lane / 2;
    body += fmt::format(R"~(<g class="lane-others"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#ccc" stroke-dasharray="6 3"/><text x="8" y="{:.1f}" font-style="italic">{}</text><title>{} clients share this lane: their critical sections are drawn here, their messages are not</title></g>)~",
                        left, y, left + axis.width(), y, y + 4, esc(others_name), hidden);
  }

  // The axis: a tick row per linear stretch, at a spacing that suits its
  // scale (1 us to minutes), and a break for each elided stretch.
  body += fmt::format(R"~(<line class="axis" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333"/>)~", left, axis_y,
                      left + axis.width(), axis_y);
  // Tick spacings in microseconds: 1-2-5 steps, then minutes.
  static constexpr std::int64_t kSteps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1'000, 2'000, 5'000, 10'000, 20'000, 50'000,
                                            100'000, 200'000, 500'000, 1'000'000, 2'000'000, 5'000'000, 10'000'000, 30'000'000,
                                            60'000'000, 120'000'000, 300'000'000, 600'000'000, 1'800'000'000, 3'600'000'000};
  // Labels first at the stretches' ends, then on multiples of the step, then
  // of finer steps where the axis is stretched out (dense detail): each only
  // where it does not touch a label already placed.
  std::vector<std::pair<double, double>> placed;
  auto tick = [&](Instant t, const std::string& label, bool major) {
    const double x = X(t), w = text_width(label, 10);
    for (const auto& [a, b] : placed)
      if (x - w / 2 < b + 6 && x + w / 2 > a - 6) return;
    placed.emplace_back(x - w / 2, x + w / 2);
    body += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333"/>)~", x, axis_y - (major ? 5 : 3), x, axis_y);
    body += fmt::format(R"~(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="10" fill="#333">{}</text>)~", x,
                        axis_y - 8, esc(label));
  };
  // Per stretch, one step that suits its scale (the stretch's own: where
  // detail is dense, the axis runs faster than the base scale).
  auto step_of = [&](const TimeAxis::Stretch& st) {
    const double local = std::max(axis.scale(), (st.x1 - st.x0) / static_cast<double>(std::max<std::int64_t>(1, (st.to - st.from).count_ns())));
    std::int64_t st_ns = kSteps[std::size(kSteps) - 1] * 1'000;
    for (std::int64_t m : kSteps)
      if (local * static_cast<double>(m * 1'000) >= 70) {
        st_ns = m * 1'000;
        break;
      }
    return st_ns;
  };
  // A stretch's start: one decimal finer than its ticks, at least
  // milliseconds (not 15.073470431s where the ticks are 10 ms apart).
  auto boundary_label = [&](Instant t, std::int64_t st_ns) {
    std::string l = tick_label(t, std::min<std::int64_t>(1'000'000, std::max<std::int64_t>(1, st_ns / 10)));
    const auto dot = l.find('.');
    while (dot != std::string::npos && l.size() > dot + 5 && l[l.size() - 2] == '0') l.erase(l.size() - 2, 1);  // 9.6000s -> 9.600s
    return l;
  };
  for (const TimeAxis::Stretch& st : axis.stretches()) tick(st.from, boundary_label(st.from, step_of(st)), true);
  tick(end, boundary_label(end, axis.stretches().empty() ? 1'000'000'000 : step_of(axis.stretches().back())), true);
  for (const TimeAxis::Stretch& st : axis.stretches()) {
    const std::int64_t st_ns = step_of(st);
    if ((st.to - st.from).count_ns() / st_ns > 400) continue;
    for (std::int64_t t = (st.from.ns() / st_ns + 1) * st_ns; t < st.to.ns(); t += st_ns)
      tick(Instant::from_ns(t), tick_label(Instant::from_ns(t), st_ns), false);
  }
  for (const TimeAxis::Break& b : axis.breaks()) {
    const double x = left + b.x;
    const double mid = x + TimeAxis::kElided / 2;
    body += fmt::format(R"~(<g class="elided"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#f2f2f2"/>)~"
                        R"~(<path d="M{:.1f},{:.1f} l4,-5 l4,10 l4,-5" fill="none" stroke="#333"/>)~"
                        R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="10" fill="#666">{}</text><title>{} of quiet elided ({} to {})</title></g>)~",
                        x + 4, axis_y + 2, TimeAxis::kElided - 8, lanes_bottom - axis_y - 2, mid - 6, axis_y, mid, axis_y + 12,
                        esc("≈" + short_duration(b.to - b.from)), esc(format_duration(b.to - b.from)), format_instant(b.from),
                        format_instant(b.to));
  }

  // Intervals per process: critical sections, pauses, down times; marks.
  std::map<ProcId, Instant> cs_open, pause_open, down_open;
  std::map<ProcId, const TraceEvent*> acquired;
  std::map<double, LabelRows> lane_labels;  // per lane: row 0 above the line, row 1 below
  auto lane_label_row = [&](ProcId p, double x0, double x1) {
    auto it = lane_labels.try_emplace(lane_of[p], 2).first;
    return it->second.place(x0, x1);
  };
  std::string bars, marks_svg, arrows;
  auto bar = [&](const char* cls, ProcId p, Instant a, Instant b, const char* fill, double h, const std::string& tip) {
    const bool own = shown[p];
    bars += fmt::format(R"~(<rect class="{}" data-process="{}" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}"{}><title>{}</title></rect>)~",
                        cls, name(p), X(a), Y(p) - h / 2, std::max(1.5, X(b) - X(a)), h, fill, own ? "" : R"~( fill-opacity="0.5")~",
                        esc(tip));
  };
  auto clocks = [&](const TraceEvent& e) {
    return fmt::format("t={} · {}'s wall clock {} · monotonic {}", format_instant(e.at), trace.name(e.process),
                       format_instant(e.wall), format_instant(e.mono));
  };
  for (const TraceEvent& e : events) {
    const ProcId p = e.process;
    if (p != kNoProc && !shown[p] && e.kind != Ev::Acquired && e.kind != Ev::Releasing && e.kind != Ev::Lost && e.kind != Ev::Crashed)
      continue;  // a client without a lane of its own: only its critical sections
    switch (e.kind) {
      case Ev::Acquired: {
        cs_open[p] = e.at;
        acquired[p] = &e;
        if (e.value >= 0 && shown[p]) {  // the lease as the client believes it, on its monotonic clock
          const Instant believed_end = e.at + (Instant::from_ns(e.value) - e.mono);
          // A lease that by the client's own clock ran out before the grant
          // (a library that does not check): orange, back to where it ended.
          const bool over = believed_end < e.at;
          marks_svg += fmt::format(R"~(<g class="lease-believed{}"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2" stroke-dasharray="4 3"/><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"/><title>{}'s lease as it believes it: until {} on its monotonic clock (≈ t={}){}</title></g>)~",
                                   over ? " lease-over" : "", X(e.at), Y(p) - 13, X(believed_end), Y(p) - 13, over ? "#e70" : "#2b7",
                                   X(believed_end), Y(p) - 17, X(believed_end), Y(p) - 9, over ? "#e70" : "#2b7", name(p),
                                   format_instant(Instant::from_ns(e.value)), format_instant(believed_end),
                                   over ? fmt::format(": it had already run out when {} was granted the lock at {}", name(p), format_instant(e.at)) : "");
        }
        break;
      }
      case Ev::Releasing:
      case Ev::Lost:
        if (cs_open.count(p)) {
          const TraceEvent* a = acquired[p];
          bar("critical-section", p, cs_open[p], e.at, "#4a90d9", 12,
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
          bar("pause", p, pause_open[p], e.at, "url(#hatch)", 24,
              fmt::format("{} paused (stop-the-world) from {} to {}; {}", trace.name(p), format_instant(pause_open[p]), format_instant(e.at), clocks(e)));
          pause_open.erase(p);
        }
        break;
      case Ev::Crashed:
        if (cs_open.count(p)) {
          bar("critical-section", p, cs_open[p], e.at, "#4a90d9", 12, trace.name(p) + " holds the lock until it crashes");
          cs_open.erase(p);
        }
        if (!shown[p]) break;
        down_open[p] = e.at;
        marks_svg += fmt::format(R"~(<g class="crash"><text x="{:.1f}" y="{:.1f}" fill="#c00" font-size="16" text-anchor="middle">✕</text><title>{} crashes at {}</title></g>)~",
                                 X(e.at), Y(p) + 6, name(p), format_instant(e.at));
        break;
      case Ev::Restarted:
        if (down_open.count(p)) {
          bar("down", p, down_open[p], e.at, "#e4e4e4", 18, trace.name(p) + " is down");
          down_open.erase(p);
        }
        marks_svg += fmt::format(R"~(<g class="restart"><text x="{:.1f}" y="{:.1f}" fill="#080" font-size="14" text-anchor="middle">↻</text><title>{} restarts at {}</title></g>)~",
                                 X(e.at), Y(p) + 5, name(p), format_instant(e.at));
        break;
      case Ev::ClockJumped:
      case Ev::ClockDrift: {
        const std::string label = "◆ " + (e.kind == Ev::ClockJumped ? e.detail : std::to_string(e.value / 1000) + " ppm");
        const double x = X(e.at);
        const std::size_t row = lane_label_row(p, x - 5, x - 5 + text_width(label, 10));
        marks_svg += fmt::format(R"~(<g class="clock"><text x="{:.1f}" y="{:.1f}" fill="#a50" font-size="10">{}</text><title>{}: {}; {}</title></g>)~",
                                 x - 5, row == 0 ? Y(p) + 22 : Y(p) - 18, esc(label), name(p),
                                 e.kind == Ev::ClockJumped ? "wall clock jumps " + esc(e.detail) : "clock drift now " + std::to_string(e.value / 1000) + " ppm",
                                 esc(clocks(e)));
        break;
      }
      case Ev::Promoted: {
        const double x = X(e.at);
        const std::size_t row = lane_label_row(p, x - 5, x - 5 + text_width("▲ promoted", 10));
        marks_svg += fmt::format(R"~(<g class="promoted"><text x="{:.1f}" y="{:.1f}" fill="#06c" font-size="10">▲ promoted</text><title>{} is promoted to master at {}; {}</title></g>)~",
                                 x - 5, row == 0 ? Y(p) + 22 : Y(p) - 18, name(p), format_instant(e.at), esc(clocks(e)));
        break;
      }
      case Ev::Expired:
        marks_svg += fmt::format(R"~(<g class="key-expired"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#d33" stroke-width="3"/><title>{} expires {} ({}'s): {}; {}</title></g>)~",
                                 X(e.at), Y(p) - 12, X(e.at), Y(p) + 12, name(p), esc(e.key), esc(trace.name(e.owner)), esc(e.detail), esc(clocks(e)));
        break;
      case Ev::StorageWrite:
      case Ev::StorageReject: {
        const bool ok = e.kind == Ev::StorageWrite;
        const std::string label = (ok ? "=" : "✕") + std::to_string(e.value) + (e.token >= 0 ? " t" + std::to_string(e.token) : "");
        const double x = X(e.at), w = text_width(label, 10);
        // Its label only where there is room for it (a run of hundreds of
        // writes keeps its dots, and the values in their tooltips).
        const auto row = lane_labels.try_emplace(lane_of[p], 2).first->second.free_row(x - w / 2, x + w / 2);
        const std::string text = row ? fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="10">{}</text>)~", x,
                                                   *row == 0 ? Y(p) - 9 : Y(p) + 17, esc(label))
                                     : "";
        marks_svg += fmt::format(R"~(<g class="{}"><circle cx="{:.1f}" cy="{:.1f}" r="5" fill="{}"/>{}<title>{} {}'s write of counter = {}{}{}</title></g>)~",
                                 ok ? "write-accepted" : "write-rejected", x, Y(p), ok ? "#3a3" : "#d33", text,
                                 ok ? "storage accepts" : "storage rejects", name(e.peer), e.value,
                                 e.token >= 0 ? fmt::format(" (token {})", e.token) : "", ok ? "" : ": " + esc(e.detail));
        break;
      }
      case Ev::Fault:
        if (p == kNoProc)
          marks_svg += fmt::format(R"~(<g class="network-fault"><line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#a0a" stroke-dasharray="2 3"/><text x="{:.1f}" y="{:.1f}" fill="#a0a" font-size="10">⚡</text><title>{}: {}</title></g>)~",
                                   X(e.at), top, X(e.at), lanes_bottom, X(e.at) + 2, top + 10, format_instant(e.at), esc(e.detail));
        break;
      default:
        break;
    }
  }
  for (const auto& [p, t] : cs_open) bar("critical-section", p, t, end, "#4a90d9", 12, trace.name(p) + " still holds the lock when the run ends");
  for (const auto& [p, t] : pause_open) bar("pause", p, t, end, "url(#hatch)", 24, trace.name(p) + " is paused when the run ends");
  for (const auto& [p, t] : down_open) bar("down", p, t, end, "#e4e4e4", 18, trace.name(p) + " is down when the run ends");

  std::size_t skipped = 0;
  if (all.size() > o.max_arrows) {
    // Windows in which a client's messages matter: the attempt that got the
    // lock, its release, and around each violation for its participants.
    struct Window {
      ProcId client;
      Instant from, to;
      int weight;
    };
    std::vector<Window> windows;
    std::map<ProcId, Instant> attempt, release;
    for (const TraceEvent& e : events) {
      if (!is_client(e.process)) continue;
      switch (e.kind) {
        case Ev::Acquiring:
        case Ev::AttemptFailed: attempt[e.process] = e.at; break;
        case Ev::Acquired:
          if (attempt.count(e.process)) windows.push_back({e.process, attempt[e.process], e.at, 4});
          break;
        case Ev::Releasing: release[e.process] = e.at; break;
        case Ev::Released:
        case Ev::ReleaseFailed:
          if (release.count(e.process)) windows.push_back({e.process, release[e.process], e.at, 3});
          break;
        default: break;
      }
    }
    const double near_px = 40;
    for (Arrow& a : all) {
      const ProcId from = a.sent->process, to = a.sent->peer;
      const double x0 = X(a.sent->at), x1 = X(a.end->at);
      // A lost message weighs less than a grant's: a retry loop loses many,
      // and within a grant's attempt it weighs as much as the grants.
      int weight = a.end->kind == Ev::Dropped ? 2 : 0;
      for (const Window& w : windows)
        if ((w.client == from || w.client == to) && a.sent->at >= w.from && a.end->at <= w.to) weight = std::max(weight, w.weight);
      a.relevance += weight;
      if (a.sent->detail.rfind("WRITE", 0) == 0) a.relevance += 3;
      for (const Violation& v : r.violations) {
        const bool near = x1 >= X(v.at) - near_px && x0 <= X(v.until) + near_px;
        if (!near) continue;
        a.relevance += 2;
        for (ProcId p : v.processes)
          if (p == from || p == to) a.relevance += 8;
      }
    }
    std::vector<std::size_t> order(all.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all[a].relevance > all[b].relevance; });
    // The most relevant first; of the tier that does not fit whole (often a
    // retry loop of equals), an even sample over the run, not its first ones.
    std::vector<bool> keep(all.size(), false);
    std::size_t taken = 0;
    while (taken < o.max_arrows) {
      const int tier = all[order[taken]].relevance;
      std::size_t tier_end = taken;
      while (tier_end < order.size() && all[order[tier_end]].relevance == tier) ++tier_end;
      const std::size_t room = o.max_arrows - taken, n = tier_end - taken;
      if (n <= room) {
        for (std::size_t i = taken; i < tier_end; ++i) keep[order[i]] = true;
        taken = tier_end;
        continue;
      }
      for (std::size_t k = 0; k < room; ++k) keep[order[taken + (k * n + n / 2) / room]] = true;  // in time order within the tier
      break;
    }
    std::vector<Arrow> kept;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (keep[i]) kept.push_back(all[i]);
    skipped = all.size() - kept.size();
    all = std::move(kept);
  }
  for (const Arrow& a : all) {
    const TraceEvent& from = *a.sent;
    const TraceEvent& e = *a.end;
    const bool lost = e.kind == Ev::Dropped;
    const ProcId to = lost ? from.peer : e.process;
    // A lost message: dashed red, towards its destination's lane (so that it
    // names it), with no head and a ✕ just short of the lane.
    const double x0 = X(from.at), y0 = Y(from.process), x1 = X(e.at), y1 = Y(to);
    arrows += fmt::format(R"~(<line class="message{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1"{}><title>{} → {}: {} (sent {}, {} {}){}</title></line>)~",
                          lost ? " dropped" : "", x0, y0, x1, y1, lost ? "#d33" : "#999",
                          lost ? R"~( stroke-dasharray="3 2" stroke-opacity="0.6")~" : R"~( marker-end="url(#arrow)")~", name(from.process), name(to),
                          esc(from.detail), format_instant(from.at), lost ? "lost at" : "delivered", format_instant(e.at),
                          lost ? ": " + esc(e.detail) : "");
    if (lost) {
      const double f = std::max(0.5, 1 - 9 / std::max(1.0, std::hypot(x1 - x0, y1 - y0)));
      arrows += fmt::format(R"~(<text class="lost-mark" x="{:.1f}" y="{:.1f}" fill="#d33" font-size="9" text-anchor="middle">✕</text>)~",
                            x0 + f * (x1 - x0), y0 + f * (y1 - y0) + 3);
    }
  }

  // The violations, over their interval and the lanes of the clients
  // involved, labelled above the axis; their explanations below the lanes.
  std::string violations;
  for (std::size_t i = 0; i < r.violations.size(); ++i) {
    const Violation& v = r.violations[i];
    double y0 = lanes_bottom, y1 = top;
    for (ProcId p : v.processes) {
      y0 = std::min(y0, Y(p) - lane / 2);
      y1 = std::max(y1, Y(p) + lane / 2);
    }
    if (v.processes.empty()) {
      y0 = top;
      y1 = lanes_bottom;
    }
    double x0 = X(v.at), x1 = X(v.until);
    if (x1 - x0 < 6) {
      x0 -= 3;
      x1 = x0 + 6;
    }
    std::string label;
    if (violation_row[i])
      label = fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" fill="#c00" font-weight="bold">{}</text>)~", X(v.at),
                          title_h + 14.0 * static_cast<double>(*violation_row[i]) + 12, violation_name(v.kind));
    violations += fmt::format(R"~(<g class="violation violation-{}"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#f33" fill-opacity="0.15" stroke="#d00" stroke-width="1.5"/>{}<title>{}: {}</title></g>)~",
                              violation_name(v.kind), x0, y0, x1 - x0, y1 - y0, label, violation_name(v.kind), esc(v.detail));
  }

  // Notes below the lanes: violations in words, what was left out, the legend.
  std::string notes;
  double y = lanes_bottom + 22;
  const double text_w = std::max(600.0, total_w - left - 20);
  auto note = [&](const std::string& text, const char* fill, bool bold_first_word) {
    bool first = true;
    for (const std::string& line : wrap(text, text_w, 11)) {
      std::string shown_line = esc(line);
      if (first && bold_first_word) {
        const auto sp = shown_line.find(' ');
        shown_line = "<tspan font-weight=\"bold\" fill=\"#c00\">" + shown_line.substr(0, sp) + "</tspan>" +
                     (sp == std::string::npos ? "" : shown_line.substr(sp));
      }
      notes += fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" fill="{}">{}</text>)~", left, y, fill, shown_line);
      y += 15;
      first = false;
    }
  };
  constexpr std::size_t kListed = 8;
  for (std::size_t i = 0; i < r.violations.size() && i < kListed; ++i) {
    const Violation& v = r.violations[i];
    const std::string when = v.until != v.at ? format_instant(v.at) + "–" + format_instant(v.until) : format_instant(v.at);
    note(std::string(violation_name(v.kind)) + " " + when + ": " + v.detail, "#333", true);
  }
  if (r.violations.size() > kListed)
    note(fmt::format("… and {} more (hover over a red box for its explanation)", counted(r.violations.size() - kListed, "violation")), "#333", false);
  if (!r.violations.empty()) y += 4;
  if (hidden)
    note(fmt::format("{} of {} clients have lanes of their own (those in violations first, then those that held the lock first); "
                     "the other {} share the lane \"{}\", which shows their critical sections only.",
                     clients.size() - hidden, clients.size(), hidden, others_name),
         "#777", false);
  if (skipped || of_hidden) {
    std::string what = skipped ? fmt::format("{} not drawn: the {} drawn are the most relevant (near violations, of grants, releases "
                                             "and writes, lost ones)",
                                             counted(skipped, "message"), all.size())
                               : "";
    if (of_hidden) what += (what.empty() ? "" : "; ") + fmt::format("{} of the clients without a lane not drawn", counted(of_hidden, "message"));
    note(what + ".", "#777", false);
  }
  note("blue bar: critical section · dashed green: the lease as the client believes it (monotonic clock; orange: over before the grant) · red tick: key expires "
       "on a node · hatched: paused · grey: down · ✕\u00a0crash · ↻\u00a0restart · ◆\u00a0clock jump or drift · ▲\u00a0replica promoted · ⚡\u00a0network fault · "
       "●\u00a0storage write accepted (green) or rejected (red), with its value and token · dashed red\u00a0✕: message lost · grey band: quiet stretch elided",
       "#555", false);
  const double height = y + 4;

  s += fmt::format(R"~(<svg xmlns="http://www.w3.org/2000/svg" class="locksim-diagram" width="{:.0f}" height="{:.0f}" viewBox="0 0 {:.0f} {:.0f}" font-family="sans-serif" font-size="11">)~",
                   total_w, height, total_w, height);
  s += R"~(<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="2"/></pattern>)~"
       R"~(<marker id="arrow" viewBox="0 0 6 6" refX="6" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L6,3 L0,6 z" fill="#666"/></marker></defs>)~";
  s += R"~(<rect width="100%" height="100%" fill="white"/>)~";
  s += fmt::format(R"~(<text class="title" x="8" y="18" font-size="14" font-weight="bold">{}</text>)~", esc(r.scenario->title));
  s += body + bars + arrows + marks_svg + violations + notes;
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
