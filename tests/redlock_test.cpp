// Redlock pinned to its reference libraries (algorithms.md §2): drift and
// validity per flavour, quorum, retry delays, and the catalogue's thresholds.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "harness/run.hpp"
#include "tests/support.hpp"

namespace redlock_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {

std::string redlock_scenario(int nodes, const std::string& lock_keys, const std::string& extra = "") {
  std::string s = R"(title = "t"
about = "a"
source = "s"
duration = "20s"
[lock]
algorithm = "redlock"
)" + lock_keys + R"(
[network]
delay = "1ms"
)";
  for (int i = 1; i <= nodes; ++i) s += "[[node]]\nname = \"redis" + std::to_string(i) + "\"\n";
  s += "[[client]]\nname = \"client1\"\nwork = \"1ms\"\n" + extra;
  return s;
}


// client1's validity deadline on its monotonic clock, as the algorithm computed it.
Instant valid_until(const std::string& flavour, const std::string& ttl) {
  const Scenario s = parse_scenario(redlock_scenario(5, "ttl = \"" + ttl + "\"\nflavour = \"" + flavour + "\""), "t.toml");
  const RunResult r = run_scenario(s);
  const auto acquired = events_of(r, Ev::Acquired);
  REQUIRE(acquired.size() == 1);
  return Instant::from_ns(acquired[0]->value);
}

Instant ms(double v) { return Instant::from_ns(static_cast<std::int64_t>(v * 1e6)); }

}  // namespace

TEST_CASE("validity is ttl - elapsed - drift, with each flavour's drift formula") {
  // 5 nodes, 1 ms each way. Sequential flavours take 10 ms, parallel ones 2 ms.
  // ttl 10.05 s: 1% is 100.5 ms, which tells floor (rb, py) from round (node) apart.
  CHECK(valid_until("redlock-rb", "10050ms") == ms(10 + 10050 - 10 - (100 + 2)));
  CHECK(valid_until("redlock-py", "10050ms") == ms(10 + 10050 - 10 - (100 + 2)));
  CHECK(valid_until("node-redlock-v5", "10050ms") == ms(2 + 10050 - 2 - (101 + 2)));
  CHECK(valid_until("redsync", "10050ms") == ms(2 + 10050 - 2 - 100.5));  // no +2 ms
}

TEST_CASE("redlock-py 1.0.2 adds the drift to the validity: ttl - (elapsed - drift), the drift unrounded") {
  // SPSCommerce/redlock-py 169f291 __init__.py:64-67, fixed by PR #3 (1.0.4):
  // 10.05 s: drift = 100.5 + 2 ms, added where 1.0.8 subtracts floor(100.5) + 2.
  CHECK(valid_until("redlock-py-1.0.2", "10050ms") == ms(10 + 10050 - (10 - (100.5 + 2))));
  CHECK(valid_until("redlock-py-1.0.2", "10050ms") - valid_until("redlock-py", "10050ms") == Duration::ns(204'500'000));
}

TEST_CASE("a client holds the Redlock only with a majority: 2 of 3, 3 of 5, 4 of 7") {
  for (int n : {3, 5, 7}) {
    const int quorum = n / 2 + 1;
    for (int up : {quorum, quorum - 1}) {
      std::string faults;
      for (int i = up + 1; i <= n; ++i)
        faults += "[[fault]]\nat = \"0s\"\nkind = \"crash\"\ntarget = \"redis" + std::to_string(i) + "\"\n";
      const Scenario s = parse_scenario(redlock_scenario(n, "ttl = \"10s\"\nretry_count = 0", faults), "t.toml");
      const RunResult r = run_scenario(s);
      INFO("n = " << n << ", up = " << up);
      CHECK(events_of(r, Ev::Acquired).size() == (up >= quorum ? 1u : 0u));
    }
  }
}

namespace {
// The sleeps between tries: from the last reply of one try's unlock to the first SET of the next.
std::vector<Duration> retry_sleeps(const std::string& flavour) {
  std::string holder = "[[client]]\nname = \"holder\"\nwork = \"30s\"\n";
  std::string text = redlock_scenario(5, "ttl = \"60s\"\nflavour = \"" + flavour + "\"\nretry_count = 60", holder);
  text.replace(text.find("work = \"1ms\""), 12, "start = \"1s\"\nwork = \"1ms\"");
  const Scenario s = parse_scenario(text, "t.toml");
  const RunResult r = run_scenario(s);
  const ProcId client = *r.world->find("client1");
  std::vector<Duration> sleeps;
  std::optional<Instant> last_reply;
  bool after_failure = false;
  for (const TraceEvent& e : r.world->trace().events()) {
    if (e.process != client) continue;
    if (e.kind == Ev::AttemptFailed) {
      after_failure = true;
      last_reply = e.at;  // node-redlock v5 does not unlock between tries: its sleep starts here
    }
    if (e.kind == Ev::Delivered && after_failure) last_reply = e.at;
    if (e.kind == Ev::Sent && after_failure && last_reply && e.detail.rfind("SET ", 0) == 0) {
      sleeps.push_back(e.at - *last_reply);
      after_failure = false;
    }
  }
  return sleeps;
}
}  // namespace

TEST_CASE("retry delays are drawn in each flavour's range") {
  SUBCASE("redlock-rb 2.0.6: 200 ms + rand(50) ms") {
    const auto d = retry_sleeps("redlock-rb");
    REQUIRE(d.size() == 60);
    CHECK(*std::min_element(d.begin(), d.end()) >= Duration::ms(200));
    CHECK(*std::max_element(d.begin(), d.end()) < Duration::ms(250));
    CHECK(*std::min_element(d.begin(), d.end()) < Duration::ms(210));
    CHECK(*std::max_element(d.begin(), d.end()) > Duration::ms(240));
  }
  SUBCASE("redlock-rb-2014: rand(200) ms") {
    const auto d = retry_sleeps("redlock-rb-2014");
    REQUIRE(d.size() == 60);
    CHECK(*std::max_element(d.begin(), d.end()) < Duration::ms(200));
    CHECK(*std::min_element(d.begin(), d.end()) < Duration::ms(30));
    CHECK(*std::max_element(d.begin(), d.end()) > Duration::ms(170));
  }
  SUBCASE("redlock-py: exactly 200 ms") {
    for (Duration x : retry_sleeps("redlock-py")) CHECK(x == Duration::ms(200));
  }
  SUBCASE("redsync: uniform in [50, 250) ms") {
    const auto d = retry_sleeps("redsync");
    REQUIRE(d.size() == 60);
    CHECK(*std::min_element(d.begin(), d.end()) >= Duration::ms(50));
    CHECK(*std::max_element(d.begin(), d.end()) < Duration::ms(250));
  }
  SUBCASE("node-redlock v5: 200 ms +- 100 ms") {
    const auto d = retry_sleeps("node-redlock-v5");
    REQUIRE(d.size() == 60);
    CHECK(*std::min_element(d.begin(), d.end()) >= Duration::ms(100));
    CHECK(*std::max_element(d.begin(), d.end()) <= Duration::ms(300));
  }
}

TEST_CASE("each flavour's number of tries: rb 4, rb-2014 3, py 3, redsync 32, node-redlock v5 11") {
  for (auto [flavour, tries] : {std::pair{"redlock-rb", 4}, {"redlock-rb-2014", 3}, {"redlock-py", 3}, {"redsync", 32},
                                {"node-redlock-v5", 11}}) {
    std::string holder = "[[client]]\nname = \"holder\"\nwork = \"30s\"\n";
    std::string text = redlock_scenario(5, std::string("ttl = \"60s\"\nflavour = \"") + flavour + "\"", holder);
    text.replace(text.find("work = \"1ms\""), 12, "start = \"1s\"\nwork = \"1ms\"");
    const RunResult r = run_scenario(parse_scenario(text, "t.toml"));
    INFO(flavour);
    CHECK(static_cast<int>(events_of(r, Ev::AttemptFailed).size()) == tries);
    CHECK(events_of(r, Ev::AcquireFailed).size() == 1);
  }
}

TEST_CASE("K4: a jump larger than what is left of client1's key on redis3 during client2's tries breaks Redlock") {
  Scenario s = catalogue("scenarios/kleppmann/redlock-clock-jump.toml");
  CHECK(run_scenario(s).verdict == std::set{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate});
  // client2 tries four times (redlock-rb 2.0.6, 200..249 ms apart); its last
  // SET reaches redis3 at about 3.39 s, when client1's key there has about
  // 6.6 s left.
  first_fault(s, FaultKind::ClockJump).by = Duration::ms(6800);
  CHECK_FALSE(run_scenario(s).verdict.empty());
  first_fault(s, FaultKind::ClockJump).by = Duration::ms(6500);
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("R10: a node clock faster than the drift allowance breaks Redlock, within it, safe") {
  Scenario s = catalogue("scenarios/redis/redlock-drift.toml");
  CHECK(run_scenario(s).verdict.count(ViolationKind::Overlap) == 1);
  s.nodes[0].clock.drift_ppb = 5'000'000;  // 0.5%
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("K6 vs K7: the validity check after acquiring is what makes the pause harmless") {
  CHECK(run_scenario(catalogue("scenarios/kleppmann/redlock-pause-in-flight.toml")).verdict.empty());
  Scenario v5 = catalogue("scenarios/kleppmann/redlock-pause-in-flight-node-v5.toml");
  CHECK(run_scenario(v5).verdict.count(ViolationKind::Overlap) == 1);
  first_fault(v5, FaultKind::Pause).duration = Duration::s(5);  // wakes before the keys expire
  CHECK(run_scenario(v5).verdict.empty());
}

TEST_CASE("R7: a node restarted empty votes twice, a restart delayed past the TTL or an fsync'd key prevents it") {
  Scenario s = catalogue("scenarios/redis/redlock-restart-no-persistence.toml");
  CHECK(run_scenario(s).verdict.count(ViolationKind::Overlap) == 1);
  s.nodes[2].restart_delay = Duration::s(31);
  CHECK(run_scenario(s).verdict.empty());
  s.nodes[2].restart_delay = Duration::zero();
  s.nodes[2].persistence = Persistence::AofAlways;
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("Redlock refuses fencing = \"token\": its values are random, not monotonic") {
  CHECK_THROWS_WITH_AS(parse_scenario(redlock_scenario(3, "ttl = \"10s\"\nfencing = \"token\""), "k5.toml"),
                       doctest::Contains("offers no monotonic fencing token"), ScenarioError);
}

TEST_CASE("redsync and node-redlock extend a lock on a majority while it is valid, a pause past the validity loses it") {
  for (const char* flavour : {"redsync", "node-redlock-v5"}) {
    INFO(flavour);
    const std::string base = std::string(R"(title = "t"
about = "a"
source = "s"
duration = "20s"
[lock]
algorithm = "redlock"
ttl = "2s"
flavour = ")") + flavour + R"("
retry_count = "forever"
EXTEND
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
[[node]]
name = "redis3"
[[client]]
name = "client1"
job = "hold"
hold = "8s"
[[client]]
name = "client2"
start = "100ms"
job = "hold"
hold = "1s"
)";
    auto with = [&](const std::string& extend, const std::string& faults) {
      std::string text = base;
      text.replace(text.find("EXTEND"), 6, extend);
      return run_scenario(parse_scenario(text + faults, "t.toml"));
    };
    // Without extension the 8 s hold outlives the 2 s lease: client2 gets the lock too.
    CHECK(with("", "").verdict.count(ViolationKind::Overlap) == 1);
    // Extended whenever 500 ms are left, client1 keeps it for all 8 s.
    const RunResult extended = with("auto_extend = \"500ms\"", "");
    CHECK(extended.verdict.empty());
    CHECK(events_of(extended, Ev::Renewed).size() >= 5);
    // A 3 s pause outlasts the validity: the extension is refused and client1 is told.
    const RunResult paused =
        with("auto_extend = \"500ms\"", "[[fault]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"3s\"\n");
    CHECK(events_of(paused, Ev::Lost, "client1").size() == 1);
    // (node-redlock v5's client2, which waited from 100 ms, gets a lock whose
    // expiration was counted from before its first try: already spent, it
    // cannot be extended either. index.js:210,217,253.)
  }
}

TEST_CASE("auto_extend is refused for flavours without an extension") {
  CHECK_THROWS_WITH_AS(parse_scenario(redlock_scenario(3, "ttl = \"10s\"\nauto_extend = \"500ms\""), "t.toml"),
                       doctest::Contains("redlock-rb has no extension"), ScenarioError);
}

}  // namespace redlock_test
