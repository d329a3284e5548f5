// Time and clocks: durations and their text, a process's local clocks with
// offset, drift and jumps, the monotonic clock, sleeps measured on them.
#include <doctest/doctest.h>

#include "tests/kernel_support.hpp"

namespace clock_test {

using namespace locksim;
using namespace locksim::testing;

TEST_CASE("a clock reads offset plus drift times elapsed true time") {
  LocalClock c(Duration::s(5), 10'000'000);  // +5 s, 1% fast (10,000 ppm)
  CHECK(c.read(Instant::zero()) == Instant::zero() + Duration::s(5));
  CHECK(c.read(at_ms(1000)) == Instant::zero() + Duration::ms(6010));
  // When will it read 6.010 s? At true 1 s.
  CHECK(c.when_reads(Instant::zero() + Duration::ms(6010), Instant::zero()) == at_ms(1000));
}

TEST_CASE("a clock jump moves the reading at once, and later readings keep the jump") {
  LocalClock c(Duration::zero(), 0);
  c.jump(at_ms(1000), Duration::s(15));
  CHECK(c.read(at_ms(1000)) == Instant::zero() + Duration::ms(16'000));
  CHECK(c.read(at_ms(2000)) == Instant::zero() + Duration::ms(17'000));
  c.jump(at_ms(2000), -Duration::s(20));
  CHECK(c.read(at_ms(2000)) == Instant::zero() - Duration::ms(3'000));
}

TEST_CASE("a drift change keeps the reading continuous and changes only the rate") {
  LocalClock c(Duration::zero(), 0);
  c.set_drift_ppb(at_ms(1000), 50'000'000);  // 5% fast from 1 s on
  CHECK(c.read(at_ms(1000)) == at_ms(1000));
  CHECK(c.read(at_ms(3000)) == at_ms(3100));
}

TEST_CASE("a process's monotonic clock never jumps when its wall clock does") {
  World w(1);
  auto& p = w.add<Probe>("p");
  w.at(at_ms(100), [&] { w.clock_jump(p.id(), Duration::s(60)); });
  w.run_until(at_ms(200));
  CHECK(p.wall_now() == at_ms(60'200));
  CHECK(p.mono_now() == at_ms(200));
}

TEST_CASE("a sleep measured on a fast clock ends early in true time") {
  World w(1);
  auto& p = w.add<Probe>("p", ClockSpec{Duration::zero(), 100'000'000});  // 10% fast
  Instant woke;
  p.spawn([](Probe& self, Instant& woke) -> Task<void> {
    co_await self.sleep(Duration::ms(1100));
    woke = self.world().now();
  }(p, woke));
  w.run_until(at_ms(5000));
  CHECK(woke == at_ms(1000));
}

TEST_CASE("durations parse from strings with units, exactly") {
  CHECK(parse_duration("250ms") == Duration::ms(250));
  CHECK(parse_duration("1.5s") == Duration::ms(1500));
  CHECK(parse_duration("2m") == Duration::s(120));
  CHECK(parse_duration("+20s") == Duration::s(20));
  CHECK(parse_duration("-3s") == -Duration::s(3));
  CHECK(parse_duration("10us") == Duration::us(10));
  CHECK_FALSE(parse_duration("10").has_value());
  CHECK_FALSE(parse_duration("10 s").has_value());
  CHECK_FALSE(parse_duration("s").has_value());
  CHECK(format_instant(at_ms(31'002)) == "31.002s");
  CHECK(format_duration(Duration::ms(1500)) == "1.5s");
}

TEST_CASE("a clock reaches a target exactly at the instant when_reads names, whatever the drift's sign") {
  // when_reads is the exact ceiling of the inverse; read must floor for the
  // two to agree. Truncating toward zero, a negative drift read 1 ns ahead at
  // instants whose product is inexact, so the clock reached the target a
  // nanosecond before when_reads said (and a sleeper woke late).
  for (const std::int64_t ppb : {-333'333, -1, -999'999'999 + 1, 7, 41'766'000, -41'767'000}) {
    const LocalClock c(Duration::ms(3), ppb);
    for (std::int64_t target_ns = 3'000'001; target_ns < 3'000'001 + 5'000 * 7919; target_ns += 7919) {
      const Instant target = Instant::from_ns(target_ns);
      const Instant t = c.when_reads(target, Instant::zero());
      CHECK(c.read(t) >= target);
      if (t > Instant::zero()) CHECK(c.read(t - Duration::ns(1)) < target);
    }
  }
}

TEST_CASE("a slow clock's when_reads saturates at never, never wrapping into the past") {
  // At -60% a clock reads 0.4 s a second: never() on it is 2.5 * never() of
  // true time away, past the end of int64. Before, the 128-bit quotient was
  // cast back to 64 bits and came out as an instant before now.
  for (const std::int64_t ppb : {-600'000'000, -999'999'000, -500'000'001}) {
    const LocalClock c(Duration::zero(), ppb);
    const Instant now = Instant::from_ns(7'000'000'123);
    CHECK(c.when_reads(Instant::never(), now) == Instant::never());
    const Instant far = Instant::never() - Duration::s(1);
    const Instant t = c.when_reads(far, now);
    CHECK(t >= now);
    CHECK(t == Instant::never());  // later than never(): never
    // A near target is reached, as before.
    const Instant near = c.read(now) + Duration::s(2);
    const Instant u = c.when_reads(near, now);
    CHECK(u > now);
    CHECK(u < Instant::never());
    CHECK(c.read(u) >= near);
  }
}

TEST_CASE("a drifting clock computes in 64 bits where the product fits, and gives what the 128-bit formula gives") {
  // The reading's drift term floor(ns * ppb / 1e9) and when_reads' ceiling
  // local * 1e9 / (1e9 + ppb), done in 128 bits here as the reference, at
  // lengths on both sides of where the products leave 64 bits.
  auto floor_div = [](__int128 p, __int128 d) { return p / d - ((p % d != 0 && p < 0) ? 1 : 0); };
  for (const std::int64_t ppb : {-999'999'999 + 1, -41'767'000, -1, 7, 41'766'000, 1'000'000'000}) {
    const LocalClock c(Duration::zero(), ppb);
    const std::int64_t fits = INT64_MAX / (ppb < 0 ? -ppb : ppb);  // |ns * ppb| fits below this
    const std::int64_t past = fits < INT64_MAX ? fits + 1 : fits;  // the first length whose product does not fit
    for (const std::int64_t ns : {std::int64_t{1}, std::int64_t{999'999'937}, fits - 1, fits, past,
                                  std::int64_t{9'223'372'036}, std::int64_t{9'223'372'037}, INT64_MAX / 4}) {
      if (ns <= 0) continue;
      INFO(ppb, " ", ns);
      const __int128 drift = floor_div(static_cast<__int128>(ns) * ppb, 1'000'000'000);
      CHECK(static_cast<__int128>(c.read(Instant::from_ns(ns)).ns()) == ns + drift);
      const __int128 den = 1'000'000'000 + ppb;
      const __int128 want = (static_cast<__int128>(ns) * 1'000'000'000 + den - 1) / den;
      const Instant got = c.when_reads(Instant::from_ns(ns), Instant::zero());
      if (want >= Instant::never().ns()) CHECK(got == Instant::never());  // past the end of time: never
      else CHECK(static_cast<__int128>(got.ns()) == want);
    }
  }
}

}  // namespace clock_test
