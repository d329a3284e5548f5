// Each Redlock flavour is one version of one library: the flavour is parsed
// once into an enum, and each flavour's behaviours are pinned to its
// reference's code (the comments in lockalgos/redlock.cpp name the lines).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "harness/run.hpp"
#include "lockalgos/redlock.hpp"
#include "lockalgos/registry.hpp"
#include "tests/support.hpp"

namespace redlock_flavour_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

std::string scenario_text(int nodes, const std::string& lock_keys, const std::string& extra = "",
                          const std::string& duration = "20s") {
  std::string s = "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"" + duration +
                  "\"\n[lock]\nalgorithm = \"redlock\"\n" + lock_keys + "\n[network]\ndelay = \"1ms\"\n";
  for (int i = 1; i <= nodes; ++i) s += "[[node]]\nname = \"redis" + std::to_string(i) + "\"\n";
  return s + extra;
}

}  // namespace

TEST_CASE("every flavour the registry lists is parsed once into its own enum value") {
  const AlgorithmInfo* redlock = find_algorithm("redlock");
  REQUIRE(redlock != nullptr);
  std::set<RedlockFlavour> seen;
  for (const OptionInfo& f : redlock->flavours) {
    INFO(f.key);
    const Scenario s = parse_scenario(
        scenario_text(3, "ttl = \"10s\"\nflavour = \"" + std::string(f.key) + "\"", "[[client]]\nname = \"c\"\n"), "t.toml");
    seen.insert(s.lock.options_as<RedlockOptions>().flavour);
  }
  CHECK(seen.size() == redlock->flavours.size());
  // No flavour given: the first, the default.
  const Scenario d = parse_scenario(scenario_text(3, "ttl = \"10s\"", "[[client]]\nname = \"c\"\n"), "t.toml");
  CHECK(d.lock.options_as<RedlockOptions>().flavour == RedlockFlavour::RedlockRb);
}

// --- node-redlock v5 (redlock@5.0.0-beta.2, dist/cjs/index.js) ---

TEST_CASE("node-redlock v5: after retries, the lock's expiration is counted from before the first try") {
  // holder has the lock until about 1 s; client1 asks from 100 ms and retries
  // (200 +- 100 ms apart) until it gets it. index.js:210,217: expiration =
  // start + duration - drift, start read once before every try.
  const std::string clients = "[[client]]\nname = \"holder\"\nwork = \"1s\"\n"
                              "[[client]]\nname = \"client1\"\nstart = \"100ms\"\nwork = \"1ms\"\n";
  const RunResult r = run_scenario(parse_scenario(
      scenario_text(3, "ttl = \"10s\"\nflavour = \"node-redlock-v5\"", clients), "t.toml"));
  REQUIRE(events_of(r, Ev::AttemptFailed, "client1").size() >= 2);
  const auto acquired = events_of(r, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  // 100 ms + 10 s - (round(1% of 10 s) + 2 ms): not counted from the last try.
  CHECK(acquired[0]->value == Duration::ms(100 + 10000 - 102).count_ns());
  CHECK(acquired[0]->at > Instant::from_ns(Duration::ms(1000).count_ns()));
}

TEST_CASE("node-redlock v5: a round ends at a quorum against, without waiting for a silent node") {
  // client1 cannot reach redis3 and has no command timeout (ioredis has none
  // by default); redis1 and redis2 answer nil (holder's key): 2 of 3 against
  // ends each round at once (index.js:333-339), and the release after the
  // last try too.
  const std::string rest = "[[client]]\nname = \"holder\"\nwork = \"30s\"\n"
                           "[[client]]\nname = \"client1\"\nstart = \"1s\"\nwork = \"1ms\"\n"
                           "[[fault]]\nat = \"0s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"redis3\"]]\n";
  const RunResult r = run_scenario(parse_scenario(
      scenario_text(3, "ttl = \"10s\"\nflavour = \"node-redlock-v5\"\nretry_count = 2", rest), "t.toml"));
  CHECK(events_of(r, Ev::Acquired, "holder").size() == 1);
  const auto failed = events_of(r, Ev::AttemptFailed, "client1");
  REQUIRE(failed.size() == 3);
  // Each round took one round trip (2 ms), not forever.
  CHECK(failed[0]->at == Instant::from_ns(Duration::ms(1002).count_ns()));
  CHECK(events_of(r, Ev::AcquireFailed, "client1").size() == 1);
}

// --- redsync v4.17.0 (mutex.go) ---

namespace {
// The values of client1's SETs, in order.
std::vector<std::string> set_values(const RunResult& r) {
  std::vector<std::string> out;
  for (const TraceEvent* e : events_of(r, Ev::Sent, "client1"))
    if (e->detail.rfind("SET lock ", 0) == 0) out.push_back(e->detail.substr(9, e->detail.find(' ', 9) - 9));
  return out;
}
}  // namespace

TEST_CASE("redsync waits for every reply unless failFast (collect = \"quorum\")") {
  // client1 cannot reach redis3; each round's context times out at 5% of the
  // 10 s expiry. actOnPoolsAsync (mutex.go:296-321) reads every reply unless
  // failFast: the lock is taken when the silent node's call times out, 500 ms.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"1ms\"\n"
                           "[[fault]]\nat = \"0s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"redis3\"]]\n";
  const RunResult all = run_scenario(parse_scenario(scenario_text(3, "ttl = \"10s\"\nflavour = \"redsync\"", rest), "t.toml"));
  auto acquired = events_of(all, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  CHECK(acquired[0]->at == Instant::from_ns(Duration::ms(500).count_ns()));
  // WithFailFast(true): at the second OK, one round trip.
  const RunResult fast = run_scenario(
      parse_scenario(scenario_text(3, "ttl = \"10s\"\nflavour = \"redsync\"\ncollect = \"quorum\"", rest), "t.toml"));
  acquired = events_of(fast, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  CHECK(acquired[0]->at == Instant::from_ns(Duration::ms(2).count_ns()));
}

TEST_CASE("redsync with failFast gives up a round at a quorum taken, and one value serves every try") {
  // holder has the key on every node; client1 cannot reach redis3. With
  // failFast, two nil replies (ErrTaken, mutex.go:311-313) end the round in
  // one round trip; without it each round waits 500 ms for redis3.
  const std::string rest = "[[client]]\nname = \"holder\"\nwork = \"30s\"\n"
                           "[[client]]\nname = \"client1\"\nstart = \"1s\"\nwork = \"1ms\"\n"
                           "[[fault]]\nat = \"0s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"redis3\"]]\n";
  const std::string keys = "ttl = \"10s\"\nflavour = \"redsync\"\nretry_count = 2\n";
  const RunResult fast = run_scenario(parse_scenario(scenario_text(3, keys + "collect = \"quorum\"", rest), "t.toml"));
  auto failed = events_of(fast, Ev::AttemptFailed, "client1");
  REQUIRE(failed.size() == 3);
  CHECK(failed[0]->at == Instant::from_ns(Duration::ms(1002).count_ns()));
  const RunResult all = run_scenario(parse_scenario(scenario_text(3, keys, rest), "t.toml"));
  failed = events_of(all, Ev::AttemptFailed, "client1");
  REQUIRE(failed.size() == 3);
  CHECK(failed[0]->at == Instant::from_ns(Duration::ms(1500).count_ns()));
  // mutex.go:80: the value is drawn once, before the tries.
  const auto values = set_values(all);
  REQUIRE(values.size() >= 6);
  CHECK(std::set<std::string>(values.begin(), values.end()).size() == 1);
}

// --- redlock-rb: the gem 2.0.6, and the 2014 original (redlock.rb) ---

TEST_CASE("redlock-rb 2.0.6 accepts a validity of exactly 0, the 2014 original does not") {
  // One node, 494 ms each way: elapsed 988 ms = ttl 1000 ms - drift (10 + 2 ms).
  // client.rb 2.0.6:316 `validity >= 0`; 2014 redlock.rb:68 `validity_time > 0`.
  auto acquired = [](const std::string& flavour, const std::string& delay) {
    std::string text = scenario_text(1, "ttl = \"1000ms\"\nrequest_timeout = \"2s\"\nretry_count = 0\nflavour = \"" + flavour + "\"",
                                     "[[client]]\nname = \"client1\"\nwork = \"1ms\"\n");
    text.replace(text.find("delay = \"1ms\""), 13, "delay = \"" + delay + "\"");
    return events_of(run_scenario(parse_scenario(text, "t.toml")), Ev::Acquired, "client1").size();
  };
  CHECK(acquired("redlock-rb", "494ms") == 1);
  CHECK(acquired("redlock-rb-2014", "494ms") == 0);
  CHECK(acquired("redlock-rb", "495ms") == 0);
  CHECK(acquired("redlock-rb-2014", "493ms") == 1);
}

TEST_CASE("redlock-rb 2.0.6 measures on CLOCK_MONOTONIC, the 2014 original on Time.now") {
  // client1's wall clock steps forward 20 s while its SETs are out.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"1ms\"\n"
                           "[[fault]]\nat = \"3ms\"\nkind = \"clock-jump\"\ntarget = \"client1\"\nby = \"+20s\"\n";
  for (auto [flavour, held] : {std::pair{"redlock-rb", true}, {"redlock-rb-2014", false}}) {
    INFO(flavour);
    const RunResult r = run_scenario(parse_scenario(
        scenario_text(3, std::string("ttl = \"10s\"\nretry_count = 0\nflavour = \"") + flavour + "\"", rest), "t.toml"));
    CHECK(events_of(r, Ev::Acquired, "client1").size() == (held ? 1u : 0u));
  }
}

TEST_CASE("redlock-rb 2.0.6: 4 tries, a new value each, 200 + rand(50) ms apart, and 2014: 3 tries, one value, rand(200) ms") {
  const std::string rest = "[[client]]\nname = \"holder\"\nwork = \"30s\"\n"
                           "[[client]]\nname = \"client1\"\nstart = \"1s\"\nwork = \"1ms\"\n";
  for (auto [flavour, tries, distinct] : {std::tuple{"redlock-rb", 4, 4}, {"redlock-rb-2014", 3, 1}}) {
    INFO(flavour);
    const RunResult r = run_scenario(
        parse_scenario(scenario_text(3, std::string("ttl = \"60s\"\nflavour = \"") + flavour + "\"", rest), "t.toml"));
    const auto failed = events_of(r, Ev::AttemptFailed, "client1");
    CHECK(static_cast<int>(failed.size()) == tries);
    const auto values = set_values(r);
    CHECK(static_cast<int>(values.size()) == 3 * tries);
    CHECK(static_cast<int>(std::set<std::string>(values.begin(), values.end()).size()) == distinct);
    // Each pause: from the last unlock reply (3 nodes in turn, 6 ms after the
    // failed try) to the next try; whole milliseconds.
    for (std::size_t i = 1; i < failed.size(); ++i) {
      const Duration gap = failed[i]->at - failed[i - 1]->at - Duration::ms(6 + 6);
      CHECK(gap.count_ns() % 1'000'000 == 0);
      if (std::string(flavour) == "redlock-rb") {
        CHECK(gap >= Duration::ms(200));
        CHECK(gap < Duration::ms(250));
      } else {
        CHECK(gap < Duration::ms(200));
      }
    }
    // The 2014 code sleeps after its last try too (redlock.rb:80), before lock returns false.
    const auto gave_up = events_of(r, Ev::AcquireFailed, "client1");
    REQUIRE(gave_up.size() == 1);
    if (std::string(flavour) == "redlock-rb") CHECK(gave_up[0]->at - failed.back()->at == Duration::ms(6));
  }
}

// --- redlock-py 1.0.8 (redlock/__init__.py) ---

TEST_CASE("redlock-py 1.0.7+: a RedisError on one node fails a try that won a quorum, without unlocking") {
  // redis3 is down: its SET fails (ConnectionError, a RedisError); redis1
  // and redis2 say OK. __init__.py:110-113 raises MultipleRedlockException:
  // no lock, no unlock, no retry. With redis_errors = "ignore" (1.0.6) the
  // error is a no, and two of three hold the lock.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"1ms\"\n"
                           "[[fault]]\nat = \"0s\"\nkind = \"crash\"\ntarget = \"redis3\"\n";
  const RunResult raised =
      run_scenario(parse_scenario(scenario_text(3, "ttl = \"10s\"\nflavour = \"redlock-py\"", rest), "t.toml"));
  CHECK(events_of(raised, Ev::Acquired, "client1").empty());
  CHECK(events_of(raised, Ev::AttemptFailed, "client1").size() == 1);
  CHECK(events_of(raised, Ev::AcquireFailed, "client1").size() == 1);
  for (const TraceEvent* e : events_of(raised, Ev::Sent, "client1")) CHECK(e->detail.find("EVAL") == std::string::npos);
  const RunResult ignored = run_scenario(parse_scenario(
      scenario_text(3, "ttl = \"10s\"\nflavour = \"redlock-py\"\nredis_errors = \"ignore\"", rest), "t.toml"));
  CHECK(events_of(ignored, Ev::Acquired, "client1").size() == 1);
}

TEST_CASE("redis_errors is refused outside redlock-py") {
  CHECK_THROWS_WITH_AS(parse_scenario(scenario_text(3, "ttl = \"10s\"\nflavour = \"redsync\"\nredis_errors = \"raise\"",
                                                    "[[client]]\nname = \"c\"\n"),
                                      "t.toml"),
                       doctest::Contains("'redis_errors'"), ScenarioError);
}

TEST_CASE("redlock-py: one value for all three tries, 200 ms apart, and 200 ms after the last") {
  const std::string rest = "[[client]]\nname = \"holder\"\nwork = \"30s\"\n"
                           "[[client]]\nname = \"client1\"\nstart = \"1s\"\nwork = \"1ms\"\n";
  const RunResult r =
      run_scenario(parse_scenario(scenario_text(3, "ttl = \"60s\"\nflavour = \"redlock-py\"", rest), "t.toml"));
  const auto values = set_values(r);
  REQUIRE(values.size() == 9);
  CHECK(std::set<std::string>(values.begin(), values.end()).size() == 1);
  const auto failed = events_of(r, Ev::AttemptFailed, "client1");
  const auto gave_up = events_of(r, Ev::AcquireFailed, "client1");
  REQUIRE(failed.size() == 3);
  REQUIRE(gave_up.size() == 1);
  CHECK(gave_up[0]->at - failed.back()->at == Duration::ms(6 + 200));
}

}  // namespace redlock_flavour_test
