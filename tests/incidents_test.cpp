// The incident catalogue (scenarios/incidents/): each file names the report
// it reproduces and the version it concerns, and each unsafe one has a twin
// whose one change (the fix, the recommended check, fencing) changes the
// verdict; the behaviours added for them answer as their libraries do.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include "harness/run.hpp"
#include "tests/support.hpp"

namespace incidents_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {

const fs::path kIncidents = fs::path(LOCKSIM_SOURCE_DIR) / "scenarios" / "incidents";

// The incidents, by file stem; a twin's stem is its incident's plus "-...".
std::map<std::string, Scenario> incidents() {
  std::map<std::string, Scenario> out;
  for (const auto& e : fs::directory_iterator(kIncidents))
    if (e.path().extension() == ".toml") out.emplace(e.path().stem().string(), load_scenario(e.path().string()));
  return out;
}

}  // namespace

TEST_CASE("the incident catalogue: twelve reports or more, from six libraries or more, each naming its report") {
  const auto all = incidents();
  std::set<std::string> reports, libraries;
  for (const auto& [stem, s] : all) {
    INFO(stem);
    CHECK(s.source.find("https://") != std::string::npos);  // the report's address
    CHECK(s.expect.present);
    // An incident is a file no other file's stem is a prefix of (up to a '-').
    const bool twin = std::any_of(all.begin(), all.end(), [&](const auto& other) {
      return other.first != stem && stem.rfind(other.first + "-", 0) == 0;
    });
    if (twin) continue;
    reports.insert(stem);
    libraries.insert(stem.substr(0, stem.find_first_of("0123456789") - 1));
  }
  CHECK(reports.size() >= 12);
  CHECK(libraries.size() >= 6);
}

TEST_CASE("each unsafe incident has a twin, and the twin's verdict is not the incident's") {
  const auto all = incidents();
  for (const auto& [stem, s] : all) {
    if (s.expect.violations.empty()) continue;
    bool is_twin = false, has_twin = false;
    for (const auto& [other, t] : all) {
      if (other == stem) continue;
      if (stem.rfind(other + "-", 0) == 0) is_twin = true;
      if (other.rfind(stem + "-", 0) == 0) {
        has_twin = true;
        INFO(stem << " and its twin " << other);
        CHECK(run_scenario(t).verdict != run_scenario(s).verdict);
      }
    }
    INFO(stem);
    CHECK((is_twin || has_twin));
  }
}

TEST_CASE("redsync Valid(): a holder whose keys another client has taken is told false, and writes nothing") {
  // client1 works past its 2 s expiry before its check; client2 takes the
  // lock on every node at about 2 s. Valid() at 3 s finds client2's value, not client1's.
  const std::string text = R"(title = "t"
source = "s"
about = "a"
duration = "20s"
[lock]
algorithm = "redlock"
flavour = "redsync"
ttl = "2s"
retry_count = "forever"
check = "valid"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
[[node]]
name = "redis3"
[[client]]
name = "client1"
work = "3s"
check_before_write = true
[[client]]
name = "client2"
start = "100ms"
work = "6s"
)";
  const RunResult r = run_scenario(parse_scenario(text, "t.toml"));
  const auto lost = events_of(r, Ev::Lost, "client1");
  REQUIRE(lost.size() == 1);
  CHECK(lost[0]->key == "Valid()");
  CHECK(lost[0]->value == 0);  // none of the three nodes holds client1's value
  CHECK(events_of(r, Ev::Wrote, "client1").empty());
  // With check = "until" the same holder finds its validity spent on its own clock.
  std::string until = text;
  until.replace(until.find("check = \"valid\""), 15, "check = \"until\"");
  const RunResult u = run_scenario(parse_scenario(until, "t.toml"));
  CHECK(events_of(u, Ev::Lost, "client1").size() == 1);
  CHECK(events_of(u, Ev::Wrote, "client1").empty());
}

TEST_CASE("check = \"valid\" is redsync's: another flavour's file is refused, naming the key") {
  const std::string text = R"(title = "t"
source = "s"
about = "a"
duration = "5s"
[lock]
algorithm = "redlock"
flavour = "redlock-rb"
ttl = "2s"
check = "valid"
[[node]]
name = "redis1"
[[client]]
name = "client1"
)";
  try {
    (void)parse_scenario(text, "t.toml");
    FAIL("accepted");
  } catch (const ScenarioError& e) {
    CHECK(std::string(e.what()).find("'check'") != std::string::npos);
  }
}

TEST_CASE("Redisson 2.11's watchdog stops at its first failed renewal, 4.7.0's tries again at the next period") {
  // A partition over the renewal due at 30 s (watchdog 90 s, a renewal every
  // 30 s) and over all five of its attempts (the command executor resends it
  // while no response comes: 30.0 s ... 47.2 s, failed at about 50 s): 2.11
  // gives up (redisson-2.11.5 RedissonLock.java:215-222), the key set at 0
  // expires at 90 s and client2 takes the lock while client1 works; 4.7.0
  // schedules the next renewal a third on (80.2 s), before the key expires,
  // and keeps it. (With the default 30 s watchdog the retries outlast the
  // key either way: a failed renewal completes ~16 s late, the next comes
  // 10 s after that, and the key set 30 s earlier has gone in both versions.)
  const auto text = [](const std::string& version) {
    return R"(title = "t"
source = "s"
about = "a"
duration = "180s"
[lock]
algorithm = "watchdog"
watchdog_timeout = "90s"
)" + version + R"(
[[node]]
name = "redis1"
[[client]]
name = "client1"
work = "120s"
[[client]]
name = "client2"
start = "5s"
[[fault]]
at = "29s"
kind = "partition"
groups = [["client1"], ["redis1"]]
duration = "20s"
)";
  };
  using enum ViolationKind;
  CHECK(run_scenario(parse_scenario(text("version = \"2.11\""), "t.toml")).verdict ==
        std::set<ViolationKind>{Overlap, StaleWrite, LostUpdate});
  CHECK(run_scenario(parse_scenario(text(""), "t.toml")).verdict.empty());
}

TEST_CASE("ZOOKEEPER-4508's fix does not save a Curator holder cut off from its one server: 3.9.3 expires the session only when its connect times out") {
  // The 3.9.3 client checks its own expiry (4/3 T after it last heard) when
  // its send loop runs; reconnecting, the loop waits out the connect timeout
  // (T / servers: 10 s here), so the check comes at about 18.6 s — after
  // Curator's LOST at SUSPENDED + T (about 16.7 s), after client1's write at 15 s.
  const fs::path path = kIncidents / "zookeeper-4508-no-client-expiry.toml";
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const RunResult old_client = run_scenario(parse_scenario(text, path.string()));
  const auto at = text.find("client = \"3.9.2\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 16, "client = \"3.9.3\"");
  const RunResult fixed_client = run_scenario(parse_scenario(text, path.string()));
  CHECK(fixed_client.verdict == old_client.verdict);
  // Nothing told client1 before its write: it wrote, and heard no LOST first.
  CHECK(events_of(fixed_client, Ev::Wrote, "client1").size() == 1);
  CHECK(events_of(fixed_client, Ev::Lost, "client1").empty());
}

}  // namespace incidents_test
