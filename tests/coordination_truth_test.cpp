// Grants judged by what the coordination services held (catalogue K7, for
// ZooKeeper, etcd, Chubby and Consul): each server states in the trace who
// holds the lock as that changes (Ev::Holder), and a client that returns
// from acquire while the service holds the lock for another, or for nobody,
// only believes it holds it. The judge blames the believer, never the holder
// whose grant the service kept, and the report says "believes".
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "harness/run.hpp"
#include "judge/checkers.hpp"
#include "reports/report.hpp"
#include "tests/support.hpp"

namespace coordination_truth_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

using enum ViolationKind;

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// One lock node, two clients: client1 asks at 0 and is paused `pause_after`
// later for `pause` (its grant, or the request that makes it, is on the
// wire), then works `work1`; client2 asks at 1 s and works `work2` before its write.
std::string paused_in_acquire(const std::string& lock, const std::string& node, const std::string& pause_after,
                              const std::string& pause, const std::string& work2, const std::string& duration,
                              const std::string& work1 = "1s") {
  return "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"" + duration + "\"\n[lock]\n" + lock +
         "\n[network]\ndelay = \"1ms\"\n[[node]]\nname = \"" + node +
         "\"\n[[client]]\nname = \"client1\"\nwork = \"" + work1 + "\"\n[[client]]\nname = \"client2\"\nstart = \"1s\"\nwork = \"" +
         work2 + "\"\n[[fault]]\non = \"client1 acquiring\"\nafter = \"" + pause_after +
         "\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"" + pause + "\"\n";
}

RunResult run_text(const std::string& text) { return run_scenario(parse_scenario(text, "t.toml")); }

// The owners the node named, in order (kNoProc: nobody).
std::vector<ProcId> holders(const RunResult& r, const std::string& node) {
  std::vector<ProcId> out;
  for (const TraceEvent* e : events_of(r, Ev::Holder, node)) out.push_back(e->owner);
  return out;
}

std::vector<const Violation*> of_kind(const RunResult& r, ViolationKind k) {
  std::vector<const Violation*> out;
  for (const Violation& v : r.violations)
    if (v.kind == k) out.push_back(&v);
  return out;
}

// client1 believed, client2 held: the overlap says so, the story says
// "believes", and client2's later write is no stale write.
void check_believer_is_client1(const RunResult& r, Instant believed_at) {
  const ProcId c1 = *r.world->find("client1");
  const auto beliefs = beliefs_not_grants(r.world->trace());
  REQUIRE(beliefs.size() == 1);
  CHECK(beliefs[0].client == c1);
  CHECK(beliefs[0].at == believed_at);
  CHECK(r.verdict == std::set{Overlap});  // the old judge also blamed client2's write as stale
  const auto overlap = of_kind(r, Overlap);
  REQUIRE(overlap.size() == 1);
  CHECK(has(english(overlap[0]->detail), "client2 held the lock and client1 believed it did"));
  const std::string text = text_report(r);
  CHECK(has(text, "client1 believes it has acquired the lock"));
  CHECK(has(text, "it holds nothing"));
  CHECK_FALSE(has(text, "client1 was granted"));
}

}  // namespace

TEST_CASE("ZooKeeper: the server names the owner of the lowest node, and a grant read after its session expired is a belief") {
  // client1's node is the lowest when it reads the children at 6 ms; the
  // answer is on the wire when it is paused at 7 ms. Its session expires at
  // 12 s (the tick after 10 s), its node goes, client2's is the lowest:
  // client2 holds the lock. client1 resumes at 20.007 s, reads the old
  // answer and returns from acquire. Its ping then finds the session gone
  // (the server closes an expired session's connection): Disconnected, it
  // reconnects 1-2 s later, is told the session expired, and gives up before
  // its write at 23 s. client2 writes at 24 s.
  const RunResult r = run_text(paused_in_acquire("algorithm = \"zookeeper\"\nsession_timeout = \"10s\"\ntick_time = \"2s\"",
                                                 "zk", "7ms", "20s", "12s", "40s", "3s"));
  const ProcId c1 = *r.world->find("client1"), c2 = *r.world->find("client2");
  CHECK(holders(r, "zk") == std::vector{c1, c2, kNoProc});
  const auto named = events_of(r, Ev::Holder, "zk");
  REQUIRE(named.size() == 3);
  CHECK(named[0]->key == "/lock");
  CHECK(named[1]->at == Instant::from_ns(Duration::s(12).count_ns()));
  check_believer_is_client1(r, Instant::from_ns(Duration::ms(20007).count_ns()));
}

TEST_CASE("etcd 3.4: the waiter whose key expired writes on a belief, and its write is the stale one") {
  // Z8 with writes: client2 is paused while it waits (0.5 s to 12.5 s); its
  // lease expires at 10.5 s and its key goes; client1 releases at 11.008 s
  // and the first-created key is client3's. client2 wakes, 3.4's Lock()
  // returns without looking at its own key, and client2 writes at 13.5 s.
  const std::string text = R"(title = "t"
about = "a"
source = "s"
duration = "30s"
[lock]
algorithm = "etcd"
lease_ttl = "10s"
version = "3.4"
first_token = 100
[network]
delay = "1ms"
[[node]]
name = "etcd"
[[client]]
name = "client1"
work = "11s"
[[client]]
name = "client2"
start = "100ms"
work = "1s"
[[client]]
name = "client3"
start = "200ms"
work = "5s"
[[fault]]
at = "500ms"
kind = "pause"
target = "client2"
duration = "12s"
)";
  const RunResult r = run_text(text);
  const ProcId c1 = *r.world->find("client1"), c2 = *r.world->find("client2"), c3 = *r.world->find("client3");
  // The first-created key under /lock/: client1's, then (client2's expired
  // while client1 held) client3's, then nobody's.
  CHECK(holders(r, "etcd") == std::vector{c1, c3, kNoProc});
  CHECK(events_of(r, Ev::Holder, "etcd")[0]->key == "/lock/");
  const auto beliefs = beliefs_not_grants(r.world->trace());
  REQUIRE(beliefs.size() == 1);
  CHECK(beliefs[0].client == c2);
  CHECK(r.verdict == std::set{Overlap, StaleWrite, LostUpdate});
  const auto stale = of_kind(r, StaleWrite);
  REQUIRE(stale.size() == 1);  // the old judge blamed client3's write, on client2's belief
  CHECK(stale[0]->processes == std::vector{c2, c3});
  CHECK(stale[0]->at == Instant::from_ns(Duration::ms(13505).count_ns()));
  CHECK(has(english(stale[0]->detail), "client3 was granted the lock at 11.012s"));
  CHECK(has(english(stale[0]->detail), "client2 only believed it held it"));
  const auto overlap = of_kind(r, Overlap);
  REQUIRE(overlap.size() == 1);
  CHECK(has(english(overlap[0]->detail), "client3 held the lock and client2 believed it did"));
  const std::string report = text_report(r);
  CHECK(has(report, "client2 believes it has acquired the lock on etcd (token 101)"));
}

TEST_CASE("Chubby: a grant answered before the session's lease ended, read after it, is a belief") {
  // The master grants client1 the lock at 2 ms; the answer is on the wire
  // when client1 is paused at 3 ms, for 40 s. The master answers its held
  // KeepAlive at 11 s, hears nothing more, and ends the session at 23 s; the
  // lock-delay (1 s) over, client2 holds the lock at 24 s. client1 reads the
  // grant at 40 s, and then its session's end.
  const RunResult r = run_text(
      paused_in_acquire("algorithm = \"chubby\"\nlock_delay = \"1s\"", "chubby", "3ms", "40s", "20s", "80s"));
  const ProcId c1 = *r.world->find("client1"), c2 = *r.world->find("client2");
  CHECK(holders(r, "chubby") == std::vector{c1, kNoProc, c2, kNoProc});
  const auto named = events_of(r, Ev::Holder, "chubby");
  REQUIRE(named.size() == 4);
  CHECK(named[0]->key == "/ls/cell/lock");
  CHECK(named[2]->at - named[1]->at == Duration::s(1));  // lock-delay holds nothing
  check_believer_is_client1(r, Instant::from_ns(Duration::ms(40003).count_ns()));
}

TEST_CASE("Consul: an acquire answered before the session was invalidated, read after it, is a belief") {
  // client1's PUT ?acquire succeeds at 4 ms; the answer is on the wire when
  // it is paused at 5 ms, for 25 s. Its session (TTL 10 s) is invalidated at
  // 20 s (2 x TTL unrenewed), the key released (lock-delay 0, which only a
  // direct HTTP call can ask for: flavour "http"), and client2's
  // acquire takes it. client1 resumes at 25 s and returns from Lock();
  // monitorLock then sees the key's Session is not its own.
  const RunResult r = run_text(paused_in_acquire(
      "algorithm = \"consul\"\nflavour = \"http\"\nsession_ttl = \"10s\"\nlock_delay = \"0s\"", "consul", "5ms", "25s", "10s", "60s"));
  const ProcId c1 = *r.world->find("client1"), c2 = *r.world->find("client2");
  CHECK(holders(r, "consul") == std::vector{c1, kNoProc, c2, kNoProc});
  CHECK(events_of(r, Ev::Holder, "consul")[0]->key == "service/lock");
  check_believer_is_client1(r, Instant::from_ns(Duration::ms(25005).count_ns()));
}

TEST_CASE("by hand: a Holder naming another client, or nobody, makes an Acquired a belief") {
  Trace t;
  const ProcId c1 = t.add_process("client1", ProcessRole::Client);
  const ProcId c2 = t.add_process("client2", ProcessRole::Client);
  const ProcId node = t.add_process("zk", ProcessRole::LockNode);
  const ProcId st = t.add_process("storage", ProcessRole::Storage);
  auto ev = hand_events(t, "/lock");
  ev(0, c1, Ev::Acquiring);
  ev(1, node, Ev::Holder, kNoProc, c1);       // client1's node is the lowest
  ev(100, node, Ev::Holder, kNoProc, kNoProc);  // its session expired: no node left
  ev(150, c2, Ev::Acquiring);
  ev(151, node, Ev::Holder, kNoProc, c2);
  ev(152, c2, Ev::Acquired);
  ev(300, c1, Ev::Acquired);  // client1 reads its old answer: a belief
  ev(400, st, Ev::StorageWrite, c1, kNoProc, 1);
  ev(500, st, Ev::StorageWrite, c2, kNoProc, 2);
  CheckOptions o;
  o.run_end = Instant::from_ns(1'000'000'000);
  const auto stale = check_stale_write(t, o);
  REQUIRE(stale.size() == 1);
  CHECK(stale[0].processes == std::vector{c1, c2});
  CHECK(stale[0].at == Instant::from_ns(400'000'000));
  REQUIRE(beliefs_not_grants(t).size() == 1);
  CHECK(beliefs_not_grants(t)[0].client == c1);
  // The same trace with client1's node still the lowest: a grant.
  Trace held;
  const ProcId h1 = held.add_process("client1", ProcessRole::Client);
  const ProcId hn = held.add_process("zk", ProcessRole::LockNode);
  TraceEvent a{.at = Instant::from_ns(1'000'000), .process = hn, .kind = Ev::Holder, .owner = h1, .key = "/lock"};
  held.record(std::move(a));
  TraceEvent b{.at = Instant::from_ns(2'000'000), .process = h1, .kind = Ev::Acquired};
  held.record(std::move(b));
  CHECK(beliefs_not_grants(held).empty());
}

}  // namespace coordination_truth_test
