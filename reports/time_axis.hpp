// The diagram's time axis: true time to x, either to scale (linear) or
// compressed (piecewise linear, long quiet stretches elided), and the tick
// labels. Internal to reports/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace locksim::diagram {

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

  // The compressed axis through these marks.
  TimeAxis(std::vector<Mark> all, Instant end, double width);
  // The axis to scale: x proportional to true time over the whole run.
  static TimeAxis to_scale(Instant end, double width);

  bool linear() const { return linear_; }
  Instant end() const { return points_.back().t; }
  double x(Instant t) const;
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
  static double solve(const std::vector<double>& d, const std::vector<bool>& elided, double avail, const std::vector<double>& min_gap);

  struct Point {
    Instant t;
    double x;
  };
  std::vector<Point> points_;
  std::vector<Break> breaks_;
  std::vector<Stretch> stretches_;
  double scale_ = 0;
  bool linear_ = false;

  TimeAxis() = default;
};

// The tick spacing for a scale: the finest 1-2-5 step (1 us to an hour)
// at least min_px apart.
std::int64_t tick_step(double px_per_ns, double min_px);

// A tick label: seconds with as many decimals as the tick spacing needs
// (truncated to them), minutes and seconds from a minute on.
std::string tick_label(Instant t, std::int64_t step_ns);

// A duration to two significant digits, for the label of an elided stretch.
std::string short_duration(Duration d);

}  // namespace locksim::diagram
