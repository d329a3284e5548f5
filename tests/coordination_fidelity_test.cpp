// The coordination services' models against their references (issue 12):
// ZooKeeper 3.9.3 ClientCnxn and Curator 5.9.0, etcd v3.6.14, Chubby (Burrows
// 2006). Each test names the rule it pins; docs/algorithms-coordination.md
// gives the reference's file and line.
#include <doctest/doctest.h>

#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "harness/sim_client.hpp"
#include "lockalgos/coordination_common.hpp"
#include "sim/servers/etcd/server.hpp"
#include "tests/support.hpp"

namespace coordination_fidelity_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

struct Probe : Process {
  Probe(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  void on_message(Message&) override {}
};

constexpr Instant at(Duration d) { return Instant::zero() + d; }

std::vector<Instant> commands_at(const RunResult& r, const std::string& prefix, ProcId from) {
  std::vector<Instant> out;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Command && e.peer == from && e.detail.rfind(prefix, 0) == 0) out.push_back(e.at);
  return out;
}

bool any_detail(const RunResult& r, const std::string& needle) {
  for (const TraceEvent& e : r.world->trace().events())
    if (e.detail.find(needle) != std::string::npos) return true;
  return false;
}

// Two clients of one lock node, client1 from 0 and client2 from 0.5 s, each
// doing the job its [[client]] lines `job1`, `job2` say; `faults` as written.
Scenario two_clients(const std::string& name, const std::string& lock_lines, const std::string& node,
                     const std::string& job1, const std::string& job2, const std::string& faults) {
  return parse_scenario(R"(
title = ")" + name + R"("
source = "coordination_fidelity_test.cpp"
about = "client2 waits for client1's lock."
seed = 1
duration = "60s"
[lock]
)" + lock_lines + R"(
[network]
delay = "1ms"
[[node]]
name = ")" + node + R"("
[[client]]
name = "client1"
)" + job1 + R"(
[[client]]
name = "client2"
start = "500ms"
)" + job2 + faults,
                        name + ".toml");
}

// client1 holds a Chubby or ZooKeeper lock for `hold`; client2 waits from 0.5 s.
Scenario held(const std::string& lock_lines, const std::string& node, const std::string& hold,
              const std::string& faults = "") {
  return two_clients("held", lock_lines, node, "job = \"hold\"\nhold = \"" + hold + "\"",
                     "job = \"hold\"\nhold = \"1s\"\n", faults);
}

}  // namespace

TEST_CASE("an idle ZooKeeper connection pings every readTimeout/2, counted in whole milliseconds as Java does") {
  const RunResult r = run_scenario(held("algorithm = \"zookeeper\"\nsession_timeout = \"10s\"", "zk", "20s"));
  const auto pings = commands_at(r, "PING", *r.world->find("client1"));
  REQUIRE(pings.size() >= 3);
  // readTimeout = 10000 * 2 / 3 = 6666 ms; a ping 3333 ms after the last send
  // (ClientCnxn.java:1263-1269), not a third of 10 s (3333.33 ms).
  CHECK(pings[2] - pings[1] == Duration::ms(3333));
}

TEST_CASE("after LOST Curator sends no CloseSession: the old session's node stays until the server expires it") {
  // T = 6 s, tick 3 s: client2 last heard at about 0.5 s, so the server expires
  // its session at (floor(6.5 / 3) + 1) x 3 = 9 s; paused 1 s .. 8.6 s, it wakes
  // 8.1 s after it last heard, past 4/3 x 6 s = 8 s: LOST at once, before the server's decision.
  const RunResult r = run_scenario(held("algorithm = \"zookeeper\"\nsession_timeout = \"6s\"\ntick_time = \"3s\"", "zk", "20s",
                                        "[[fault]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"client2\"\nduration = \"7600ms\"\n"));
  CHECK_FALSE(any_detail(r, "CLOSESESSION"));
  const auto expired = events_of(r, Ev::Expired, "zk");
  REQUIRE(expired.size() == 1);
  CHECK(expired[0]->owner == *r.world->find("client2"));
  CHECK(expired[0]->at == at(Duration::s(9)));
  CHECK(r.verdict.empty());
}

TEST_CASE("ZooKeeper's sequence suffix counts the parent's creates: create, delete, create gives 0 and 1") {
  // PrepRequestProcessor.java:668-671 (cversion), deletes leave it (ZOOKEEPER-1046).
  const RunResult r = run_scenario(held("algorithm = \"zookeeper\"", "zk", "1s"));
  std::vector<std::string> created;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Command && e.detail.rfind("CREATE ", 0) == 0) created.push_back(e.detail);
  REQUIRE(created.size() == 2);
  CHECK(created[0].find("-lock-0000000000") != std::string::npos);
  CHECK(created[1].find("-lock-0000000001") != std::string::npos);
}

TEST_CASE("etcd raises a lease TTL below ceil(1.5 election timeouts) to it, silently: 1 s lives 2 s by default") {
  CHECK(EtcdServer::min_lease_ttl(Duration::s(1)) == Duration::s(2));
  CHECK(EtcdServer::min_lease_ttl(Duration::s(5)) == Duration::s(8));  // 7.5 s rounded up
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
  auto& etcd = w.add<EtcdServer>("etcd", ClockSpec{}, 1, Duration::s(1));
  auto& client = w.add<Probe>("client");
  std::optional<coord::Reply> granted, renewed;
  client.spawn([](Probe& self, ProcId etcd, std::optional<coord::Reply>& granted,
                  std::optional<coord::Reply>& renewed) -> Task<void> {
    SimClientEnv env(self);
    coord::Request grant = coord_request(coord::Op::LeaseGrant);
    grant.ttl = Duration::s(1);
    granted = co_await env.call_coord(etcd, grant, Duration::zero());
    co_await self.sleep(Duration::ms(1500));  // past the asked-for TTL, within the raised one
    renewed = co_await env.call_coord(etcd, coord_request(coord::Op::KeepAlive, "", granted->id), Duration::zero());
  }(client, etcd.id(), granted, renewed));
  w.run_until(at(Duration::s(5)));
  REQUIRE(granted.has_value());
  CHECK(granted->ttl == Duration::s(2));
  REQUIRE(renewed.has_value());
  CHECK(renewed->ok);
}

TEST_CASE("the lock's election_timeout reaches the etcd server: a 1 s lease outlives a 5 s pause under a 5 s election timeout") {
  // The minimum TTL grows with the election timeout: 2 s by default, 8 s for
  // 5 s (above). client1's 1 s lease is raised to one or the other; paused for
  // 5 s, it loses it only under the default.
  const std::string pause = "[[fault]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"5s\"\n";
  const RunResult by_default = run_scenario(held("algorithm = \"etcd\"\nlease_ttl = \"1s\"", "etcd", "20s", pause));
  const RunResult slower =
      run_scenario(held("algorithm = \"etcd\"\nlease_ttl = \"1s\"\nelection_timeout = \"5s\"", "etcd", "20s", pause));
  CHECK_FALSE(events_of(by_default, Ev::Expired, "etcd").empty());
  CHECK(events_of(slower, Ev::Expired, "etcd").empty());
}

TEST_CASE("after an etcd leader restart a lease of TTL 10 s lives the election timeout plus its TTL") {
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
  auto& etcd = w.add<EtcdServer>("etcd", ClockSpec{}, 1, Duration::s(1));
  auto& client = w.add<Probe>("client");
  std::optional<coord::Reply> late;
  client.spawn([](Probe& self, ProcId etcd, std::optional<coord::Reply>& late) -> Task<void> {
    SimClientEnv env(self);
    coord::Request grant = coord_request(coord::Op::LeaseGrant);
    grant.ttl = Duration::s(10);
    const auto lease = co_await env.call_coord(etcd, grant, Duration::zero());
    // Restarted at 2 s: Promote gives it until 2 + 1 + 10 = 13 s (not 12 s).
    co_await self.sleep(Duration::ms(12400));
    late = co_await env.call_coord(etcd, coord_request(coord::Op::KeepAlive, "", lease->id), Duration::zero());
  }(client, etcd.id(), late));
  w.at(at(Duration::s(1)), [&] { w.crash(etcd.id()); });
  w.at(at(Duration::s(2)), [&] { w.restart(etcd.id()); });
  w.run_until(at(Duration::s(20)));
  REQUIRE(late.has_value());
  CHECK(late->ok);
}

TEST_CASE("Chubby's lock-delay keeps a failed holder's lock from others for the delay, a release frees it at once") {
  // Z10: the session's lease ends at about 23 s, the lock-delay is 60 s.
  const RunResult delayed = run_scenario(catalogue("scenarios/chubby/lock-delay.toml"));
  const auto expired = events_of(delayed, Ev::Expired, "chubby");
  const auto taken = events_of(delayed, Ev::Acquired, "client2");
  REQUIRE(expired.size() == 1);
  REQUIRE(taken.size() == 1);
  CHECK(taken[0]->at - expired[0]->at >= Duration::s(60));
  CHECK(taken[0]->at - expired[0]->at < Duration::s(60) + Duration::ms(10));
  // A normal release: client2 holds the lock within a few messages of client1's release.
  const RunResult released = run_scenario(held("algorithm = \"chubby\"\nlock_delay = \"60s\"", "chubby", "2s"));
  const auto given = events_of(released, Ev::Released, "client1");
  const auto next = events_of(released, Ev::Acquired, "client2");
  REQUIRE(given.size() == 1);
  REQUIRE(next.size() == 1);
  CHECK(next[0]->at - given[0]->at < Duration::ms(10));
}

TEST_CASE("a Chubby master that restarts during a lock-delay still hands the lock on when the delay ends") {
  // The crash stops the lock-delay's timer; the restart must arm it again.
  // client1 fails at 2 s holding the lock; its session ends about 12 s
  // later and the lock-delay runs 60 s from there, to about 83 s; the master
  // is down from 80 s to 82 s. Found by explore (lock-delay.toml: client2
  // waited to the end of the run).
  const RunResult r = run_scenario(parse_scenario(R"(
title = "restart during a lock-delay"
source = "coordination_fidelity_test.cpp"
about = "client2 waits while the master restarts."
seed = 1
duration = "100s"
[lock]
algorithm = "chubby"
lock_delay = "60s"
[network]
delay = "1ms"
[[node]]
name = "chubby"
[[client]]
name = "client1"
job = "hold"
hold = "50s"
[[client]]
name = "client2"
start = "500ms"
job = "hold"
hold = "1s"
[[fault]]
at = "2s"
kind = "crash"
target = "client1"
[[fault]]
at = "80s"
kind = "crash"
target = "chubby"
[[fault]]
at = "82s"
kind = "restart"
target = "chubby"
)",
                                                  "restart.toml"));
  const auto expired = events_of(r, Ev::Expired, "chubby");
  const auto taken = events_of(r, Ev::Acquired, "client2");
  REQUIRE(expired.size() == 1);
  REQUIRE(taken.size() == 1);
  CHECK(taken[0]->at - expired[0]->at >= Duration::s(60));
  CHECK(taken[0]->at - expired[0]->at < Duration::s(61));
}

TEST_CASE("Chubby's lock generation numbers start at first_token and rise by one per acquire") {
  // §2.4: the sequencer carries the lock's generation number, which rises
  // each time the lock is acquired; first_token is where the cell starts.
  const RunResult r = run_scenario(held("algorithm = \"chubby\"\nfirst_token = 500", "chubby", "1s"));
  std::vector<std::int64_t> tokens;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Acquired) tokens.push_back(e.token);
  REQUIRE(tokens.size() == 2);
  CHECK(tokens[0] == 500);
  CHECK(tokens[1] == 501);
}

namespace {

// One Chubby client on one master, cut off from it from 2 s for `cut`;
// `job` is the client's job lines.
RunResult chubby_cut_off(const std::string& job, const std::string& cut, const std::string& duration) {
  return run_scenario(parse_scenario("title = \"cut off\"\nsource = \"coordination_fidelity_test.cpp\"\n"
                                     "about = \"client1 loses its master at 2 s.\"\nseed = 1\nduration = \"" + duration +
                                         "\"\n[lock]\nalgorithm = \"chubby\"\n[network]\ndelay = \"1ms\"\n"
                                         "[[node]]\nname = \"chubby\"\n[[client]]\nname = \"client1\"\n" + job +
                                         "[[fault]]\nat = \"2s\"\nkind = \"partition\"\n"
                                         "groups = [[\"client1\"], [\"chubby\"]]\nduration = \"" + cut + "\"\n",
                                     "cut-off.toml"));
}

}  // namespace

TEST_CASE("a Chubby client in jeopardy does not trust its lock: past its local lease it skips the write") {
  // §2.8: past the local lease (11 s here) the client is in jeopardy and
  // blocks its application's calls; its write at 20 s, within the grace
  // period, is not sent.
  const RunResult r = chubby_cut_off("work = \"20s\"\n", "50s", "60s");
  CHECK(events_of(r, Ev::WriteSkipped, "client1").size() == 1);
  CHECK(events_of(r, Ev::Wrote, "client1").empty());
  CHECK(events_of(r, Ev::Lost, "client1").empty());  // the session is not over yet: 11 s + 45 s
}

TEST_CASE("a Chubby client cut off from its master gives the lock up 45 s after its local lease ended, the grace period") {
  // Burrows 2006 §2.8: past the local lease the client is in jeopardy; "the
  // grace period (45s by default)" with no KeepAlive answered ends its session.
  // The lease is 12 s less an allowance, from the KeepAlive answered at about 0 s.
  const RunResult r = chubby_cut_off("job = \"hold\"\nhold = \"90s\"\n", "80s", "100s");
  const auto lost = events_of(r, Ev::Lost, "client1");
  REQUIRE(lost.size() == 1);
  CHECK(lost[0]->at >= Instant::zero() + Duration::s(55));
  CHECK(lost[0]->at <= Instant::zero() + Duration::s(57));
}

TEST_CASE("a KeepAlive whose session ended before the paused master took it up is answered SESSION_EXPIRED at once") {
  // client2's Ping is delivered at 12.502 s, as the master resumes from a
  // pause that outlasted client2's lease; the lease's expiry runs before the
  // handler of the KeepAlive starts, which must then find no session to hold
  // it for (chubby.cpp, keep_alive). It once read the lease of the session
  // map's end: whatever the memory held. Memory filled with 0x7f first makes
  // that a lease far in the future (the KeepAlive held for ever), as a
  // thread of explore --exhaustive once had it.
  for (std::size_t size = 16; size <= 4096; size += 16) {
    std::vector<void*> blocks;
    for (int i = 0; i < 4; ++i) blocks.push_back(std::memset(::operator new(size), 0x7f, size));
    for (void* b : blocks) ::operator delete(b);
  }
  const RunResult r = run_scenario(parse_scenario(R"(
title = "a Ping into a pause longer than the lease"
source = "coordination_fidelity_test.cpp"
about = "found by explore --exhaustive on lock-delay-zero-sequencer.toml"
seed = 1
duration = "30s"
[lock]
algorithm = "chubby"
lock_delay = "0s"
[network]
delay = "1ms"
[[node]]
name = "chubby"
[[client]]
name = "client1"
work = "4s"
[[client]]
name = "client2"
start = "500ms"
work = "1s"
[[fault]]
on = "client1 started"
kind = "pause"
target = "client1"
duration = "501ms"
[[fault]]
on = "client1 resumed"
kind = "pause"
target = "chubby"
duration = "12.001s"
)",
                                                  "ping-into-pause.toml"));
  const ProcId client2 = *r.world->find("client2");
  std::vector<Instant> answered;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Command && e.peer == client2 && e.detail == "PING session=1 -> ERROR SESSION_EXPIRED")
      answered.push_back(e.at);
  CHECK(answered == std::vector<Instant>{at(Duration::ms(12502))});
}

TEST_CASE("Chubby refuses a lock-delay over one minute, naming the paper's bound") {
  CHECK_THROWS_WITH_AS(held("algorithm = \"chubby\"\nlock_delay = \"61s\"", "chubby", "1s"),
                       doctest::Contains("one minute"), ScenarioError);
}

TEST_CASE("a Chubby sequencer from generation 1 is refused once generation 2 has written") {
  for (const char* name : {"lock-delay-zero", "lock-delay-short"}) {
    INFO(name);
    const RunResult open = run_scenario(catalogue(std::string("scenarios/chubby/") + name + ".toml"));
    CHECK(open.verdict.count(ViolationKind::StaleWrite) == 1);
    const RunResult fenced = run_scenario(catalogue(std::string("scenarios/chubby/") + name + "-sequencer.toml"));
    CHECK(fenced.verdict.empty());
  }
}

TEST_CASE("handover(): a holder gone silent keeps Chubby's lock from others for at most two leases + lock-delay") {
  // explore draws fault magnitudes and judges liveness against handover()
  // (lockalgos/chubby.hpp). client1 crashes at instants across one lease;
  // the master answers the KeepAlive it holds 1 s before the lease ends,
  // crashed or not (§2.8), which extends the lease once more, then the
  // lock-delay runs (§2.4); client2's blocked Acquire is granted then.
  const Scenario base = held("algorithm = \"chubby\"\nlock_delay = \"10s\"", "chubby", "50s");
  const Duration handover = base.lock.options->handover();
  CHECK(handover == Duration::s(34));
  Duration longest = Duration::zero();
  for (int ms = 1'000; ms <= 13'000; ms += 1'000) {
    const std::string at = std::to_string(ms) + "ms";
    const RunResult r = run_scenario(held("algorithm = \"chubby\"\nlock_delay = \"10s\"", "chubby", "50s",
                                          "[[fault]]\nat = \"" + at + "\"\nkind = \"crash\"\ntarget = \"client1\"\n"));
    const auto taken = events_of(r, Ev::Acquired, "client2");
    REQUIRE(taken.size() == 1);
    longest = max(longest, taken[0]->at - (Instant::zero() + Duration::ms(ms)));
  }
  CHECK(longest > handover - Duration::s(2));
  CHECK(longest <= handover);
}

// --- Issue 32: the seven departures an auditor found, each at the boundary
// the reference code sets, its verdict predicted by hand from that code.

namespace {

// client1 takes the lock at once and works `work` (read at about 10 ms, write
// after); client2 wants it from 0.5 s and works 1 s. `faults` as written.
Scenario working(const std::string& lock_lines, const std::string& node, const std::string& work,
                 const std::string& faults = "") {
  return two_clients("working", lock_lines, node, "work = \"" + work + "\"", "work = \"1s\"\n", faults);
}

std::string pause_of(const std::string& who, const std::string& when, const std::string& length) {
  return "[[fault]]\nat = \"" + when + "\"\nkind = \"pause\"\ntarget = \"" + who + "\"\nduration = \"" + length + "\"\n";
}

std::string partition_of(const std::string& who, const std::string& node, const std::string& when,
                         const std::string& length = "") {
  return "[[fault]]\nat = \"" + when + "\"\nkind = \"partition\"\ngroups = [[\"" + who + "\"], [\"" + node + "\"]]\n" +
         (length.empty() ? "" : "duration = \"" + length + "\"\n");
}

const std::set<ViolationKind> kBroken{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate};

// The messages `from` sent after `after` that the network dropped (the sender
// records the loss), by what they said.
std::vector<std::string> dropped_from(const RunResult& r, const std::string& from, Instant after = Instant::zero()) {
  std::vector<std::string> out;
  for (const TraceEvent* e : events_of(r, Ev::Dropped, from))
    if (e->at > after) out.push_back(e->detail);
  return out;
}

}  // namespace

// ZooKeeper, T = 10 s, tick 2 s, 1 ms links. client1 holds from 0.008 s; the
// server last hears it at 0.007 s (its last getChildren), so it expires the
// session at the tick after 10.007 s: 12 s. client1 last heard at 0.008 s:
// readTimeout 6666 ms, expirationTimeout 13333 ms (ClientCnxn.java:422-424 at
// release-3.9.3). Paused from 1 s, client1 resumes between the two.
TEST_CASE("a ZooKeeper client paused past readTimeout does not ping at resume: it reconnects 1-2 s later, when the server has expired its session") {
  // Resumes at 11.5 s: Disconnected (SUSPENDED). SendThread.run drops the
  // connection rather than ping (ClientCnxn.java:1244-1261), and reconnects
  // after StaticHostProvider.next(1000)'s 1 s spin and startConnect's random
  // sleep of 0-999 ms (:1138, StaticHostProvider.java:349-366): at 12.5-13.5 s,
  // after the server's expiry at 12 s, so the session is gone either way
  // (told so, or expired by the client itself past 13.341 s). client1's write
  // at 12.2 s, SUSPENDED but not LOST, lands after client2's grant at 12.003 s.
  const RunResult r = run_scenario(working("algorithm = \"zookeeper\"\nsession_timeout = \"10s\"\ntick_time = \"2s\"",
                                           "zk", "12190ms", pause_of("client1", "1s", "10500ms")));
  CHECK(r.verdict == kBroken);
  const auto expired = events_of(r, Ev::Expired, "zk");
  REQUIRE(expired.size() == 1);
  CHECK(expired[0]->at == at(Duration::s(12)));
  CHECK(commands_at(r, "PING", *r.world->find("client1")).empty());  // none at resume, none before the pause
  const auto wrote = events_of(r, Ev::Wrote, "client1");
  REQUIRE(wrote.size() == 1);
  CHECK(wrote[0]->at > at(Duration::ms(12200)));
  // Its release at 12.2 s, Disconnected, waits for a connection: no DELETE before the reconnect.
  for (const Instant d : commands_at(r, "DELETE", *r.world->find("client1"))) CHECK(d > at(Duration::ms(12500)));
}

TEST_CASE("a ZooKeeper client paused past readTimeout writes while SUSPENDED: it learns the session expired only on reconnecting") {
  // Resumes at 12.3 s, after the server's expiry: the model once pinged at
  // resume and heard SESSION_EXPIRED at 12.302 s, stopping a write the real
  // client makes at 12.6 s, SUSPENDED until its reconnect at 13.3-14.3 s.
  const RunResult r = run_scenario(working("algorithm = \"zookeeper\"\nsession_timeout = \"10s\"\ntick_time = \"2s\"",
                                           "zk", "12590ms", pause_of("client1", "1s", "11300ms")));
  CHECK(r.verdict == kBroken);
  REQUIRE(events_of(r, Ev::Wrote, "client1").size() == 1);
}

TEST_CASE("the reconnect's random sleep is the client's own draw, and a scenario pins it: the expiry check comes after it") {
  // Resumes at 12 s (silent 11.992 s): reconnects at 13 s + the sleep. With
  // 300 ms, 13.292 s silent < 13.333 s: it connects, and the server (expired
  // at 12 s) answers SESSION_EXPIRED. With 400 ms, 13.392 s >= 13.333 s: the
  // send loop's check right after startConnect closes the session itself and
  // no CONNECT goes out (ClientCnxn.java:1199-1254 at release-3.9.3).
  const std::string lock = "algorithm = \"zookeeper\"\nsession_timeout = \"10s\"\ntick_time = \"2s\"\n";
  const RunResult told = run_scenario(working(lock + "reconnect_jitter = \"300ms\"", "zk", "20s",
                                              pause_of("client1", "1s", "11s")));
  const auto connects = commands_at(told, "CONNECT", *told.world->find("client1"));
  REQUIRE(connects.size() == 2);  // the session, then the reconnect
  CHECK(connects[1] == at(Duration::ms(13301)));
  const auto lost = events_of(told, Ev::Lost, "client1");
  REQUIRE(lost.size() == 1);
  CHECK(lost[0]->at == at(Duration::ms(13302)));
  const RunResult itself = run_scenario(working(lock + "reconnect_jitter = \"400ms\"", "zk", "20s",
                                                pause_of("client1", "1s", "11s")));
  CHECK(commands_at(itself, "CONNECT", *itself.world->find("client1")).size() == 1);
  const auto lost_itself = events_of(itself, Ev::Lost, "client1");
  REQUIRE(lost_itself.size() == 1);
  CHECK(lost_itself[0]->at == at(Duration::ms(13400)));
  // Unpinned, the sleep is drawn from the client's stream: a whole number of ms in [0, 999].
  const RunResult drawn = run_scenario(working(lock, "zk", "20s", pause_of("client1", "1s", "6900ms")));
  const auto again = commands_at(drawn, "CONNECT", *drawn.world->find("client1"));
  REQUIRE(again.size() == 2);
  CHECK(again[1] >= at(Duration::ms(8901)));
  CHECK(again[1] <= at(Duration::ms(9900)));
  CHECK((again[1] - at(Duration::ms(1))).whole_ms() * 1'000'000 == (again[1] - at(Duration::ms(1))).count_ns());
}

TEST_CASE("a Curator client cut off goes LOST at SUSPENDED plus the session timeout: the client's own check waits for its connect to time out") {
  // Partition at 1 s. SUSPENDED at 6.674 s (last heard 0.008 s + 6666 ms).
  // The reconnect at 7.674 s + the sleep blocks in select for connectTimeout
  // = T / 1 server = 10 s (ClientCnxn.java:1240-1243), so the client checks
  // its own expiry only after 17.674 s; Curator's ConnectionStateManager
  // injects Expired at SUSPENDED + T = 16.674 s (ConnectionStateManager.java:237-301
  // at apache-curator-5.9.0), for 3.9.3 and 3.9.2 alike.
  for (const char* client : {"3.9.3", "3.9.2"}) {
    INFO(client);
    const RunResult r = run_scenario(held("algorithm = \"zookeeper\"\nsession_timeout = \"10s\"\nclient = \"" +
                                              std::string(client) + "\"",
                                          "zk", "20s", partition_of("client1", "zk", "1s")));
    const auto lost = events_of(r, Ev::Lost, "client1");
    REQUIRE(lost.size() == 1);
    CHECK(lost[0]->at == at(Duration::ms(16674)));
  }
}

TEST_CASE("while SUSPENDED a ZooKeeper client sends connect attempts, not pings, and a healed partition lets a retransmitted one through") {
  // Partition 1 s .. 9 s, the reconnect sleep pinned at 0: SUSPENDED at 6.674 s,
  // the CONNECT at 7.674 s is lost, its SYN retransmitted 1 s later (8.674 s)
  // is lost too, the one 3 s after the first (10.674 s) gets through: the
  // session lives (the server would have expired it at 12 s), no LOST.
  const RunResult r = run_scenario(held("algorithm = \"zookeeper\"\nsession_timeout = \"10s\"\nreconnect_jitter = \"0s\"",
                                        "zk", "20s", partition_of("client1", "zk", "1s", "8s")));
  const std::vector<std::string> after_suspended = dropped_from(r, "client1", at(Duration::ms(6674)));
  REQUIRE(after_suspended.size() == 2);
  for (const std::string& d : after_suspended) CHECK(d == "partition: CONNECT timeout=10s session=1");
  const auto connects = commands_at(r, "CONNECT", *r.world->find("client1"));
  REQUIRE(connects.size() == 2);
  CHECK(connects[1] == at(Duration::ms(10675)));
  CHECK(events_of(r, Ev::Lost, "client1").empty());
  CHECK(events_of(r, Ev::Expired, "zk").empty());
  CHECK(r.verdict.empty());
}

// etcd, TTL 10 s, 1 ms links: the grant's reply comes at 0.002 s, and the
// lessor's loops start with the first KeepAlive (lease.go:312-315 at v3.6.14).
TEST_CASE("etcd's first keepalive goes at once, the next ones on the send loop's 500 ms grid a third of the TTL after each response") {
  // A fresh keepalive is due at once (nextKeepAlive: time.Now(), lease.go:297):
  // sent at 0.002 s, answered at 0.004 s, the next due at 0.004 + 10/3 s =
  // 3.337 s, sent on the loop's first pass after it (every retryConnWait =
  // 500 ms from 0.002 s, lease.go:586-619): 3.502 s; then due at 6.837 s, sent
  // at 7.002 s. The server hears them 1 ms later.
  const RunResult r = run_scenario(held("algorithm = \"etcd\"\nlease_ttl = \"10s\"", "etcd", "12s"));
  const auto keepalives = commands_at(r, "LEASE KEEPALIVE", *r.world->find("client1"));
  REQUIRE(keepalives.size() >= 4);
  CHECK(keepalives[0] == at(Duration::ms(3)));
  CHECK(keepalives[1] == at(Duration::ms(3503)));
  CHECK(keepalives[2] == at(Duration::ms(7003)));
  CHECK(keepalives[3] == at(Duration::ms(10503)));
}

TEST_CASE("an etcd holder paused before its second keepalive loses its lease a TTL after the first, sent at once") {
  // Paused at 3.4 s, before the keepalive due at 3.337 s goes out on the grid
  // at 3.502 s: the lease lives 10 s from the first keepalive (0.003 s), the
  // revoke loop (every 500 ms) deletes the key at 10.5 s, client2 holds it
  // then. client1 resumes at 11.9 s and writes at 12.006 s: stale. (A first
  // keepalive a third of the TTL after the grant, at 3.336 s, would have kept
  // the lease to 13.336 s, and the keepalive at resume renewed it.)
  const RunResult r = run_scenario(working("algorithm = \"etcd\"\nlease_ttl = \"10s\"", "etcd", "12s",
                                           pause_of("client1", "3400ms", "8500ms")));
  CHECK(r.verdict == kBroken);
  const auto expired = events_of(r, Ev::Expired, "etcd");
  REQUIRE(expired.size() == 1);
  CHECK(expired[0]->at == at(Duration::ms(10500)));
}

TEST_CASE("an etcd lease is a whole number of seconds: a fractional lease_ttl is refused with its file, line and key") {
  // clientv3's Grant(ctx, ttl int64) and the server's TTL are seconds (lease.go:215 at v3.6.14).
  CHECK_THROWS_WITH_AS(held("algorithm = \"etcd\"\nlease_ttl = \"2500ms\"", "etcd", "1s"),
                       doctest::Contains("held.toml:9: [lock] 'lease_ttl'"), ScenarioError);
  CHECK_THROWS_WITH_AS(held("algorithm = \"etcd\"\nlease_ttl = \"2.5s\"", "etcd", "1s"),
                       doctest::Contains("whole seconds"), ScenarioError);
  CHECK_NOTHROW(held("algorithm = \"etcd\"\nlease_ttl = \"3s\"", "etcd", "1s"));
}

// Consul, TTL 10 s: client1 is paused 25 s as it sends its write at about
// 1 s; the leader invalidates its session 2 x TTL after its creation, at
// about 20 s; client2, refused during a lock-delay, retries every 5 s
// (api/lock.go DefaultLockRetryTime).
TEST_CASE("Consul's api.Lock cannot ask for lock-delay 0: the Go client omits it and the agent applies 15 s, while a direct HTTP call can") {
  const std::string pause = "[[fault]]\non = \"client1 writing\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"25s\"\n";
  const std::string lock = "algorithm = \"consul\"\nsession_ttl = \"10s\"\nlock_delay = \"0s\"\nfencing = \"none\"\n";
  // api.Lock: session.go Create sends no LockDelay when it is 0, and the
  // agent's default of 15 s holds the key until about 35 s: client2 takes it
  // at its retry after that, after client1's late write at about 26 s. Safe.
  const Scenario api_lock = working(lock, "consul", "1s", pause);
  CHECK(api_lock.lock.options->handover() == Duration::s(35));  // 2 x TTL + the agent's 15 s
  const RunResult api = run_scenario(api_lock);
  CHECK(api.verdict.empty());
  CHECK(has_command(api, "consul", "LockDelay=15s"));
  const auto taken = events_of(api, Ev::Acquired, "client2");
  REQUIRE(taken.size() == 1);
  CHECK(taken[0]->at > at(Duration::s(35)));
  // PUT /v1/session/create with {"LockDelay": "0s"} by hand: no lock-delay,
  // client2 holds the key at once, and the late write is stale.
  const Scenario by_hand = working(lock + "flavour = \"http\"\n", "consul", "1s", pause);
  CHECK(by_hand.lock.options->handover() == Duration::s(20));
  const RunResult http = run_scenario(by_hand);
  CHECK(http.verdict == kBroken);
  CHECK(has_command(http, "consul", "LockDelay=0s"));
}

// Redisson's watchdog (redisson-4.7.0): client1 holds 40 s; its renewal at
// 10 s meets a partition that lasts until 25 s.
TEST_CASE("a Redisson renewal that times out is resent by the command executor before the next is scheduled") {
  // RedisExecutor resends a command with no response in `timeout` (3 s) up to
  // retryAttempts = 4 times, waiting EqualJitterDelay(1 s, 2 s).calcDelay(attempt)
  // first (BaseConfig.java:58, 62, 67; RedisExecutor.java:177, 466-483;
  // EqualJitterDelay.calcDelay): sends at 10 s, 13.5-14 s, 17.5-19 s,
  // 21.5-24 s and 25.5-29 s. The last gets through before the key's expiry
  // at 30 s: client1 keeps the lock, and only then is the next renewal
  // scheduled, 10 s on (RenewalTask.java:169-185).
  const RunResult r = run_scenario(held("algorithm = \"watchdog\"", "redis1", "40s",
                                        partition_of("client1", "redis1", "9s", "16s")));
  CHECK(r.verdict.empty());
  CHECK(dropped_from(r, "client1").size() == 4);
  const auto renewed = events_of(r, Ev::Renewed, "client1");
  REQUIRE(!renewed.empty());
  CHECK(renewed[0]->at > at(Duration::ms(25500)));
  CHECK(renewed[0]->at < at(Duration::ms(29100)));
  const auto taken = events_of(r, Ev::Acquired, "client2");
  REQUIRE(taken.size() == 1);
  CHECK(taken[0]->at > at(Duration::s(40)));
}

}  // namespace coordination_fidelity_test
