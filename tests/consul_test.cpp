// Consul's lock (lockalgos/consul.cpp) and its leader (sim/servers/consul/model.cpp)
// against their references: api/lock.go, api/session.go RenewPeriodic, and
// the server's session_ttl.go, kvs_endpoint.go and state store
// (docs/algorithms-coordination.md §4 gives files and lines). Each test names
// the rule it pins.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "harness/sim_client.hpp"
#include "lockalgos/coordination_common.hpp"
#include "sim/servers/table.hpp"
#include "tests/support.hpp"

namespace consul_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// client1 takes the Consul lock at once and holds it for `hold`; client2
// wants it from 0.5 s; `faults` are appended as written.
Scenario consul(const std::string& lock_lines, const std::string& hold, const std::string& faults = "",
                const std::string& duration = "80s") {
  return parse_scenario(R"(
title = "consul"
source = "consul_test.cpp"
about = "client2 waits for client1's Consul lock."
seed = 1
duration = ")" + duration + R"("
[lock]
algorithm = "consul"
)" + lock_lines + R"(
[network]
delay = "1ms"
[[node]]
name = "consul"
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
                        "consul.toml");
}

std::string pause_client1(const std::string& at, const std::string& length) {
  return "[[fault]]\nat = \"" + at + "\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"" + length + "\"\n";
}

struct Probe final : Process {
  explicit Probe(World& w) : Process(w, "client", ProcessRole::Client, {}) {}
  void on_message(Message&) override {}
};

// One Consul leader, built through the server table, and a client that
// sends it requests, one at a time, at the times given.
struct ConsulBench {
  World w{1};
  std::vector<NodeConfig> nodes{NodeConfig{.name = "consul"}};
  ServiceBuild build{.world = w, .nodes = nodes};
  Process& consul;
  Probe& client;
  ConsulBench() : consul(server_model(ServerKind::Consul).build(build, 0)), client(w.add<Probe>()) {
    w.network().configure({DurationRange::fixed(Duration::zero()), 0.0, true});
  }
  coord::Reply ask(coord::Request r, Duration at) {
    std::optional<coord::Reply> out;
    w.at(Instant::zero() + at, [&] {
      client.spawn([](Probe& self, ProcId to, coord::Request r, std::optional<coord::Reply>& out) -> Task<void> {
        SimClientEnv env(self);
        out = co_await env.call_coord(to, std::move(r), Duration::zero());
      }(client, consul.id(), std::move(r), out));
    });
    w.run_until(Instant::zero() + at + Duration::ms(1));
    REQUIRE(out.has_value());
    return *out;
  }
  std::int64_t session(Duration at) {
    coord::Request r = coord_request(coord::Op::SessionCreate);
    r.ttl = Duration::s(10);
    return ask(r, at).id;
  }
  coord::Reply acquire(std::int64_t session, Duration at) {
    return ask(coord_request(coord::Op::KvAcquire, "lock", session), at);
  }
};

// When client1's session was invalidated (the Expired event), if it was.
std::optional<Instant> invalidated(const RunResult& r) {
  const auto ev = events_of(r, Ev::Expired, "consul");
  if (ev.empty()) return std::nullopt;
  return ev[0]->at;
}

}  // namespace

TEST_CASE("the Consul leader invalidates an unrenewed session after twice its TTL, not after the TTL") {
  // session_ttl.go:86-95: the timer runs TTL x SessionTTLMultiplier. client1
  // created its session at about 0 s and is paused from 1 s, before its
  // first renew (TTL/2 = 5 s): the session ends at about 20 s.
  const RunResult r = run_scenario(consul("session_ttl = \"10s\"", "60s", pause_client1("1s", "40s")));
  const auto at = invalidated(r);
  REQUIRE(at.has_value());
  CHECK(*at > Instant::zero() + Duration::s(20));
  CHECK(*at < Instant::zero() + Duration::s(20) + Duration::ms(10));
  // A pause just over the TTL (11 s) loses nothing: the renew after it is accepted.
  const RunResult survives = run_scenario(consul("session_ttl = \"10s\"", "30s", pause_client1("1s", "11s")));
  CHECK_FALSE(invalidated(survives).has_value());
  // With the multiplier at 1, the same pause ends the session at the TTL.
  const RunResult one = run_scenario(consul("session_ttl = \"10s\"\nttl_multiplier = 1", "30s", pause_client1("1s", "11s")));
  const auto at_one = invalidated(one);
  REQUIRE(at_one.has_value());
  CHECK(*at_one < Instant::zero() + Duration::s(10) + Duration::ms(10));
}

TEST_CASE("RenewPeriodic renews the session every TTL/2") {
  const RunResult r = run_scenario(consul("session_ttl = \"10s\"", "30s"));
  std::vector<Instant> renews;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Command && e.peer == *r.world->find("client1") && e.detail.rfind("PUT /v1/session/renew/", 0) == 0)
      renews.push_back(e.at);
  REQUIRE(renews.size() >= 3);
  CHECK(renews[1] - renews[0] > Duration::s(5));
  CHECK(renews[1] - renews[0] < Duration::s(5) + Duration::ms(10));
}

TEST_CASE("the lock-delay refuses an acquire within the delay and allows one after it") {
  // kvs_endpoint.go:75-92. client1's session ends at about 20 s (paused from
  // 1 s); with a 15 s lock-delay client2 is refused until about 35 s, and
  // retries every DefaultLockRetryTime (5 s, lock.go:29).
  const RunResult r = run_scenario(consul("session_ttl = \"10s\"\nlock_delay = \"15s\"", "60s", pause_client1("1s", "50s")));
  const auto at = invalidated(r);
  REQUIRE(at.has_value());
  const auto refused = events_of(r, Ev::AttemptFailed, "client2");
  const auto taken = events_of(r, Ev::Acquired, "client2");
  REQUIRE(taken.size() >= 1);
  REQUIRE(refused.size() >= 3);
  for (const TraceEvent* e : refused) CHECK(e->at - *at < Duration::s(15));
  CHECK(taken[0]->at - *at >= Duration::s(15));
  CHECK(taken[0]->at - *at < Duration::s(15) + Duration::s(5) + Duration::ms(50));
  // No lock-delay (a session made by a direct HTTP call: api.Lock cannot ask
  // for 0): client2 holds the key within a few messages of the invalidation.
  const RunResult none = run_scenario(
      consul("flavour = \"http\"\nsession_ttl = \"10s\"\nlock_delay = \"0s\"", "60s", pause_client1("1s", "50s")));
  const auto at_none = invalidated(none);
  const auto taken_none = events_of(none, Ev::Acquired, "client2");
  REQUIRE(at_none.has_value());
  REQUIRE(taken_none.size() >= 1);
  CHECK(events_of(none, Ev::AttemptFailed, "client2").empty());
  CHECK(taken_none[0]->at - *at_none < Duration::ms(10));
}

TEST_CASE("a lock-delay above a minute is accepted and applied as a minute, MaxLockDelay") {
  // agent/structs/structs.go MaxLockDelay: "Any value above this will not be
  // respected"; the state store caps it when it deletes the session. client2,
  // retrying every 5 s, holds the key a minute after the invalidation, not 90 s.
  const RunResult r = run_scenario(consul("session_ttl = \"10s\"\nlock_delay = \"90s\"", "150s", pause_client1("1s", "140s"), "150s"));
  const auto at = invalidated(r);
  REQUIRE(at.has_value());
  const auto taken = events_of(r, Ev::Acquired, "client2");
  REQUIRE(taken.size() >= 1);
  CHECK(taken[0]->at - *at >= Duration::s(60));
  CHECK(taken[0]->at - *at < Duration::s(60) + Duration::s(5) + Duration::ms(50));
}

TEST_CASE("an acquire by the session that holds the key keeps its LockIndex, and another session after a release raises it") {
  // state/kvs.go kvsLockTxn: "We already hold this lock, good to go".
  ConsulBench b;
  const std::int64_t s1 = b.session(Duration::zero());
  const std::int64_t s2 = b.session(Duration::ms(10));
  const coord::Reply first = b.acquire(s1, Duration::ms(20));
  REQUIRE(first.id == 1);
  REQUIRE(first.nodes.size() == 1);
  CHECK(first.nodes[0].lock_index == 1);
  const coord::Reply again = b.acquire(s1, Duration::ms(30));
  CHECK(again.id == 1);
  REQUIRE(again.nodes.size() == 1);
  CHECK(again.nodes[0].lock_index == 1);
  CHECK(b.acquire(s2, Duration::ms(40)).id == 0);  // another session holds it
  CHECK(b.ask(coord_request(coord::Op::KvRelease, "lock", s1), Duration::ms(50)).id == 1);
  const coord::Reply taken = b.acquire(s2, Duration::ms(60));
  CHECK(taken.id == 1);
  REQUIRE(taken.nodes.size() == 1);
  CHECK(taken.nodes[0].lock_index == 2);
}

TEST_CASE("a release sets no lock-delay: the next client holds the key at once") {
  const RunResult r = run_scenario(consul("lock_delay = \"15s\"", "2s"));
  const auto given = events_of(r, Ev::Released, "client1");
  const auto next = events_of(r, Ev::Acquired, "client2");
  REQUIRE(given.size() == 1);
  REQUIRE(next.size() == 1);
  CHECK(next[0]->at - given[0]->at < Duration::ms(10));
  CHECK(events_of(r, Ev::Expired, "consul").empty());
}

TEST_CASE("the key's LockIndex rises by one per acquire and is the fencing token") {
  Scenario s = consul("", "1s", "", "20s");
  const RunResult r = run_scenario(s);
  std::vector<std::int64_t> tokens;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Acquired) tokens.push_back(e.token);
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0] == 1);
  CHECK(tokens[1] == 2);
  // With Behavior delete an invalidated key is deleted and LockIndex starts again at 1.
  const RunResult del = run_scenario(consul("flavour = \"http\"\nsession_ttl = \"10s\"\nlock_delay = \"0s\"\nbehavior = \"delete\"", "60s",
                                            pause_client1("1s", "50s")));
  tokens.clear();
  for (const TraceEvent& e : del.world->trace().events())
    if (e.kind == Ev::Acquired) tokens.push_back(e.token);
  REQUIRE(tokens.size() >= 2);
  CHECK(tokens[0] == 1);
  CHECK(tokens[1] == 1);
}

TEST_CASE("a crashed client's serfHealth check ends its session within seconds, not at twice the TTL") {
  const std::string crash = "[[fault]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"client1\"\n";
  const RunResult r = run_scenario(consul("flavour = \"http\"\nsession_ttl = \"60s\"\nlock_delay = \"0s\"", "60s", crash));
  const auto at = invalidated(r);
  REQUIRE(at.has_value());
  CHECK(*at - (Instant::zero() + Duration::s(1)) <= Duration::s(6));
  // checks = "none": the TTL alone, 2 x 60 s, ends it after the run.
  const RunResult ttl_only = run_scenario(consul("flavour = \"http\"\nsession_ttl = \"60s\"\nlock_delay = \"0s\"\nchecks = \"none\"", "60s", crash));
  CHECK_FALSE(invalidated(ttl_only).has_value());
}

TEST_CASE("a client back within gossip's suspicion refutes it: the serfHealth check does not end its session") {
  // memberlist: a suspected member that answers before the suspicion
  // timeout (4 x ProbeInterval) refutes it and stays alive. client1 is down
  // from 1 s to 3 s; its session, TTL 60 s, lives on.
  const std::string crash = "[[fault]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"client1\"\n"
                            "[[fault]]\nat = \"3s\"\nkind = \"restart\"\ntarget = \"client1\"\n";
  const RunResult r = run_scenario(consul("flavour = \"http\"\nsession_ttl = \"60s\"\nlock_delay = \"0s\"", "60s", crash));
  CHECK_FALSE(invalidated(r).has_value());
}

TEST_CASE("RenewPeriodic gives up once a whole TTL has passed since its last renew: back in touch, it renews no more") {
  // api/session.go RenewPeriodic: "if time.Since(lastRenewTime) > ttl" it
  // returns ErrSessionExpired. client1 is cut off from 2 s to 12 s: its
  // renew at 5 s goes unanswered until 15 s, more than the 10 s TTL after the
  // last renew, so it stops there, although the leader could be reached
  // again and still had the session; the leader ends it at 2 x TTL, 20 s.
  const std::string cut = "[[fault]]\nat = \"2s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"consul\"]]\nduration = \"10s\"\n";
  const RunResult r = run_scenario(
      consul("flavour = \"http\"\nsession_ttl = \"10s\"\nlock_delay = \"0s\"\nchecks = \"none\"", "50s", cut, "60s"));
  const auto at = invalidated(r);
  REQUIRE(at.has_value());
  CHECK(*at >= Instant::zero() + Duration::s(20));
  CHECK(*at < Instant::zero() + Duration::s(21));
}

TEST_CASE("a fault-free Consul run is safe, and the holder is told when monitorLock sees its key go") {
  for (int seed = 1; seed <= 5; ++seed) {
    Scenario s = consul("", "3s", "", "40s");
    s.seed = static_cast<std::uint64_t>(seed);
    const RunResult r = run_scenario(s);
    CHECK(r.verdict.empty());
    CHECK(events_of(r, Ev::Acquired).size() == 2);
  }
  // Z11: client1's monitorLock reads that the key is not its session's once it wakes.
  const RunResult z11 = run_scenario(catalogue("scenarios/consul/session-ttl-pause.toml"));
  CHECK(events_of(z11, Ev::Lost, "client1").size() == 1);
  CHECK(z11.verdict.count(ViolationKind::StaleWrite) == 1);
  const RunResult fenced = run_scenario(catalogue("scenarios/consul/session-ttl-pause-token.toml"));
  CHECK(fenced.verdict.count(ViolationKind::StaleWrite) == 0);
  CHECK(fenced.verdict.count(ViolationKind::Overlap) == 1);
}

TEST_CASE("Consul's options are checked against the server's bounds") {
  CHECK_THROWS_WITH_AS(consul("session_ttl = \"5s\"", "1s"), doctest::Contains("[10s, 24h]"), ScenarioError);
  CHECK_NOTHROW(consul("lock_delay = \"90s\"", "1s"));  // the leader caps it (above)
  CHECK_THROWS_AS(consul("lock_delay = \"-1s\"", "1s"), ScenarioError);
  CHECK_THROWS_WITH_AS(consul("behavior = \"keep\"", "1s"), doctest::Contains("behavior"), ScenarioError);
}

TEST_CASE("handover(): a holder gone silent keeps Consul's lock from others for at most TTL x 2 + lock-delay") {
  // explore draws fault magnitudes and judges liveness against handover()
  // (lockalgos/consul.hpp). client1 is paused at instants across one renew
  // period (TTL/2 = 5 s) — a pause, not a crash: its node's agent stays up,
  // so no serfHealth check ends the session early; client2 is granted the lock once the session is
  // invalidated (session_ttl.go:86-95, 2 x TTL after the last renew) and the
  // lock-delay has run (kvs_endpoint.go:75-92), at api/lock.go's next retry.
  const Scenario base = consul("session_ttl = \"10s\"\nlock_delay = \"7s\"", "70s");
  const Duration handover = base.lock.options->handover();
  CHECK(handover == Duration::s(27));
  // api.Lock asks for no lock-delay when given 0, and the agent's 15 s applies.
  CHECK(consul("session_ttl = \"10s\"\nlock_delay = \"0s\"", "1s").lock.options->handover() == Duration::s(35));
  // A lock-delay over a minute counts as the minute the leader applies.
  CHECK(consul("session_ttl = \"10s\"\nlock_delay = \"90s\"", "1s").lock.options->handover() == Duration::s(80));
  Duration longest = Duration::zero();
  for (int ms = 1'000; ms <= 11'000; ms += 1'000) {
    const std::string at = std::to_string(ms) + "ms";
    const RunResult r = run_scenario(
        consul("session_ttl = \"10s\"\nlock_delay = \"7s\"", "70s", pause_client1(at, "60s")));
    const auto taken = events_of(r, Ev::Acquired, "client2");
    REQUIRE(taken.size() == 1);
    longest = max(longest, taken[0]->at - (Instant::zero() + Duration::ms(ms)));
  }
  CHECK(longest > handover - Duration::s(5));                  // the worst instant comes near it
  CHECK(longest <= handover + Duration::s(5) + Duration::ms(10));  // plus one DefaultLockRetryTime
}

}  // namespace consul_test
