// A process's own clock: a piecewise-linear function of true time.
//
//   reading(t) = anchor_reading + (t - anchor_true) * (1 + drift)
//
// with drift in parts per billion (integer arithmetic, exact and portable).
// A jump moves the anchor reading; a drift change re-anchors at the current
// instant so the reading stays continuous. Each process has two: a wall clock
// (offset, drift, jumps: gettimeofday, System.currentTimeMillis) and a
// monotonic clock (drift only, never jumps: clock_gettime(CLOCK_MONOTONIC)).
// The wall clock may also drift on its own, apart from the monotonic one
// (ClockSpec::wall_drift_ppb).
#pragma once

#include <climits>
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
  // Never earlier than `now`, never later than Instant::never(): a clock
  // slower than true time (drift down to -999,999 ppm, which a scenario may
  // ask for) takes up to 1e6 times longer than its reading says, and a sleep
  // until never() on it (Redis's active expiry with no key to expire) ran past
  // the end of int64 and came back as an instant in the past.
  // REQUIRES: drift_ppb > -1e9 (a clock that runs).
  Instant when_reads(Instant target, Instant now) const {
    if (target >= Instant::never()) return Instant::never();
    const Duration local_left = target - read(now);
    if (local_left <= Duration::zero()) return now;
    if (drift_ppb_ == 0) return now + local_left;
    // true = local / (1 + drift), rounded up so the reading has reached the target.
    const std::int64_t den64 = 1'000'000'000 + drift_ppb_;
    std::int64_t num64;
    if (!__builtin_mul_overflow(local_left.count_ns(), std::int64_t{1'000'000'000}, &num64) &&
        num64 <= INT64_MAX - den64)  // the same quotient in 64 bits, without a 128-bit division
      return now + Duration::ns((num64 + den64 - 1) / den64);
    const __int128 num = static_cast<__int128>(local_left.count_ns()) * 1'000'000'000;
    const __int128 den = 1'000'000'000 + drift_ppb_;
    const __int128 true_ns = (num + den - 1) / den;
    if (true_ns >= (Instant::never() - now).count_ns()) return Instant::never();
    return now + Duration::ns(static_cast<std::int64_t>(true_ns));
  }

  void jump(Instant now, Duration by) {
    ++changes_;
    reanchor(now);
    anchor_reading_ += by;
  }
  void set_drift_ppb(Instant now, std::int64_t ppb) {
    ++changes_;
    reanchor(now);
    drift_ppb_ = ppb;
  }
  std::int64_t drift_ppb() const { return drift_ppb_; }
  // How many times the clock was stepped or changed rate: while it stays
  // the same, when_reads() of a target still ahead gives the same instant.
  std::uint32_t changes() const { return changes_; }

 private:
  static std::int64_t scale(std::int64_t ns, std::int64_t ppb) {
    if (ppb == 0) return 0;  // the common case: no 128-bit division
    // Floor, not C++'s truncation toward zero: with a negative drift,
    // truncation read a nanosecond ahead, so the clock reached a target
    // before when_reads() (an exact ceiling) said, and a sleeper woke late.
    if (std::int64_t p64; !__builtin_mul_overflow(ns, ppb, &p64)) {  // the same floor in 64 bits
      std::int64_t q = p64 / 1'000'000'000;
      if (p64 % 1'000'000'000 != 0 && p64 < 0) --q;
      return q;
    }
    const __int128 p = static_cast<__int128>(ns) * ppb;
    __int128 q = p / 1'000'000'000;
    if (p % 1'000'000'000 != 0 && p < 0) --q;
    return static_cast<std::int64_t>(q);
  }
  void reanchor(Instant now) {
    anchor_reading_ = read(now);
    anchor_true_ = now;
  }

  Instant anchor_true_ = Instant::zero();
  Instant anchor_reading_ = Instant::zero();
  std::int64_t drift_ppb_ = 0;
  std::uint32_t changes_ = 0;
};

struct ClockSpec {
  Duration offset = Duration::zero();  // wall clock reading minus true time at the start
  std::int64_t drift_ppb = 0;          // both clocks run at (1 + drift) of true time
  // The wall clock alone runs this much faster again: (1 + drift + wall_drift).
  // A wall clock that departs from the monotonic one at a steady rate: one a
  // time-sync agent corrects by frequent small steps (a hypervisor's guest
  // tools), or, seen by a process that times itself with
  // CLOCK_MONOTONIC_RAW, one that NTP slews. On Linux an NTP or adjtime(3)
  // slew moves CLOCK_MONOTONIC as well (clock_gettime(2)): for that, both
  // clocks slewed alike, use drift_ppb.
  std::int64_t wall_drift_ppb = 0;
};

struct Clocks {
  LocalClock wall;
  LocalClock mono;
  std::int64_t wall_extra_ppb = 0;  // the wall clock's own drift, on top of the shared one
  explicit Clocks(const ClockSpec& spec = {})
      : wall(spec.offset, spec.drift_ppb + spec.wall_drift_ppb),
        mono(Duration::zero(), spec.drift_ppb),
        wall_extra_ppb(spec.wall_drift_ppb) {}
  // The machine's oscillator drifts: both clocks, the wall clock's own drift kept on top.
  void set_drift_ppb(Instant now, std::int64_t ppb) {
    wall.set_drift_ppb(now, ppb + wall_extra_ppb);
    mono.set_drift_ppb(now, ppb);
  }
  // The wall clock alone changes rate; the monotonic clock runs on as it was.
  void set_wall_drift_ppb(Instant now, std::int64_t ppb) {
    wall_extra_ppb = ppb;
    wall.set_drift_ppb(now, mono.drift_ppb() + ppb);
  }
};

}  // namespace locksim
