#include "reports/time_axis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "reports/diagram_canvas.hpp"

namespace locksim::diagram {

using markup::esc;
using markup::text_width;

TimeAxis::TimeAxis(std::vector<Mark> all, Instant end, double width) {
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

TimeAxis TimeAxis::to_scale(Instant end, double width) {
  TimeAxis a;
  const Instant last = std::max(end, Instant::from_ns(1));
  a.points_ = {{Instant::zero(), 0}, {last, width}};
  a.stretches_ = {{Instant::zero(), last, 0, width}};
  a.scale_ = width / static_cast<double>(last.ns());
  a.linear_ = true;
  return a;
}

double TimeAxis::x(Instant t) const {
  if (t <= points_.front().t) return points_.front().x;
  auto it = std::upper_bound(points_.begin(), points_.end(), t, [](Instant v, const Point& p) { return v < p.t; });
  if (it == points_.end()) return points_.back().x;
  const Point& b = *it;
  const Point& a = *(it - 1);
  const double f = static_cast<double>((t - a.t).count_ns()) / static_cast<double>(std::max<std::int64_t>(1, (b.t - a.t).count_ns()));
  return a.x + f * (b.x - a.x);
}

double TimeAxis::solve(const std::vector<double>& d, const std::vector<bool>& elided, double avail, const std::vector<double>& min_gap) {
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

std::int64_t tick_step(double px_per_ns, double min_px) {
  // Tick spacings in microseconds: 1-2-5 steps, then minutes.
  static constexpr std::int64_t kSteps[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1'000, 2'000, 5'000, 10'000, 20'000, 50'000,
                                            100'000, 200'000, 500'000, 1'000'000, 2'000'000, 5'000'000, 10'000'000, 30'000'000,
                                            60'000'000, 120'000'000, 300'000'000, 600'000'000, 1'800'000'000, 3'600'000'000};
  for (std::int64_t m : kSteps)
    if (px_per_ns * static_cast<double>(m * 1'000) >= min_px) return m * 1'000;
  return kSteps[std::size(kSteps) - 1] * 1'000;
}

std::string tick_label(Instant t, std::int64_t step_ns) {
  const std::int64_t n = t.ns();
  if (step_ns >= 60'000'000'000) {
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

std::string short_duration(Duration d) {
  std::int64_t n = d.count_ns();
  std::int64_t unit = 1;
  while (n / unit >= 100) unit *= 10;
  return format_duration(Duration::ns((n + unit / 2) / unit * unit));
}

namespace {

// Per stretch, one step that suits its scale (the stretch's own: where
// detail is dense, the axis runs faster than the base scale).
std::int64_t step_of(const TimeAxis& axis, const TimeAxis::Stretch& st, double min_px) {
  const double local = std::max(axis.scale(), (st.x1 - st.x0) / static_cast<double>(std::max<std::int64_t>(1, (st.to - st.from).count_ns())));
  return tick_step(local, min_px);
}

// The ticks: labels first at the stretches' ends, then on multiples of the
// step, each only where it does not touch a label already placed. A
// stretch's labels all have the precision of its step (its start, not on a
// multiple, is truncated to it: 15.07s where the ticks are 10 ms apart).
std::string draw_ticks(const Canvas& c) {
  const TimeAxis& axis = c.axis;
  const Instant end = axis.end();
  const double min_px = c.fs(70);
  std::string out;
  std::vector<std::pair<double, double>> placed;
  auto tick = [&](Instant t, const std::string& label, bool major) {
    const double x = c.x(t), w = text_width(label, c.fs(10));
    for (const auto& [a, b] : placed)
      if (x - w / 2 < b + 6 && x + w / 2 > a - 6) return;
    placed.emplace_back(x - w / 2, x + w / 2);
    out += fmt::format(R"~(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333"/>)~", x, c.axis_y - (major ? 5 : 3), x, c.axis_y);
    out += fmt::format(R"~(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="{:g}" fill="#333">{}</text>)~", x,
                       c.axis_y - c.fs(8), c.fs(10), esc(label));
  };
  for (const TimeAxis::Stretch& st : axis.stretches()) tick(st.from, tick_label(st.from, step_of(axis, st, min_px)), true);
  tick(end, tick_label(end, axis.stretches().empty() ? 1'000'000'000 : step_of(axis, axis.stretches().back(), min_px)), true);
  for (const TimeAxis::Stretch& st : axis.stretches()) {
    const std::int64_t st_ns = step_of(axis, st, min_px);
    if ((st.to - st.from).count_ns() / st_ns > 400) continue;
    for (std::int64_t t = (st.from.ns() / st_ns + 1) * st_ns; t < st.to.ns(); t += st_ns)
      tick(Instant::from_ns(t), tick_label(Instant::from_ns(t), st_ns), false);
  }
  return out;
}

// Which axis this is, on the picture: to scale, or compressed with quiet
// stretches cut out (so a long pause is not as wide as it is long).
std::string draw_caption(const Canvas& c) {
  return fmt::format(R"~(<text class="axis-caption axis-{}" x="{:.1f}" y="{:.1f}" text-anchor="end" font-size="{:g}" fill="#666">{}</text>)~",
                     c.axis.linear() ? "linear" : "compressed", c.left + c.axis.width(), c.caption_y, c.fs(10), esc(axis_caption(c)));
}

// An elided stretch: a grey band across the lanes, a break in the axis, its
// length (where it does not run into the length of the one before).
std::string draw_breaks(const Canvas& c) {
  std::string out;
  double free_from = -1e9;  // px: where the last length written ends
  for (const TimeAxis::Break& b : c.axis.breaks()) {
    const double x = c.left + b.x;
    const double mid = x + TimeAxis::kElided / 2;
    const std::string length = "≈" + short_duration(b.to - b.from);
    const double w = text_width(length, c.fs(10));
    const bool room = mid - w / 2 > free_from + 4;
    if (room) free_from = mid + w / 2;
    out += fmt::format(R"~(<g class="elided"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#f2f2f2"/>)~"
                       R"~(<path d="M{:.1f},{:.1f} l4,-5 l4,10 l4,-5" fill="none" stroke="#333"/>)~"
                       R"~(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="{:g}" fill="#666">{}</text><title>{}</title></g>)~",
                       x + 4, c.axis_y + 2, TimeAxis::kElided - 8, c.lanes_bottom - c.axis_y - 2, mid - 6, c.axis_y, mid, c.axis_y + c.fs(12), c.fs(10),
                       room ? esc(length) : "",
                       esc(c.say(W::TipElided, {{"d", format_duration(b.to - b.from)}, {"from", format_instant(b.from)}, {"to", format_instant(b.to)}})));
  }
  return out;
}

}  // namespace

std::string axis_caption(const Canvas& c) {
  std::string text = c.axis.linear()
                         ? c.say(W::AxisToScale, {{"d", short_duration(Duration::ns(static_cast<std::int64_t>(100 / c.axis.scale())))}})
                         : c.say(W::AxisCompressed);
  if (c.axis.end() < c.run.stats.sim_time)
    text += c.say(W::AxisQuietEnd, {{"from", format_duration(c.axis.end() - Instant::zero())}, {"end", format_duration(c.run.stats.sim_time - Instant::zero())}});
  return text;
}

std::string draw_axis(const Canvas& c) {
  // The axis: a tick row per linear stretch, at a spacing that suits its
  // scale (1 us to minutes), and a break for each elided stretch.
  std::string out = fmt::format(R"~(<line class="axis" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#333"/>)~", c.left, c.axis_y,
                                c.left + c.axis.width(), c.axis_y);
  return out + draw_ticks(c) + draw_breaks(c) + draw_caption(c);
}

}  // namespace locksim::diagram
