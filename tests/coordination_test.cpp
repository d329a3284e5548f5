// ZooKeeper and etcd pinned to their references (algorithms.md §5, §6), and
// the catalogue's thresholds for them.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "harness/run.hpp"
#include "harness/sim_client.hpp"
#include "lockalgos/coordination_common.hpp"
#include "lockalgos/zookeeper.hpp"
#include "sim/servers/etcd/server.hpp"
#include "sim/servers/zookeeper/server.hpp"
#include "tests/support.hpp"

namespace coordination_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// A bare client of a coordination server, driven by the test.
struct Probe : Process {
  Probe(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  void on_message(Message&) override {}
};

constexpr Instant at(Duration d) { return Instant::zero() + d; }

// A ZooKeeper server (tick 2 s) and a client that opens a session asking for
// `timeout`, creates an ephemeral node the server receives at `last_heard`,
// then goes silent. Returns the negotiated timeout and when the node expired.
struct Silent {
  Duration negotiated;
  std::optional<Instant> expired;
};
Silent silent_zookeeper_client(Duration timeout, Duration last_heard) {
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
  auto& zk = w.add<ZooKeeperServer>("zk", ClockSpec{}, Duration::s(2), 1);
  auto& client = w.add<Probe>("client");
  Silent out;
  client.spawn([](Probe& self, ProcId zk, Duration timeout, Duration last_heard, Silent& out) -> Task<void> {
    SimClientEnv env(self);
    coord::Request hello = coord_request(coord::Op::Connect);
    hello.ttl = timeout;
    const auto session = co_await env.call_coord(zk, hello, Duration::zero());
    out.negotiated = session->ttl;
    co_await self.sleep(at(last_heard - Duration::ms(1)) - self.mono_now());
    coord::Request create = coord_request(coord::Op::Create, "/lock", session->id);
    create.data = "n-";
    self.send(zk, std::move(create));  // one-way delay 1 ms: heard at `last_heard`
  }(client, zk.id(), timeout, last_heard, out));
  w.run_until(at(Duration::s(120)));
  for (const TraceEvent& e : w.trace().events())
    if (e.kind == Ev::Expired && e.process == zk.id()) out.expired = e.at;
  return out;
}

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

bool is_notify(const TraceEvent& e) { return e.kind == Ev::Sent && e.detail.rfind("NOTIFY ", 0) == 0; }

std::size_t notifications(const RunResult& r) {
  std::size_t n = 0;
  for (const TraceEvent& e : r.world->trace().events()) n += is_notify(e);
  return n;
}

// For each client's DELETE of its node, in order: the watch notifications the
// server sent handling it.
std::vector<std::size_t> notifications_per_release(const RunResult& r) {
  const ProcId zk = *r.world->find("zk");
  std::vector<std::size_t> out;
  std::size_t pending = 0;  // a handler's NOTIFYs are recorded before its command
  for (const TraceEvent& e : r.world->trace().events()) {
    if (e.process != zk) continue;
    if (is_notify(e)) ++pending;
    if (e.kind == Ev::Command) {
      if (e.detail.rfind("DELETE ", 0) == 0) out.push_back(pending);
      pending = 0;
    }
  }
  return out;
}

std::string node_of(const std::string& algorithm) { return algorithm == "zookeeper" ? "zk" : "etcd"; }

// Two clients of one server: client1 holds the lock `hold`; client2 queues
// behind it from 0.5 s. `faults`: [[fault]] tables.
Scenario two_clients(const std::string& algorithm, const std::string& hold, const std::string& faults) {
  return parse_scenario(R"(
title = "two clients"
source = "coordination_test.cpp"
about = "client2 waits for client1's lock while faults strike."
seed = 1
duration = "60s"
[lock]
algorithm = ")" + algorithm + R"("
[network]
delay = "1ms"
[[node]]
name = ")" + node_of(algorithm) + R"("
[[client]]
name = "client1"
job = "hold"
hold = ")" + hold + R"("
[[client]]
name = "client2"
start = "500ms"
job = "hold"
hold = "1s"
)" + faults,
                        "two-clients.toml");
}

// client2 crashes at 2 s while it waits, and restarts at 3 s.
Scenario restarted_waiter(const std::string& algorithm) {
  return two_clients(algorithm, "20s", R"(
[[fault]]
at = "2s"
kind = "crash"
target = "client2"
[[fault]]
at = "3s"
kind = "restart"
target = "client2"
)");
}

// The first message on the link `from` -> `to` in [4.99 s, 5.2 s) is lost.
std::string drop_one(const std::string& from, const std::string& to) {
  return "[[fault]]\nat = \"4990ms\"\nkind = \"drop\"\nfrom = \"" + from + "\"\nto = \"" + to +
         "\"\nduration = \"210ms\"\ncount = 1\n";
}

}  // namespace

TEST_CASE("the ZooKeeper server expires a session at the first tick boundary after its timeout, as ExpiryQueue rounds") {
  // Timeout 10 s, tick 2 s: last heard at 1 s -> deadline 11 s -> expires at 12 s, not 11 s.
  CHECK(silent_zookeeper_client(Duration::s(10), Duration::s(1)).expired == at(Duration::s(12)));
  CHECK(silent_zookeeper_client(Duration::s(10), Duration::ms(1999)).expired == at(Duration::s(12)));
  // A deadline on a boundary gets one tick of grace: roundToNextInterval is (t / tick + 1) * tick.
  CHECK(silent_zookeeper_client(Duration::s(10), Duration::s(2)).expired == at(Duration::s(14)));
}

TEST_CASE("the ZooKeeper server clamps a session timeout to between 2 and 20 ticks") {
  const Silent curator = silent_zookeeper_client(Duration::s(60), Duration::s(1));  // Curator asks for 60 s
  CHECK(curator.negotiated == Duration::s(40));
  CHECK(curator.expired == at(Duration::s(42)));
  CHECK(silent_zookeeper_client(Duration::s(1), Duration::s(1)).negotiated == Duration::s(4));
}

TEST_CASE("in a run, the server expires the paused holder's session at the tick after its last word plus the timeout") {
  for (std::int64_t tick_ms : {2000, 3000}) {
    Scenario s = catalogue("scenarios/zookeeper/session-expiry-pause.toml");
    set_lock_option(s, "tick_time", fmt::format("\"{}ms\"", tick_ms));
    const RunResult r = run_scenario(s);
    const ProcId zk = *r.world->find("zk"), c1 = *r.world->find("client1");
    const TraceEvent* expired = first_of(r, Ev::Expired, zk);
    REQUIRE(expired != nullptr);
    // The server's last word from client1 (its clocks are in sync with true time here).
    const TraceEvent* heard = last_before(r, expired->at, [&](const TraceEvent& e) {
      return e.process == zk && e.kind == Ev::Command && e.peer == c1;
    });
    REQUIRE(heard != nullptr);
    const std::int64_t deadline = (heard->at + s.lock.options_as<ZooKeeperOptions>().session_timeout).ns();
    const std::int64_t tick = Duration::ms(tick_ms).count_ns();
    INFO("tick " << tick_ms << " ms, last heard at " << format_instant(heard->at));
    CHECK(expired->at.ns() == (deadline / tick + 1) * tick);
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
  // readTimeout = T*2/3 in whole milliseconds, as Java computes it (ClientCnxn.java:1430).
  CHECK(lost->at - heard->at == Duration::ms(6666));
  CHECK(lost->at < first_of(r, Ev::Expired, *r.world->find("zk"))->at);  // before the server decides
}

TEST_CASE("Z6: a holder that works on until LOST overlaps the next holder, one that stops at SUSPENDED does not") {
  Scenario s = catalogue("scenarios/zookeeper/partition-suspended-vs-lost.toml");
  CHECK(run_scenario(s).verdict == std::set{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate});
  set_lock_option(s, "on_suspended", "\"stop\"");
  const RunResult stop = run_scenario(s);
  CHECK(stop.verdict.empty());
  CHECK(events_of(stop, Ev::Wrote, "client1").empty());  // it abandoned its write
}

TEST_CASE("Z6: a partition that heals before the client has heard nothing for 2/3 of the timeout changes nothing") {
  Scenario s = catalogue("scenarios/zookeeper/partition-suspended-stop.toml");
  // Heals at 3 s: the idle ping at 3.3 s is answered. (Healing at 6 s is too
  // late: that ping is lost, the next one's answer comes just after 6.67 s.)
  s.faults[0].duration = Duration::s(2);
  const RunResult r = run_scenario(s);
  CHECK(r.verdict.empty());
  CHECK(events_of(r, Ev::Lost, "client1").empty());
  CHECK(events_of(r, Ev::Wrote, "client1").size() == 1);
}

TEST_CASE("Z5: a pause shorter than the session timeout keeps the lock, a longer one loses it") {
  Scenario s = catalogue("scenarios/zookeeper/session-expiry-pause.toml");
  CHECK(run_scenario(s).verdict == std::set{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate});
  s.faults[0].duration = Duration::s(8);  // the session survives: the server hears a ping within 10 s
  const RunResult short_pause = run_scenario(s);
  CHECK(short_pause.verdict.empty());
  CHECK(first_of(short_pause, Ev::Expired, *short_pause.world->find("zk")) == nullptr);
}

TEST_CASE("watching the predecessor, one release wakes exactly one waiter, watching the parent, it wakes them all") {
  const RunResult one = run_scenario(catalogue("scenarios/zookeeper/herd-effect.toml"));
  const RunResult herd = run_scenario(catalogue("scenarios/zookeeper/herd-effect-parent.toml"));
  CHECK(one.verdict.empty());
  CHECK(herd.verdict.empty());
  CHECK(one.stats.acquisitions == 20);
  CHECK(herd.stats.acquisitions == 20);
  std::vector<std::size_t> predecessor(19, 1), parent;
  predecessor.push_back(0);  // the last release has nobody behind it
  // Every waiter still queued, and the releaser itself: the getChildren that
  // made it the holder set a child watch too.
  for (std::size_t waiting = 19; waiting + 1 > 0; --waiting) parent.push_back(waiting + 1);
  CHECK(notifications_per_release(one) == predecessor);
  CHECK(notifications_per_release(herd) == parent);
  // The scenarios' abouts quote these totals.
  CHECK(notifications(one) == 19);
  CHECK(notifications(herd) == 210);
}

TEST_CASE("a ZooKeeper waiter whose session expires in a partition starts over with a new session when it heals") {
  Scenario s = restarted_waiter("zookeeper");
  s.clients[0].hold = DurationRange::fixed(Duration::s(25));
  s.faults.clear();
  FaultSpec cut;
  cut.kind = FaultKind::Partition;
  cut.at = Duration::s(2);
  cut.duration = Duration::s(18);
  cut.groups = {{"client2"}, {"zk"}};
  s.faults.push_back(cut);
  const RunResult r = run_scenario(s);
  CHECK(r.verdict.empty());
  CHECK(first_of(r, Ev::Expired, *r.world->find("zk"))->owner == *r.world->find("client2"));
  const auto acquired = events_of(r, Ev::Acquired, "client2");
  REQUIRE(acquired.size() == 1);
  CHECK(acquired[0]->at > at(Duration::s(25)));  // in its turn, after client1
}

TEST_CASE("a restarted client opens a new session: ZooKeeper and etcd queue it again behind the holder") {
  for (const char* algorithm : {"zookeeper", "etcd"}) {
    INFO(algorithm);
    const RunResult r = run_scenario(restarted_waiter(algorithm));
    REQUIRE(events_of(r, Ev::Restarted, "client2").size() == 1);
    CHECK(r.verdict.empty());
    CHECK(r.stats.acquisitions == 2);
    const auto acquired = events_of(r, Ev::Acquired, "client2");
    REQUIRE(acquired.size() == 1);
    CHECK(acquired[0]->at > at(Duration::s(20)));
    // Only the crashed incarnation's entry expired; the new session kept its own alive.
    CHECK(events_of(r, Ev::Expired).size() == 1);
  }
}

TEST_CASE("a release whose delete is lost is sent again, so the waiter behind it is not stranded") {
  for (const std::string algorithm : {"zookeeper", "etcd"}) {
    INFO(algorithm);
    // client1 releases at about 5 s; its DELETE is the message lost.
    const RunResult r = run_scenario(two_clients(algorithm, "5s", drop_one("client1", node_of(algorithm))));
    REQUIRE(events_of(r, Ev::Dropped).size() == 1);
    CHECK(events_of(r, Ev::Dropped)[0]->detail.find("DELETE") != std::string::npos);
    CHECK(r.verdict.empty());
    const auto acquired = events_of(r, Ev::Acquired, "client2");
    REQUIRE(acquired.size() == 1);
    CHECK(acquired[0]->at < at(Duration::s(15)));  // the request timeout, a retry, and it is through
  }
}

TEST_CASE("a lost watch notification does not strand the waiter: the next message from the server shows the gap") {
  for (const std::string algorithm : {"zookeeper", "etcd"}) {
    INFO(algorithm);
    // The deletion's NOTIFY to client2 is the message lost.
    const RunResult r = run_scenario(two_clients(algorithm, "5s", drop_one(node_of(algorithm), "client2")));
    REQUIRE(events_of(r, Ev::Dropped).size() == 1);
    CHECK(events_of(r, Ev::Dropped)[0]->detail.find("NOTIFY") != std::string::npos);
    CHECK(r.verdict.empty());
    const auto acquired = events_of(r, Ev::Acquired, "client2");
    REQUIRE(acquired.size() == 1);
    CHECK(acquired[0]->at < at(Duration::s(10)));  // by its next ping (ZooKeeper) or keepalive (etcd)
  }
}

TEST_CASE("the etcd server refuses to renew a lease that has expired but not yet been revoked") {
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
  auto& etcd = w.add<EtcdServer>("etcd", ClockSpec{}, 1, Duration::s(1));
  auto& client = w.add<Probe>("client");
  std::optional<coord::Reply> renewed;
  client.spawn([](Probe& self, ProcId etcd, std::optional<coord::Reply>& renewed) -> Task<void> {
    SimClientEnv env(self);
    coord::Request grant = coord_request(coord::Op::LeaseGrant);
    grant.ttl = Duration::s(2);
    const auto lease = co_await env.call_coord(etcd, grant, Duration::zero());
    co_await self.sleep(Duration::ms(2200));  // expired at 2.001 s; the revoke loop's next tick is 2.5 s
    renewed = co_await env.call_coord(etcd, coord_request(coord::Op::KeepAlive, "", lease->id), Duration::zero());
  }(client, etcd.id(), renewed));
  w.run_until(at(Duration::s(5)));
  REQUIRE(renewed.has_value());
  CHECK_FALSE(renewed->ok);
  CHECK(renewed->error == "LEASE_NOT_FOUND");
}

TEST_CASE("etcd 3.4 returns the lock to a waiter whose lease expired while it waited, 3.5 re-checks and refuses") {
  Scenario s = catalogue("scenarios/etcd/lease-expires-while-waiting-3.4.toml");
  const RunResult v34 = run_scenario(s);
  CHECK(v34.verdict == std::set{ViolationKind::Overlap});
  set_lock_option(s, "version", "\"3.5\"");
  const RunResult v35 = run_scenario(s);
  CHECK(v35.verdict.empty());
  CHECK(first_of(v35, Ev::AcquireFailed, *v35.world->find("client2")) != nullptr);
}

TEST_CASE("Z8: a waiter paused for less than its lease TTL keeps its place, on 3.4 as on 3.5") {
  Scenario s = catalogue("scenarios/etcd/lease-expires-while-waiting-3.4.toml");
  s.faults[0].duration = Duration::s(8);
  const RunResult r = run_scenario(s);
  CHECK(r.verdict.empty());
  CHECK(events_of(r, Ev::Expired).empty());
  CHECK(r.stats.acquisitions == 3);
}

TEST_CASE("an etcd holder whose only key is its own holds at once, from the Txn's answer") {
  const RunResult r = run_scenario(catalogue("scenarios/etcd/pause-after-lock.toml"));
  const auto acquired = events_of(r, Ev::Acquired, "client1");
  REQUIRE(!acquired.empty());
  for (const TraceEvent& e : r.world->trace().events())
    if (e.at < acquired[0]->at && e.kind == Ev::Command) CHECK(e.detail.rfind("RANGE", 0) != 0);
}

TEST_CASE("Z9: a holder paused past its lease TTL loses the lock, a shorter pause keeps it") {
  Scenario s = catalogue("scenarios/etcd/pause-after-lock.toml");
  CHECK(run_scenario(s).verdict == std::set{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate});
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

// ZooKeeper 3.9.3 names a sequential node by its parent's cversion, which a
// child's creation advances and a delete does not (PrepRequestProcessor.java
// :668-670, 684; DataTree.java:550-559): create, delete, create gives
// suffixes 0 and 1, not 0 and 2.
TEST_CASE("a ZooKeeper sequence suffix counts the parent's creations, not its deletes") {
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
  auto& zk = w.add<ZooKeeperServer>("zk", ClockSpec{}, Duration::s(2), 1);
  auto& client = w.add<Probe>("client");
  std::vector<std::string> paths;
  client.spawn([](Probe& self, ProcId zk, std::vector<std::string>& paths) -> Task<void> {
    SimClientEnv env(self);
    coord::Request hello = coord_request(coord::Op::Connect);
    hello.ttl = Duration::s(10);
    const auto session = co_await env.call_coord(zk, hello, Duration::zero());
    for (int i = 0; i < 3; ++i) {
      coord::Request create = coord_request(coord::Op::Create, "/lock", session->id);
      create.data = "n-";
      const auto made = co_await env.call_coord(zk, create, Duration::zero());
      paths.push_back(made->path);
      coord::Request del = coord_request(coord::Op::Delete, made->path, session->id);
      const auto gone = co_await env.call_coord(zk, del, Duration::zero());
      REQUIRE(gone->ok);
    }
  }(client, zk.id(), paths));
  w.run_until(at(Duration::s(5)));
  REQUIRE(paths.size() == 3);
  CHECK(paths[0] == "/lock/n-0000000000");
  CHECK(paths[1] == "/lock/n-0000000001");
  CHECK(paths[2] == "/lock/n-0000000002");
}

}  // namespace coordination_test
