// Replication, failover and Redisson pinned to their references
// (algorithms.md §1 and §3), and the catalogue's thresholds for them.
#include <doctest/doctest.h>

#include <filesystem>

#include "harness/run.hpp"
#include "harness/sim_client.hpp"
#include "harness/scenario.hpp"
#include "tests/support.hpp"
#include "sim/servers/redis/node.hpp"

namespace replication_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {

constexpr Instant at_ms(std::int64_t ms) { return Instant::zero() + Duration::ms(ms); }



struct Pair {
  World w{1};
  RedisNode& master;
  RedisNode& replica;
  explicit Pair(ClockSpec replica_clock = {}, bool pxat = true)
      : master(w.add<RedisNode>("m", ClockSpec{}, RedisConfig{})),
        replica(w.add<RedisNode>("r", replica_clock, RedisConfig{})) {
    master.add_replica(replica.id(), DurationRange::fixed(Duration::ms(10)), pxat);
    replica.replicate_from(master.id());
  }
  void set(const std::string& key, Duration ttl) {
    master.execute({.op = redis::Op::Set, .key = key, .value = "v", .nx = true, .px = ttl}, kNoProc);
  }
};

}  // namespace

TEST_CASE("WAIT with timeout 0 blocks until enough replicas acknowledge, however long that is") {
  // redis 7.0.15 replication.c waitCommand: a timeout of 0 blocks for ever.
  // One replica: WAIT 1 0 is answered once it acknowledges the write (its
  // GETACK and ACK ride 10 ms of lag); WAIT 2 0 can never be, and stays blocked.
  struct Probe final : Process {
    explicit Probe(World& w) : Process(w, "client", ProcessRole::Client, {}) {}
    void on_message(Message&) override {}
  };
  Pair p;
  Probe& client = p.w.add<Probe>();
  std::optional<redis::Reply> one, two;
  client.spawn([](Probe& self, ProcId master, std::optional<redis::Reply>& one, std::optional<redis::Reply>& two) -> Task<void> {
    SimClientEnv env(self);
    // Named first: g++ 12 miscompiles an aggregate temporary in a co_await.
    const redis::Request set{.op = redis::Op::Set, .key = "lock", .value = "v", .px = Duration::s(60)};
    const redis::Request wait_one{.op = redis::Op::Wait, .px = Duration::zero(), .offset = 1};
    const redis::Request wait_two{.op = redis::Op::Wait, .px = Duration::zero(), .offset = 2};
    co_await env.call_redis(master, set, Duration::zero());
    one = co_await env.call_redis(master, wait_one, Duration::zero());
    two = co_await env.call_redis(master, wait_two, Duration::zero());
  }(client, p.master.id(), one, two));
  p.w.run_until(at_ms(30'000));
  REQUIRE(one.has_value());
  CHECK(one->integer == 1);
  CHECK_FALSE(two.has_value());
}

TEST_CASE("a write reaches the replica only after the replication lag, and is lost if the master dies first") {
  Pair p;
  p.set("lock", Duration::s(30));
  p.w.at(at_ms(5), [&] { p.w.crash(p.master.id()); });
  p.w.run_until(at_ms(100));
  CHECK(p.replica.keyspace().empty());
  Pair q;
  q.set("lock", Duration::s(30));
  q.w.run_until(at_ms(100));
  CHECK(q.replica.keyspace().count("lock") == 1);
}

TEST_CASE("a replica never expires keys itself: it hides them and waits for the master's DEL") {
  Pair p;
  p.set("lock", Duration::ms(500));
  p.w.at(at_ms(20), [&] { p.w.crash(p.master.id()); });  // replicated at 10 ms; no DEL will ever come
  p.w.run_until(at_ms(2000));
  CHECK(p.replica.execute({.op = redis::Op::Get, .key = "lock"}, kNoProc).is_nil());  // hidden
  CHECK(p.replica.keyspace().count("lock") == 1);                                       // but kept
  // Promoted, it expires with its own clock.
  p.replica.execute({.op = redis::Op::ReplicaOfNoOne}, kNoProc);
  p.w.run_until(at_ms(2300));
  CHECK(p.replica.keyspace().empty());
}

TEST_CASE("from 7.0 an expiry reaches replicas as PXAT: a promoted replica whose clock is ahead expires the key early") {
  // The replica's wall clock is 20 s ahead; the key has 30 s to live.
  for (bool pxat : {true, false}) {
    Pair p(ClockSpec{Duration::s(20), 0}, pxat);
    p.set("lock", Duration::s(30));
    p.w.at(at_ms(20), [&] {
      p.w.crash(p.master.id());
      p.replica.execute({.op = redis::Op::ReplicaOfNoOne}, kNoProc);
    });
    p.w.run_until(at_ms(15'000));
    INFO("pxat = " << pxat);
    // PXAT: the absolute master time 30 s is 10 s on the replica's clock: long gone.
    // PX (6.0, 6.2): the replica counts 30 s from when it applied the write: still there.
    CHECK((p.replica.keyspace().count("lock") == 0) == pxat);
  }
}

TEST_CASE("a replica refuses writes from clients (READONLY)") {
  Pair p;
  const auto r = p.replica.execute({.op = redis::Op::Set, .key = "k", .value = "v"}, p.master.id() + 5);
  CHECK(r.kind == redis::Reply::Kind::Err);
  CHECK(r.str.rfind("READONLY", 0) == 0);
}

TEST_CASE("the watchdog renews the lease every third of watchdog_timeout, and only while the lock is held") {
  Scenario s = catalogue("scenarios/redisson/watchdog-stw-pause.toml");
  s.faults.clear();
  s.clients.resize(1);
  s.clients[0].work = DurationRange::fixed(Duration::s(35));
  const RunResult r = run_scenario(s);
  const auto renewals = events_of(r, Ev::Renewed, "client1");
  REQUIRE(renewals.size() == 3);  // at about 10, 20 and 30 s; released at 35 s
  for (std::size_t i = 0; i < renewals.size(); ++i) {
    const Duration since_start = renewals[i]->at - at_ms(0);
    CHECK(since_start > Duration::s(10) * static_cast<std::int64_t>(i + 1));
    CHECK(since_start < Duration::s(10) * static_cast<std::int64_t>(i + 1) + Duration::ms(20));
  }
  CHECK(r.verdict.empty());
}

TEST_CASE("Z1: a pause longer than what is left of the watchdog's lease breaks the lock, a shorter one does not") {
  Scenario s = catalogue("scenarios/redisson/watchdog-stw-pause.toml");
  CHECK(run_scenario(s).verdict.count(ViolationKind::Overlap) == 1);
  // Paused at 15 s, last renewed at 10 s: the key lives until 40 s. A 24 s pause ends at 39 s.
  s.faults[0].duration = Duration::s(24);
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("R6: a lease longer than the failover is lost with the master, a shorter one is over before") {
  Scenario s = catalogue("scenarios/redis/failover-async-replication.toml");
  CHECK(run_scenario(s).verdict.count(ViolationKind::Overlap) == 1);
  // Replication faster than the crash: the replica has the key, and client2 must wait.
  s.nodes[1].replication_lag = DurationRange::fixed(Duration::ms(2));
  const RunResult safe = run_scenario(s);
  CHECK(safe.verdict.empty());
  CHECK(events_of(safe, Ev::Promoted).size() == 1);
}

TEST_CASE("Z2: the promoted replica repeats the token only if the INCR had not reached it") {
  Scenario s = catalogue("scenarios/redisson/fenced-lock-failover.toml");
  const RunResult broken = run_scenario(s);
  CHECK(broken.verdict.count(ViolationKind::StaleWrite) == 1);
  for (const TraceEvent* e : events_of(broken, Ev::Acquired)) CHECK(e->token == 34);
  // Replication faster than the crash: the lock and the counter both survive the failover;
  // client2 waits for client1 and then gets the next token.
  s.nodes[1].replication_lag = DurationRange::fixed(Duration::ms(1));
  const RunResult safe = run_scenario(s);
  CHECK(safe.verdict.empty());
  const auto acquired = events_of(safe, Ev::Acquired);
  REQUIRE(acquired.size() == 2);
  CHECK(acquired[0]->token == 34);
  CHECK(acquired[1]->token == 35);
}

TEST_CASE("Z3: MultiLock needs every node, Redisson's RedLock a majority") {
  CHECK(run_scenario(catalogue("scenarios/redisson/multilock-node-down.toml")).verdict ==
        std::set{ViolationKind::Stuck});
  Scenario s = catalogue("scenarios/redisson/multilock-node-down.toml");
  s.faults.clear();  // all three up: it locks
  CHECK(run_scenario(s).verdict.empty());
}

TEST_CASE("a failover fault promotes the replica at once, and the old master takes writes until it is converted") {
  const char* text = R"(title = "t"
about = "a"
source = "s"
duration = "20s"
[lock]
algorithm = "redis-single"
ttl = "30s"
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
replica_of = "redis1"
replication_lag = "10ms"
[sentinel]
down_after = "5s"
[[client]]
name = "client1"
work = "10s"
[[client]]
name = "client2"
start = "3s"
work = "1s"
repeat = "forever"
think = "1s"
[[fault]]
on = "client1 acquired"
kind = "failover"
target = "redis1"
)";
  const RunResult r = run_scenario(parse_scenario(text, "t.toml"));
  // SENTINEL FAILOVER skips the vote: redis2 is promoted within a few timer ticks.
  const auto promoted = events_of(r, Ev::Promoted, "redis2");
  REQUIRE(promoted.size() == 1);
  CHECK(promoted[0]->at < Instant::zero() + Duration::ms(500));
  // redis1 was never down: it stays a master, and client2 locks on it once
  // client1 releases there, until the sentinel converts it (a master for 8 s,
  // seen at its 10 s INFO) and its commands meet READONLY.
  Instant demoted = Instant::never();
  for (const TraceEvent* e : events_of(r, Ev::Command, "redis1"))
    if (e->detail.find("demoted") != std::string::npos) demoted = e->at;
  REQUIRE(demoted != Instant::never());
  CHECK(demoted > Instant::zero() + Duration::s(10));
  CHECK(demoted < Instant::zero() + Duration::s(12));
  const auto acquired = events_of(r, Ev::Acquired, "client2");
  REQUIRE(!acquired.empty());
  CHECK(acquired[0]->at < demoted);
  CHECK(acquired[0]->detail == "redis1");
  bool readonly = false, followed = false;
  for (const TraceEvent& e : r.world->trace().events()) {
    readonly |= e.at > demoted && e.detail.find("READONLY") != std::string::npos;
    followed |= e.at > demoted && e.kind == Ev::Command && e.process == *r.world->find("redis2") &&
                e.peer == *r.world->find("client2");
  }
  CHECK(readonly);
  CHECK(followed);  // then it asks the sentinel and goes to redis2
}

// docs/scenarios.md: expiry_propagation "holds for the whole group, whichever
// node is master" — a master and its replicas run one Redis version, so a
// replica's "px" (6.x) makes its master send PX too; another master's group
// keeps PXAT (sim/servers/redis/model.cpp, build).
TEST_CASE("a replica's expiry_propagation = px holds for its master and the whole group, not for another master's") {
  const Scenario s = parse_scenario(R"(title = "t"
about = "a"
source = "s"
duration = "1s"
[lock]
algorithm = "redis-single"
ttl = "10s"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
replica_of = "redis1"
expiry_propagation = "px"
[[node]]
name = "redis3"
[[node]]
name = "redis4"
replica_of = "redis3"
[[client]]
name = "client1"
)",
                                    "px.toml");
  const RunResult r = run_scenario(s);
  auto pxat = [&](const char* name) {
    const auto id = r.world->find(name);
    REQUIRE(id);
    return dynamic_cast<const RedisNode&>(r.world->process(*id)).config().expiry_as_pxat;
  };
  CHECK_FALSE(pxat("redis1"));  // the master sends PX to its replica
  CHECK_FALSE(pxat("redis2"));  // and the replica, promoted, would too
  CHECK(pxat("redis3"));
  CHECK(pxat("redis4"));
}

}  // namespace replication_test
