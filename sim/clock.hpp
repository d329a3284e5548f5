// A process's own clock: a piecewise-linear function of true time.
//
//   reading(t) = anchor_reading + (t - anchor_true) * (1 + drift)
//
// with drift in parts per billion (integer arithmetic, exact and portable).
// A jump moves the anchor reading; a drift change re-anchors at the current
// instant so the reading stays continuous. Each process has two: a wall clock
// (offset, drift, jumps: gettimeofday, System.currentTimeMillis) and a
// monotonic clock (drift only, never jumps: clock_gettime(CLOCK_MONOTONIC)).
#pragma once

#include <cstdint>

#include "sim/time.hpp"

namespace locksim {

class LocalClock {
 public:
  LocalClock() = default;
  LocalClock(Duration offset, std::int64_t drift_ppb)
      : anchor_reading_(Instant::zero() + offset), drift_ppb_(drift_ppb) {}

  Instant read(Instant now) const {
    const std::int64_t elapsed = (now - anchor_true_).count_ns();
    return anchor_reading_ + Duration::ns(elapsed + scale(elapsed, drift_ppb_));
  }

  // The true instant at which this clock will read `target` if nothing changes.
  // Never earlier than `now`. REQUIRES: drift_ppb > -1e9 (a clock that runs).
  Instant when_reads(Instant target, Instant now) const {
    const Duration local_left = target - read(now);
    if (local_left <= Duration::zero()) return now;
    if (drift_ppb_ == 0) return now + local_left;
    // true = local / (1 + drift), rounded up so the reading has reached the target.
    const __int128 num = static_cast<__int128>(local_left.count_ns()) * 1'000'000'000;
    const __int128 den = 1'000'000'000 + drift_ppb_;
    const auto true_ns = static_cast<std::int64_t>((num + den - 1) / den);
    return now + Duration::ns(true_ns);
  }

  void jump(Instant now, Duration by) {
    reanchor(now);
    anchor_reading_ += by;
  }
  void set_drift_ppb(Instant now, std::int64_t ppb) {
    reanchor(now);
    drift_ppb_ = ppb;
  }
  std::int64_t drift_ppb() const { return drift_ppb_; }

 private:
  static std::int64_t scale(std::int64_t ns, std::int64_t ppb) {
    if (ppb == 0) return 0;  // the common case: no 128-bit division
    return static_cast<std::int64_t>(static_cast<__int128>(ns) * ppb / 1'000'000'000);
  }
  void reanchor(Instant now) {
    anchor_reading_ = read(now);
    anchor_true_ = now;
  }

  Instant anchor_true_ = Instant::zero();
  Instant anchor_reading_ = Instant::zero();
  std::int64_t drift_ppb_ = 0;
};

struct ClockSpec {
  Duration offset = Duration::zero();  // wall clock reading minus true time at the start
  std::int64_t drift_ppb = 0;          // both clocks run at (1 + drift) of true time
};

struct Clocks {
  LocalClock wall;
  LocalClock mono;
  explicit Clocks(const ClockSpec& spec = {})
      : wall(spec.offset, spec.drift_ppb), mono(Duration::zero(), spec.drift_ppb) {}
  void set_drift_ppb(Instant now, std::int64_t ppb) {
    wall.set_drift_ppb(now, ppb);
    mono.set_drift_ppb(now, ppb);
  }
};

}  // namespace locksim
