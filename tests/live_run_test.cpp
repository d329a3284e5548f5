// LIVE runs end to end (live/live_run.hpp, `locksim live`): catalogue
// scenarios against real redis-server processes on loopback, judged as the
// simulator's runs are; and that nothing a live run starts outlives it.
// Bounded: each run is a few seconds of real time at a high time scale.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "harness/run.hpp"
#include "live/live_run.hpp"
#include "live/servers.hpp"
#include "tests/live_support.hpp"

namespace live_run_test {

using namespace locksim;
using namespace locksim::live;
using locksim::live::testing::Child;
using locksim::live::testing::eventually;

namespace {

Scenario catalogue(const std::string& name) { return load_scenario(std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/" + name); }

RunResult live_run(const std::string& name, std::int64_t k) {
  LiveOptions o;
  o.time_scale = k;
  return run_live(catalogue(name), o);
}

// The five-node Redlock (two nodes crashed along the way), 10 s at scale 10,
// with `changes` to its [lock] options.
RunResult live_redlock(const std::vector<LockOptionChange>& changes) {
  Scenario s = catalogue("redis/redlock-fault-tolerance.toml");
  if (!changes.empty()) set_lock_options(s, changes);
  s.duration = Duration::s(10);
  LiveOptions o;
  o.time_scale = 10;
  return run_live(s, o);
}

std::set<ViolationKind> kinds(std::initializer_list<ViolationKind> k) { return {k}; }

// The processes `pid` has forked, from /proc.
std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

}  // namespace

TEST_CASE("a live GC pause against a real redis-server overlaps and loses an update as the simulator says") {
  const RunResult r = live_run("kleppmann/gc-pause.toml", 30);
  CHECK(r.verdict == kinds({ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate}));
  // The trace is in scenario time, measured: client2's grant comes after its start at 31 s, not at a model's instant.
  bool granted_after_start = false;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Acquired && r.world->trace().name(e.process) == "client2")
      granted_after_start = e.at > Instant::zero() + Duration::s(31) && e.at < Instant::zero() + Duration::s(33);
  CHECK(granted_after_start);
}

TEST_CASE("a live Redlock whose node's wall clock steps forward (redis-server under the clock shim) breaks as simulated") {
  // K4 against five real redis-servers: redis3's clock jumps 15 s, its key expires early, two majorities.
  const RunResult r = live_run("kleppmann/redlock-clock-jump.toml", 10);
  CHECK(r.verdict == kinds({ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate}));
}

TEST_CASE("a live client paused again while paused stays paused until the later pause ends") {
  Scenario s = catalogue("kleppmann/gc-pause.toml");  // client1 paused from 1 s to 41 s
  FaultSpec longer = s.faults.at(0);
  longer.at = Duration::s(10);
  longer.duration = Duration::s(45);  // to 55 s
  s.faults.push_back(longer);
  LiveOptions o;
  o.time_scale = 30;
  const RunResult r = run_live(s, o);
  std::vector<Instant> resumed;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Resumed && r.world->trace().name(e.process) == "client1") resumed.push_back(e.at);
  REQUIRE(resumed.size() == 1);
  CHECK(resumed[0] > Instant::zero() + Duration::s(54));
}

TEST_CASE("a live Redlock whose node's clock runs 5% fast (redis-server under the clock shim) breaks as simulated, 0.5% does not") {
  // R10 against real redis-servers: the node's drift is its oscillator's, shared by both clocks, and
  // Redis expires keys by its wall clock, so the key dies before the holder's validity ends.
  CHECK(live_run("redis/redlock-drift.toml", 10).verdict ==
        kinds({ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate}));
  CHECK(live_run("redis/redlock-drift-fixed.toml", 10).verdict.empty());
}

TEST_CASE("a live fenced GC pause only overlaps: the storage refuses the late write") {
  const RunResult r = live_run("kleppmann/gc-pause-fenced.toml", 30);
  CHECK(r.verdict == kinds({ViolationKind::Overlap}));
}

TEST_CASE("a live DEL without an owner check deletes another client's key and the run says whose") {
  // Scale 10, not 20: client3 starts 100 ms (simulated) after client1 wakes,
  // 10 ms of real time here, 5 ms at 20. At 20 this test failed once in a
  // `ctest -j2` of the whole suite (2026-11-26; not reproduced since, in six
  // runs beside three busy loops): the thinner window is the likely cause.
  const RunResult r = live_run("redis/del-without-owner-check.toml", 10);
  CHECK(r.verdict.count(ViolationKind::ForeignRelease) == 1);
  bool foreign = false;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::KeyDeleted && e.owner != kNoProc && e.owner != e.peer)
      foreign = foreign || (r.world->trace().name(e.peer) == "client1" && r.world->trace().name(e.owner) == "client2");
  CHECK(foreign);
}

TEST_CASE("a live Redlock with two of five nodes crashed never releases another's key") {
  const RunResult r = live_redlock({});
  CHECK(r.verdict.empty());
  CHECK(r.stats.acquisitions > 10);
}

TEST_CASE("a live Redlock that unlocks without waiting (CLIENT REPLY SKIP) frees its keys on every node") {
  // Its unlocks are written where they leave (ClientEnv::send_staged): were
  // they lost, each next lock would wait out the 10 s TTL, one or two in all.
  const RunResult r = live_redlock({{"unlock", "\"no-wait\""}});
  CHECK(r.verdict.empty());
  CHECK(r.stats.acquisitions > 10);
}

TEST_CASE("Chubby scenarios are not supported live and say which algorithm, ZooKeeper's and etcd's are") {
  CHECK(!live_unsupported(catalogue("zookeeper/session-expiry-pause.toml")));
  CHECK(!live_unsupported(catalogue("etcd/pause-after-lock.toml")));
  const auto chubby = live_unsupported(catalogue("chubby/lock-delay.toml"));
  REQUIRE(chubby);
  CHECK(chubby->find("not yet supported live") != std::string::npos);
  CHECK(chubby->find("chubby") != std::string::npos);
  CHECK_THROWS_AS(live_run("chubby/lock-delay.toml", 10), ScenarioError);
  CHECK(!live_unsupported(catalogue("kleppmann/gc-pause.toml")));
  CHECK(!live_unsupported(catalogue("etcd/pause-after-lock.toml")));
}

TEST_CASE("the time scale is lowered until the thinnest margin lasts 5 ms of real time") {
  // The failover scenario crashes its master 5 ms in: only scale 1 keeps that 5 ms.
  CHECK(live_scale_for(catalogue("redis/failover-async-replication.toml"), {}, 10) == 1);
  // The GC pause's thinnest is its pause at 1 s: scale 10 is kept.
  CHECK(live_scale_for(catalogue("kleppmann/gc-pause.toml"), {}, 10) == 10);
  // get-then-del's job ends 10 ms inside its 10 s lease: scale 2.
  CHECK(live_scale_for(catalogue("redis/get-then-del.toml"), {}, 10) == 2);
  // A simulated overlap of 20 ms allows scale 4 at most.
  const Violation v{ViolationKind::Overlap, Instant::zero() + Duration::s(1), Instant::zero() + Duration::ms(1020), {}, {}};
  CHECK(live_scale_for(catalogue("kleppmann/gc-pause.toml"), {v}, 10) == 4);
}

TEST_CASE("a thin margin at a high time scale is warned about") {
  const auto warnings = live_warnings(catalogue("redis/failover-async-replication.toml"), 10);
  REQUIRE(!warnings.empty());
  CHECK(warnings.front().find("crash") != std::string::npos);
  CHECK(live_warnings(catalogue("kleppmann/gc-pause.toml"), 10).empty());
}

TEST_CASE("a SIGKILLed locksim live leaves no redis-server behind") {
  // Its own temporary directory: another test's supervisor, starting in
  // parallel, sweeps the shared one of abandoned roots — this one's too.
  std::string tmp_template = (std::filesystem::temp_directory_path() / "locksim-sigkill-XXXXXX").string();
  REQUIRE(::mkdtemp(tmp_template.data()) != nullptr);
  const std::filesystem::path tmp = tmp_template;
  struct Remove {
    std::filesystem::path dir;
    ~Remove() { std::filesystem::remove_all(dir); }
  } remove{tmp};
  Child locksim(LOCKSIM_BINARY, {"live", std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/kleppmann/gc-pause.toml"},
                {"TMPDIR=" + tmp.string()});
  std::vector<pid_t> servers;
  REQUIRE(eventually([&] { return !(servers = children_of(locksim.pid())).empty(); }, Duration::s(20)));
  for (pid_t p : servers) CHECK(process_alive(p));
  // The run's temporary root: a server's working directory is its node's,
  // once the server has read its config (before, it is locksim's).
  std::filesystem::path root;
  REQUIRE(eventually([&] {
    std::error_code ec;
    root = std::filesystem::read_symlink("/proc/" + std::to_string(servers[0]) + "/cwd", ec).parent_path();
    return !ec && std::filesystem::exists(root / "owner");
  }, Duration::s(10)));
  locksim.kill(SIGKILL);
  locksim.wait();
  for (pid_t p : servers) {
    CHECK(eventually([&] { return !process_alive(p); }, Duration::s(10)));
    if (process_alive(p)) ::kill(p, SIGKILL);  // never left behind, even when the test fails
  }
  // Its directory stays, until the next supervisor's sweep.
  CHECK(std::filesystem::exists(root / "owner"));
  CHECK(root.parent_path() == tmp);
  CHECK(live::remove_abandoned_roots(root.parent_path()) >= 1);
  CHECK(!std::filesystem::exists(root));
}

TEST_CASE("a locksim live stopped by SIGINT stops its servers and exits 130") {
  Child locksim(LOCKSIM_BINARY, {"live", std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/kleppmann/gc-pause.toml"});
  std::vector<pid_t> servers;
  REQUIRE(eventually([&] { return !(servers = children_of(locksim.pid())).empty(); }, Duration::s(20)));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // into the run, past the start-up
  locksim.kill(SIGINT);
  const int status = locksim.wait(Duration::s(15));
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 130));
  for (pid_t p : servers) {
    CHECK(!process_alive(p));  // at once: the run unwound and reaped them
    if (process_alive(p)) ::kill(p, SIGKILL);
  }
}

}  // namespace live_run_test
