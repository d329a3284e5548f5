// Every catalogue scenario gives its expected verdict, from the model running;
// and the verdict flips when the number that matters crosses its threshold.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>

#include "harness/run.hpp"
#include "tests/support.hpp"

namespace catalogue_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {


std::set<ViolationKind> verdict_of(const Scenario& s) { return run_scenario(s).verdict; }

std::set<ViolationKind> kinds(std::initializer_list<ViolationKind> k) { return k; }

using enum ViolationKind;


ClientConfig& client(Scenario& s, const std::string& name) {
  for (ClientConfig& c : s.clients)
    if (c.name == name) return c;
  FAIL("no such client");
  throw;
}

}  // namespace

TEST_CASE("every scenario in the catalogue gives the verdict its expect table declares") {
  int checked = 0;
  for (const auto& entry : fs::recursive_directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    const Scenario s = load_scenario(entry.path().string());
    const RunResult r = run_scenario(s);
    INFO(entry.path().string());
    CHECK(s.expect.present);
    CHECK(r.as_expected());
    ++checked;
  }
  CHECK(checked >= 11);
}

TEST_CASE("K1: a GC pause longer than the TTL breaks the lock, a shorter one does not") {
  Scenario s = catalogue("scenarios/kleppmann/gc-pause.toml");
  CHECK(verdict_of(s) == kinds({Overlap, StaleWrite, LostUpdate}));
  first_fault(s, FaultKind::Pause).duration = Duration::s(28);  // client1 wakes at 29 s, before its key expires
  CHECK(verdict_of(s).empty());
}

TEST_CASE("K1: the verdict follows the TTL too: a 45 s TTL outlasts the 40 s pause") {
  Scenario s = catalogue("scenarios/kleppmann/gc-pause.toml");
  set_lock_option(s, "ttl", "\"45s\"");
  // client2 now waits for client1's release instead of taking the lock at 31 s.
  CHECK(verdict_of(s).empty());
}

TEST_CASE("K2: with fencing tokens the storage rejects the stale write, and the overlap remains") {
  Scenario s = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  const RunResult r = run_scenario(s);
  CHECK(r.verdict == kinds({Overlap}));
  int rejected = 0;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::StorageReject) {
      ++rejected;
      CHECK(e.token == 33);
    }
  CHECK(rejected == 1);
  set_lock_option(s, "fencing", "\"none\"");
  CHECK(verdict_of(s) == kinds({Overlap, StaleWrite, LostUpdate}));
}

TEST_CASE("K3: a pause after the validity check still breaks the lock, unless it is shorter than what was left") {
  Scenario s = catalogue("scenarios/kleppmann/check-then-pause.toml");
  CHECK(verdict_of(s) == kinds({Overlap, StaleWrite, LostUpdate}));
  first_fault(s, FaultKind::Pause).duration = Duration::s(9);
  CHECK(verdict_of(s).empty());
}

TEST_CASE("K8: a write held longer than the TTL lands after the next holder's, a shorter hold is harmless") {
  Scenario fenced = catalogue("scenarios/kleppmann/network-delay.toml");
  CHECK(verdict_of(fenced) == kinds({Overlap}));
  Scenario unfenced = catalogue("scenarios/kleppmann/network-delay-unfenced.toml");
  CHECK(verdict_of(unfenced) == kinds({Overlap, StaleWrite, LostUpdate}));
  first_fault(unfenced, FaultKind::Delay).duration = Duration::s(5);
  CHECK(verdict_of(unfenced).empty());
}

TEST_CASE("R1: a crashed SETNX holder leaves the lock stuck, without the crash nobody waits long") {
  Scenario s = catalogue("scenarios/redis/setnx-no-ttl-crash.toml");
  CHECK(verdict_of(s) == kinds({Stuck}));
  s.faults.clear();
  CHECK(verdict_of(s).empty());
}

TEST_CASE("R1 fixed: the TTL frees a crashed holder's lock within the liveness window, and not within a shorter one") {
  Scenario s = catalogue("scenarios/redis/setnx-no-ttl-crash-fixed.toml");
  CHECK(verdict_of(s).empty());
  s.expect.liveness_window = Duration::s(20);  // client2 waits about 30 s
  CHECK(verdict_of(s) == kinds({Stuck}));
}

TEST_CASE("R2: a plain DEL after a pause deletes the next holder's lock, a short pause does no harm") {
  Scenario s = catalogue("scenarios/redis/del-without-owner-check.toml");
  CHECK(verdict_of(s) == kinds({ForeignRelease, Overlap, StaleWrite, LostUpdate}));
  first_fault(s, FaultKind::Pause).duration = Duration::s(5);
  CHECK(verdict_of(s).empty());
}

TEST_CASE("R2 fixed: compare-and-delete leaves only the overlap the pause itself causes") {
  Scenario s = catalogue("scenarios/redis/del-without-owner-check-fixed.toml");
  CHECK(verdict_of(s) == kinds({Overlap}));
}

TEST_CASE("R3: GET then DEL loses the key in between, releasing well before expiry does not") {
  Scenario s = catalogue("scenarios/redis/get-then-del.toml");
  CHECK(verdict_of(s) == kinds({ForeignRelease, Overlap, StaleWrite, LostUpdate}));
  client(s, "client1").work = DurationRange::fixed(Duration::s(5));
  CHECK(verdict_of(s).empty());
}

TEST_CASE("a scenario's run is the same bytes every time, and another seed changes a random-delay run") {
  Scenario s = catalogue("scenarios/kleppmann/gc-pause.toml");
  CHECK(run_scenario(s).trace_hash == run_scenario(s).trace_hash);
  s.network.delay = DurationRange{Duration::ms(1), Duration::ms(3)};
  RunOptions other;
  other.seed = 2;
  CHECK(run_scenario(s).trace_hash != run_scenario(s, other).trace_hash);
  CHECK(run_scenario(s).verdict == run_scenario(s, other).verdict);
}

}  // namespace catalogue_test
