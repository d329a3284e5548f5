// ZooKeeper and etcd pinned to their references (algorithms.md §5, §6), and
// the catalogue's thresholds for them.
#include <doctest/doctest.h>

#include <filesystem>

#include "harness/run.hpp"
#include "tests/support.hpp"

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {


const TraceEvent* last_before(const RunResult& r, Instant t, auto&& match) {
  const TraceEvent* found = nullptr;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.at < t && match(e)) found = &e;
  return found;
}

const TraceEvent* first_of(const RunResult& r, Ev kind, ProcId process) {
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == kind && e.process == process) return &e;
  return nullptr;
}

std::size_t notifications(const RunResult& r) {
  std::size_t n = 0;
  for (const TraceEvent& e : r.world->trace().events()) n += e.kind == Ev::Sent && e.detail.rfind("NOTIFY ", 0) == 0;
  return n;
}

}  // namespace

TEST_CASE("the ZooKeeper server expires a session at the first tick boundary at or after its timeout") {
  for (std::int64_t tick_ms : {2000, 3000}) {
    Scenario s = catalogue("scenarios/zookeeper/session-expiry-pause.toml");
    s.lock.tick_time = Duration::ms(tick_ms);
    const RunResult r = run_scenario(s);
    const ProcId zk = *r.world->find("zk"), c1 = *r.world->find("client1");
    const TraceEvent* expired = first_of(r, Ev::Expired, zk);
    REQUIRE(expired != nullptr);
    // The server's last word from client1 (its clocks are in sync with true time here).
    const TraceEvent* heard = last_before(r, expired->at, [&](const TraceEvent& e) {
      return e.process == zk && e.kind == Ev::Command && e.peer == c1;
    });
    REQUIRE(heard != nullptr);
    const std::int64_t deadline = (heard->at + s.lock.session_timeout).ns();
    const std::int64_t tick = Duration::ms(tick_ms).count_ns();
    INFO("tick " << tick_ms << " ms, last heard at " << format_instant(heard->at));
    CHECK(expired->at.ns() == (deadline + tick - 1) / tick * tick);
    CHECK(expired->at.ns() > deadline);  // 10.0x s is not a tick boundary: rounded up
  }
}

TEST_CASE("a ZooKeeper client goes SUSPENDED after 2/3 of its session timeout without hearing from the ensemble") {
  const RunResult r = run_scenario(catalogue("scenarios/zookeeper/partition-suspended-stop.toml"));
  const ProcId c1 = *r.world->find("client1");
  const TraceEvent* lost = first_of(r, Ev::Lost, c1);
  REQUIRE(lost != nullptr);
  const TraceEvent* heard = last_before(r, lost->at, [&](const TraceEvent& e) {
    return e.process == c1 && e.kind == Ev::Delivered && e.peer == *r.world->find("zk");
  });
  REQUIRE(heard != nullptr);
  CHECK(lost->at - heard->at == Duration::s(10) * 2 / 3);
}

TEST_CASE("Z6: a holder that works on until LOST overlaps the next holder, one that stops at SUSPENDED does not") {
  Scenario s = catalogue("scenarios/zookeeper/partition-suspended-vs-lost.toml");
  CHECK(run_scenario(s).verdict.count(ViolationKind::StaleWrite) == 1);
  s.lock.on_suspended = "stop";
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("Z5: a pause shorter than the session timeout keeps the lock, a longer one loses it") {
  Scenario s = catalogue("scenarios/zookeeper/session-expiry-pause.toml");
  CHECK(run_scenario(s).verdict.count(ViolationKind::Overlap) == 1);
  s.faults[0].duration = Duration::s(8);  // the session survives: the server heard from it within 10 s
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("watching the predecessor wakes one waiter per release, watching the parent wakes them all") {
  const RunResult one = run_scenario(catalogue("scenarios/zookeeper/herd-effect.toml"));
  const RunResult herd = run_scenario(catalogue("scenarios/zookeeper/herd-effect-parent.toml"));
  CHECK(one.stats.acquisitions == 20);
  CHECK(herd.stats.acquisitions == 20);
  CHECK(notifications(one) == 19);  // one per release that has a waiter behind it
  CHECK(notifications(herd) > 10 * notifications(one));
}

TEST_CASE("etcd 3.4 returns the lock to a waiter whose lease expired while it waited, 3.5 re-checks and refuses") {
  Scenario s = catalogue("scenarios/etcd/lease-expires-while-waiting-3.4.toml");
  const RunResult v34 = run_scenario(s);
  CHECK(v34.verdict == std::set{ViolationKind::Overlap});
  s.lock.version = "3.5";
  const RunResult v35 = run_scenario(s);
  CHECK(v35.verdict.empty());
  CHECK(first_of(v35, Ev::AcquireFailed, *v35.world->find("client2")) != nullptr);
}

TEST_CASE("Z9: a holder paused past its lease TTL loses the lock, a shorter pause keeps it") {
  Scenario s = catalogue("scenarios/etcd/pause-after-lock.toml");
  CHECK(run_scenario(s).verdict.count(ViolationKind::Overlap) == 1);
  s.faults[0].duration = Duration::s(5);  // keepalives resume before the lease runs out
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("fencing tokens from a consensus service are unique and increasing: czxid and create revision") {
  for (const char* path : {"scenarios/zookeeper/session-expiry-pause-fenced.toml", "scenarios/etcd/pause-after-lock-fenced.toml"}) {
    const RunResult r = run_scenario(catalogue(path));
    std::int64_t last = -1;
    for (const TraceEvent& e : r.world->trace().events())
      if (e.kind == Ev::Acquired) {
        CHECK(e.token > last);
        last = e.token;
      }
    CHECK(r.verdict == std::set{ViolationKind::Overlap});
  }
}
