// The clock shim (live/clockshim) and its writer, ClockControl: a shimmed
// process's wall clock steps and drifts as locksim says, its monotonic clock
// only when told apart, its waits until a deadline last what it asked for,
// and a real redis-server expires keys by the shimmed clock.
#include <doctest/doctest.h>
#include <time.h>

#include <sstream>

#include "live/blocking_client.hpp"
#include "live/clock_control.hpp"
#include "live/servers.hpp"
#include "tests/live_support.hpp"

namespace live_clockshim_test {

using namespace locksim;
using namespace locksim::live;
namespace testing = locksim::live::testing;
using locksim::live::testing::Child;
using locksim::live::testing::TempDir;

namespace {

// One line of locksim_clockprobe's output.
struct Readings {
  std::int64_t time_s = 0;
  std::int64_t realtime_ns = 0;
  std::int64_t coarse_ns = 0;
  std::int64_t gettimeofday_us = 0;
  std::int64_t monotonic_ns = 0;
  std::int64_t monotonic_coarse_ns = 0;
  std::int64_t boottime_ns = 0;
};

// locksim_clockprobe under the shim, reading `page` (or no page: empty).
class Probe {
 public:
  explicit Probe(const std::string& page)
      : child_(LOCKSIM_CLOCKPROBE, {}, env(page)) {}
  Readings read() {
    child_.write_line("");
    const std::string line = child_.read_line(Duration::s(10));
    REQUIRE_MESSAGE(!line.empty(), "the probe printed nothing");
    Readings r;
    std::istringstream(line) >> r.time_s >> r.realtime_ns >> r.coarse_ns >> r.gettimeofday_us >> r.monotonic_ns >>
        r.monotonic_coarse_ns >> r.boottime_ns;
    return r;
  }
  // How long (real milliseconds) a wait `how` of `ms` took (clockprobe.c's "wait").
  std::int64_t wait(const std::string& how, int ms) {
    child_.write_line("wait " + how + " " + std::to_string(ms));
    const std::string line = child_.read_line(Duration::s(20));
    REQUIRE_MESSAGE(!line.empty(), "the probe's " << how << " did not end within 20 s");
    REQUIRE_MESSAGE(line[0] != '?', line);
    return std::stoll(line);
  }

 private:
  static std::vector<std::string> env(const std::string& page) {
    std::vector<std::string> e{"LD_PRELOAD=" + clockshim_path().string()};
    if (!page.empty()) e.push_back("LOCKSIM_CLOCK_FILE=" + page);
    return e;
  }
  Child child_;
};

std::int64_t real_now_ns(clockid_t clock = CLOCK_REALTIME) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

constexpr std::int64_t kSecond = 1'000'000'000;

}  // namespace

TEST_CASE("a step of the shim moves time() gettimeofday and CLOCK_REALTIME but not CLOCK_MONOTONIC") {
  TempDir dir;
  ClockControl clock(dir.path() / "clock.page");
  Probe probe(clock.path().string());
  const Readings before = probe.read();
  CHECK(std::abs(before.realtime_ns - real_now_ns()) < kSecond);  // no offset yet

  clock.step(Duration::s(1000));
  const Readings after = probe.read();
  const std::int64_t real_elapsed = after.monotonic_ns - before.monotonic_ns;
  CHECK(real_elapsed < kSecond);
  CHECK(after.realtime_ns - before.realtime_ns - real_elapsed == doctest::Approx(1000 * kSecond).epsilon(0.0001));
  CHECK(after.coarse_ns - before.coarse_ns == doctest::Approx(1000 * kSecond).epsilon(0.0001));
  CHECK(after.gettimeofday_us - before.gettimeofday_us == doctest::Approx(1000 * 1'000'000LL).epsilon(0.0001));
  CHECK(after.time_s - before.time_s >= 1000);
  CHECK(after.time_s - before.time_s <= 1002);
  CHECK(clock.offset_now() == Duration::s(1000));

  clock.step(-Duration::s(3000));  // backwards, past where it started
  const Readings back = probe.read();
  CHECK(back.realtime_ns - real_now_ns() == doctest::Approx(-2000 * kSecond).epsilon(0.0001));
  CHECK(back.time_s < before.time_s);
  CHECK(back.monotonic_ns > after.monotonic_ns);
}

TEST_CASE("a drifting shimmed clock gains drift_ppb per second of real time and changes rate without a jump") {
  TempDir dir;
  ClockControl clock(dir.path() / "clock.page");
  Probe probe(clock.path().string());
  clock.set_drift_ppb(500'000'000);  // half a second per second: large enough to measure over 400 ms
  const Readings a = probe.read();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const Readings b = probe.read();
  const double rate = static_cast<double>(b.realtime_ns - a.realtime_ns) / static_cast<double>(b.monotonic_ns - a.monotonic_ns);
  CHECK(rate == doctest::Approx(1.5).epsilon(0.05));

  // Stopping the drift keeps what it gained: the clock is still ahead, and by as much.
  const Duration gained = clock.offset_now();
  CHECK(gained >= Duration::ms(150));
  clock.set_drift_ppb(0);
  const std::int64_t real = real_now_ns();
  const Readings c = probe.read();
  CHECK(c.realtime_ns - real == doctest::Approx(static_cast<double>(gained.count_ns())).epsilon(0.2));
  CHECK(clock.drift_ppb() == 0);

  // A change from one rate to another counts the new rate from the change:
  // the stretch before it is not gained again at the new rate.
  clock.set_drift_ppb(500'000'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const Duration before_change = clock.offset_now();
  clock.set_drift_ppb(250'000'000);
  const Duration after_change = clock.offset_now();
  CHECK(after_change - before_change < Duration::ms(5));  // kept the stretch twice: about 25 ms more
}

TEST_CASE("a monotonic step of the shim moves CLOCK_MONOTONIC, its coarse twin and CLOCK_BOOTTIME, not the wall clock") {
  TempDir dir;
  ClockControl clock(dir.path() / "clock.page");
  Probe probe(clock.path().string());
  const Readings before = probe.read();
  CHECK(std::abs(before.monotonic_ns - real_now_ns(CLOCK_MONOTONIC)) < kSecond);
  clock.step_mono(Duration::s(500));
  const Readings after = probe.read();
  const std::int64_t mono_now = real_now_ns(CLOCK_MONOTONIC);
  CHECK(after.monotonic_ns - mono_now == doctest::Approx(500 * kSecond).epsilon(0.0001));
  CHECK(after.monotonic_coarse_ns - mono_now == doctest::Approx(500 * kSecond).epsilon(0.0001));
  CHECK(after.boottime_ns - before.boottime_ns == doctest::Approx(500 * kSecond).epsilon(0.0001));
  CHECK(std::abs(after.realtime_ns - real_now_ns()) < kSecond);  // the wall clock stays
  CHECK(clock.mono_offset_now() == Duration::s(500));

  // A drift of the monotonic clock: half a second per second, and stopped without a jump.
  clock.set_mono_drift_ppb(500'000'000);
  const Readings a = probe.read();
  const std::int64_t ra = real_now_ns(CLOCK_MONOTONIC);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  const Readings b = probe.read();
  const std::int64_t rb = real_now_ns(CLOCK_MONOTONIC);
  CHECK(static_cast<double>(b.monotonic_ns - a.monotonic_ns) / static_cast<double>(rb - ra) == doctest::Approx(1.5).epsilon(0.05));
  CHECK(clock.mono_drift_ppb() == 500'000'000);
}

// Without the translation a deadline computed on a clock stepped +1000 s is
// 1000 s away for the kernel (the wait would not end within the probe's 20 s),
// and one stepped -1000 s is past at once (it would take 0 ms). The two clocks
// are stepped apart, so a wait translated by the other clock's offset fails too.
TEST_CASE("waits until a deadline on a stepped or drifting clock last what the program asked for") {
  TempDir dir;
  ClockControl clock(dir.path() / "clock.page");
  Probe probe(clock.path().string());
  const std::vector<std::string> waits{"sleep-mono", "cond-mono", "clockwait-mono", "sem-mono",
                                       "sleep-real", "cond-real", "sem-real"};
  for (Duration step : {Duration::s(1000), -Duration::s(1000)}) {
    CAPTURE(step);
    clock.step_mono(step);
    clock.step(-step / 2);
    for (const std::string& how : waits) {
      CAPTURE(how);
      const std::int64_t took = probe.wait(how, 200);
      CHECK(took >= 190);
      CHECK(took < 2000);
    }
    clock.step_mono(-step);
    clock.step(step / 2);
  }
  // A clock that runs twice as fast reaches a deadline 400 ms ahead in 200 ms of real time.
  clock.set_mono_drift_ppb(1'000'000'000);
  clock.set_drift_ppb(1'000'000'000);
  for (const char* how : {"sleep-mono", "cond-mono", "sem-real"}) {
    CAPTURE(how);
    const std::int64_t took = probe.wait(how, 400);
    CHECK(took >= 190);
    CHECK(took < 380);
  }
}

// What the other tests ask of CLOCK_REALTIME_COARSE holds only if the probe
// reads that clock: the time of the kernel's last tick (every 1 to 10 ms),
// so it stands apart from the fine clock read beside it by about a tick
// (more when ticks were skipped), more than 20 µs in all but a few readings. The fine clock read twice in a
// row is a microsecond apart at most.
TEST_CASE("the probe's coarse wall-clock reading is the coarse clock: a tick's worth from the fine one beside it") {
  timespec tick{};
  clock_getres(CLOCK_REALTIME_COARSE, &tick);
  REQUIRE(tick.tv_nsec >= 1'000'000);  // a kernel whose coarse clock is fine would make this test moot
  TempDir dir;
  ClockControl clock(dir.path() / "clock.page");
  Probe probe(clock.path().string());
  clock.step(Duration::s(1000));
  int apart = 0;
  for (int i = 0; i < 20; ++i) {
    const Readings r = probe.read();
    if (std::abs(r.realtime_ns - r.coarse_ns) > 20'000) ++apart;
    CHECK(std::abs(r.realtime_ns - r.coarse_ns) < 100'000'000);  // a tick late, or a few on an idle machine: not 1000 s
  }
  CHECK(apart >= 15);
}

// Before the epoch a reading's seconds are floored, as the kernel's are:
// -10.5 s is tv_sec -11 and tv_nsec 500 ms (clockshim.c's set_ns), so time()
// says -11. Truncated, it would say -10, with a negative tv_nsec behind it.
TEST_CASE("a wall clock stepped before the epoch reads whole seconds floored, as the kernel gives them") {
  TempDir dir;
  ClockControl clock(dir.path() / "clock.page");
  Probe probe(clock.path().string());
  clock.step(-Duration::ns(real_now_ns() + 10 * kSecond + kSecond / 2));
  const Readings r = probe.read();
  REQUIRE(r.realtime_ns > -11 * kSecond);
  REQUIRE(r.realtime_ns < -10 * kSecond - kSecond / 4);  // -10.5 s and the few ms since
  CHECK(r.time_s == -11);
  CHECK(r.gettimeofday_us < -10 * 1'000'000LL);
}

TEST_CASE("the shim changes nothing without a clock file") {
  Probe probe("");
  const Readings r = probe.read();
  CHECK(std::abs(r.realtime_ns - real_now_ns()) < kSecond);
  CHECK(std::abs(r.time_s - real_now_ns() / kSecond) <= 1);
}

TEST_CASE("a shimmed redis-server expires keys by its stepped wall clock") {
  Supervisor sup;
  const std::uint16_t port = sup.start_server("redis1", {.shim_clock = true});
  const std::uint16_t other = sup.start_server("redis2", {.shim_clock = true});
  for (std::uint16_t p : {port, other}) CHECK(call(p, {"SET", "k", "v", "PX", "30000"}).str == "OK");
  sup.clock("redis1").step(Duration::s(20));
  const resp::Value left = call(port, {"PTTL", "k"});
  CHECK(left.integer >= 9'500);
  CHECK(left.integer <= 10'100);
  CHECK(call(other, {"PTTL", "k"}).integer > 29'000);  // each node has a clock of its own
  sup.clock("redis1").step(Duration::s(40));
  CHECK(call(port, {"GET", "k"}).type == resp::Value::Type::Nil);
  CHECK(call(other, {"GET", "k"}).str == "v");
}

TEST_CASE("a shimmed sentinel whose wall clock jumps enters TILT mode") {
  Supervisor sup;
  sup.start_server("redis1");
  const std::uint16_t sentinel = sup.start_sentinel("s", {.master = "redis1", .shim_clock = true});
  const auto tilted = [&] { return call(sentinel, {"INFO", "sentinel"}).str.find("sentinel_tilt:1") != std::string::npos; };
  CHECK(!tilted());
  sup.clock("s").step(Duration::s(10));  // its timer sees 10 s pass between two runs: Sentinel distrusts itself
  CHECK(testing::eventually(tilted, Duration::s(5)));
}

}  // namespace live_clockshim_test
