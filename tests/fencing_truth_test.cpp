// Fenced reads (catalogue K9), grants judged by what the lock service held
// (K7), and the report's words for them.
#include <doctest/doctest.h>

#include "harness/run.hpp"
#include "harness/scenario_writer.hpp"
#include "judge/checkers.hpp"
#include "reports/report.hpp"
#include "tests/support.hpp"

namespace fencing_truth_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

bool has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

using enum ViolationKind;

}  // namespace

// ---- K9: fencing on writes only leaves the read-modify-write window ---------

TEST_CASE("fencing on writes only: a holder paused between the next holder's read and write gets its write in") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause-fenced-window.toml"));
  CHECK(r.verdict == std::set{Overlap, StaleWrite, LostUpdate});
  // client1's write with 33 lands after client2's read with 34: accepted.
  const auto writes = events_of(r, Ev::StorageWrite, "storage");
  REQUIRE(writes.size() == 2);
  CHECK(writes[0]->peer == *r.world->find("client1"));
  CHECK(writes[0]->token == 33);
  CHECK(writes[1]->token == 34);
  CHECK(events_of(r, Ev::StorageReject).empty());
}

TEST_CASE("fenced reads close the window: the read's token counts as seen, the older write is refused") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause-fenced-window-fenced-reads.toml"));
  CHECK(r.verdict == std::set{Overlap});
  const auto reads = events_of(r, Ev::StorageRead, "storage");
  REQUIRE(reads.size() == 2);
  CHECK(reads[0]->token == 33);
  CHECK(reads[1]->token == 34);
  const auto rejects = events_of(r, Ev::StorageReject, "storage");
  REQUIRE(rejects.size() == 1);
  CHECK(rejects[0]->peer == *r.world->find("client1"));
  CHECK(rejects[0]->token == 33);
  CHECK(rejects[0]->key.empty());  // a write, not a read
  const std::string text = text_report(r);
  CHECK(has(text, "storage rejects client1's write of counter = 1: token 33 is lower than 34, the highest seen"));
  CHECK(has(text, "Fencing kept the data safe: storage rejected 1 write carrying a superseded token"));
}

TEST_CASE("a fenced read with a superseded token is refused, and the reader writes nothing") {
  // client1 is paused once it has the lock (token 33), past its lease and
  // past client2's read with 34; its own read then comes with 33.
  const std::string text = R"(title = "t"
about = "a"
source = "s"
duration = "60s"
[lock]
algorithm = "redis-single"
ttl = "30s"
fencing = "token"
first_token = 33
[network]
delay = "1ms"
[storage]
fenced_reads = true
[[node]]
name = "redis1"
[[client]]
name = "client1"
work = "500ms"
[[client]]
name = "client2"
start = "31s"
work = "1s"
[[fault]]
on = "client1 acquired"
kind = "pause"
target = "client1"
duration = "31500ms"
)";
  const RunResult r = run_scenario(parse_scenario(text, "x.toml"));
  const auto rejects = events_of(r, Ev::StorageReject, "storage");
  REQUIRE(rejects.size() == 1);
  CHECK(rejects[0]->key == "read");
  CHECK(rejects[0]->token == 33);
  CHECK(events_of(r, Ev::Writing, "client1").empty());
  CHECK(events_of(r, Ev::Wrote, "client2").size() == 1);
  CHECK_FALSE(r.verdict.count(StaleWrite));
  CHECK_FALSE(r.verdict.count(LostUpdate));
  const std::string report = text_report(r);
  CHECK(has(report, "storage refuses client1's read (token 33): token 33 is lower than 34, the highest seen"));
  CHECK(has(report, "client1 is told its read was refused"));
  CHECK(has(report, "storage rejected 1 read carrying a superseded token"));
}

TEST_CASE("without fenced reads the same schedule's read is not checked") {
  Scenario s = catalogue("scenarios/kleppmann/gc-pause-fenced-window-fenced-reads.toml");
  s.storage.fenced_reads = false;
  const RunResult r = run_scenario(s);
  CHECK(r.verdict == std::set{Overlap, StaleWrite, LostUpdate});
  for (const TraceEvent* e : events_of(r, Ev::StorageRead)) CHECK(e->token == -1);
}

TEST_CASE("fenced_reads needs token fencing, and says so with the file, line and key") {
  const std::string text =
      "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"60s\"\n\n[lock]\nalgorithm = \"redis-single\"\n"
      "ttl = \"10s\"\n\n[storage]\nfenced_reads = true\n\n[[node]]\nname = \"redis1\"\n\n[[client]]\nname = \"c1\"\n";
  try {
    parse_scenario(text, "x.toml");
    FAIL("accepted");
  } catch (const ScenarioError& e) {
    const std::string m = e.what();
    CHECK(m.rfind("x.toml:11: [storage] 'fenced_reads'", 0) == 0);
    CHECK(has(m, "fencing = \"token\""));
  }
  const Scenario s = parse_scenario(
      text.substr(0, text.find("ttl")) + "ttl = \"10s\"\nfencing = \"token\"\n" + text.substr(text.find("\n\n[storage]")),
      "x.toml");
  CHECK(s.storage.fenced_reads);
  CHECK(has(to_toml(s), "fenced_reads = true"));
}

// ---- K7: a belief is not a grant -------------------------------------------

TEST_CASE("K7: the stale write is the believer's, blamed on the grant the service held") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/redlock-pause-in-flight-node-v5.toml"));
  CHECK(r.verdict == std::set{Overlap, StaleWrite, LostUpdate});
  const ProcId c1 = *r.world->find("client1"), c2 = *r.world->find("client2");
  std::vector<const Violation*> stale;
  for (const Violation& v : r.violations)
    if (v.kind == StaleWrite) stale.push_back(&v);
  REQUIRE(stale.size() == 1);
  CHECK(stale[0]->processes == std::vector{c1, c2});
  CHECK(has(english(stale[0]->detail), "client2 was granted the lock at 11.002s"));
  CHECK(has(english(stale[0]->detail), "client1 only believed it held it"));
  CHECK_FALSE(has(english(stale[0]->detail), "client1 was granted"));
  const auto beliefs = beliefs_not_grants(r.world->trace());
  REQUIRE(beliefs.size() == 1);
  CHECK(beliefs[0].client == c1);
  const std::string text = text_report(r);
  CHECK(has(text, "client1 believes it has acquired the lock"));
  CHECK(has(text, "the lock service held none of client1's keys by then"));
}

TEST_CASE("a grant the service holds is no belief, and where no node names a holder every grant counts") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/redlock-pause-in-flight.toml"));
  CHECK(beliefs_not_grants(r.world->trace()).empty());
  const RunResult z = run_scenario(catalogue("scenarios/zookeeper/session-expiry-pause.toml"));
  CHECK(beliefs_not_grants(z.world->trace()).empty());
}

TEST_CASE("by hand: an Acquired after every entry of the client's expired is a belief, and its write is stale") {
  Trace t;
  const ProcId c1 = t.add_process("client1", ProcessRole::Client);
  const ProcId c2 = t.add_process("client2", ProcessRole::Client);
  const ProcId node = t.add_process("redis1", ProcessRole::LockNode);
  const ProcId st = t.add_process("storage", ProcessRole::Storage);
  auto ev = hand_events(t, "lock");
  ev(0, c1, Ev::Acquiring);
  ev(1, node, Ev::Command, c1, c1);       // SET lock <c1's value>: the node holds it
  ev(100, node, Ev::Expired, kNoProc, c1);  // gone while client1 waits for the reply
  ev(200, c2, Ev::Acquiring);
  ev(201, node, Ev::Command, c2, c2);
  ev(202, c2, Ev::Acquired);
  ev(300, c1, Ev::Acquired);  // client1 reads its old reply: a belief
  ev(400, st, Ev::StorageWrite, c1, kNoProc, 1);
  ev(500, st, Ev::StorageWrite, c2, kNoProc, 2);
  CheckOptions o;
  o.run_end = Instant::from_ns(1'000'000'000);
  const auto stale = check_stale_write(t, o);
  REQUIRE(stale.size() == 1);  // client1's; client2's write is the holder's
  CHECK(stale[0].processes == std::vector{c1, c2});
  CHECK(stale[0].at == Instant::from_ns(400'000'000));
  const auto overlap = check_overlap(t, o);
  REQUIRE(overlap.size() == 1);
  CHECK(has(english(overlap[0].detail), "client2 held the lock and client1 believed it did"));
  REQUIRE(beliefs_not_grants(t).size() == 1);
}

// ---- K7 with a quorum: Redlock's grant is a majority of its masters -----------

TEST_CASE("Redlock: a client whose value is on two of five nodes when it returns from acquire only believes it holds the lock") {
  // node-redlock v5 as in K7, but redis4 and redis5 are paused from 9 s to
  // 16 s, so client1's keys there are not yet expired when it reads its
  // five OKs at 15.001 s: two nodes of five hold its value, client2's on
  // redis1-3 since 11.002 s. One node is not a grant: client1's write is
  // the stale one, blamed on client2's grant.
  Scenario s = catalogue("scenarios/kleppmann/redlock-pause-in-flight-node-v5.toml");
  for (const char* node : {"redis4", "redis5"}) {
    FaultSpec f;
    f.kind = FaultKind::Pause;
    f.at = Duration::s(9);
    f.target = node;
    f.duration = Duration::s(7);
    s.faults.push_back(f);
  }
  const RunResult r = run_scenario(s);
  CHECK(r.world->trace().grant_quorum() == 3);
  const ProcId c1 = *r.world->find("client1"), c2 = *r.world->find("client2");
  const auto beliefs = beliefs_not_grants(r.world->trace());
  REQUIRE(beliefs.size() == 1);
  CHECK(beliefs[0].client == c1);
  std::vector<const Violation*> stale;
  for (const Violation& v : r.violations)
    if (v.kind == StaleWrite) stale.push_back(&v);
  REQUIRE(stale.size() == 1);  // one node sufficing, client2's write was blamed on client1's "grant"
  CHECK(stale[0]->processes == std::vector{c1, c2});
  CHECK(stale[0]->at == Instant::from_ns(Duration::ms(16004).count_ns()));
  CHECK(has(english(stale[0]->detail), "client2 was granted the lock at 11.002s"));
  CHECK(has(english(stale[0]->detail), "when the lock service held its entries on only 2 of the 3 nodes a grant needs"));
  const std::string text = text_report(r);
  CHECK(has(text, "client1 believes it has acquired the lock on redis1,redis2,redis3,redis4,redis5"));
  CHECK(has(text, "but it does not hold it: the lock service held client1's keys on only 2 of the 3 nodes a grant needs by then"));
}

TEST_CASE("by hand: with a quorum of 2, a client's value on one node of three is a belief, on two a grant") {
  for (const int holding : {1, 2}) {
    INFO(holding);
    Trace t;
    t.set_grant_quorum(2);
    const ProcId c1 = t.add_process("client1", ProcessRole::Client);
    std::vector<ProcId> nodes;
    for (const char* n : {"redis1", "redis2", "redis3"}) nodes.push_back(t.add_process(n, ProcessRole::LockNode));
    std::int64_t ms = 0;
    auto record = [&](ProcId p, Ev kind, ProcId peer, ProcId owner) {
      TraceEvent e;
      e.at = Instant::from_ns(++ms * 1'000'000);
      e.process = p;
      e.kind = kind;
      e.peer = peer;
      e.owner = owner;
      e.key = "lock";
      t.record(std::move(e));
    };
    for (int i = 0; i < holding; ++i) record(nodes[static_cast<std::size_t>(i)], Ev::Command, c1, c1);
    record(c1, Ev::Acquired, kNoProc, kNoProc);
    CHECK(beliefs_not_grants(t).size() == (holding < 2 ? 1u : 0u));
  }
}

TEST_CASE("by hand: what the service holds is kept per node and key, and a node holding two of a client's keys counts once") {
  Trace t;
  t.set_grant_quorum(2);
  const ProcId c1 = t.add_process("client1", ProcessRole::Client);
  const ProcId n1 = t.add_process("redis1", ProcessRole::LockNode);
  const ProcId n2 = t.add_process("redis2", ProcessRole::LockNode);
  std::int64_t ms = 0;
  auto record = [&](ProcId p, Ev kind, ProcId owner, std::string key) {
    TraceEvent e;
    e.at = Instant::from_ns(++ms * 1'000'000);
    e.process = p;
    e.kind = kind;
    e.peer = p == c1 ? kNoProc : c1;
    e.owner = owner;
    e.key = std::move(key);
    t.record(std::move(e));
  };
  record(n1, Ev::Command, c1, "lock");
  record(n1, Ev::Command, c1, "lock:other");  // a second key on the same node: still one node
  record(c1, Ev::Acquired, kNoProc, "");
  record(n2, Ev::Expired, c1, "lock:other");  // redis2 never held it: nothing changes
  record(n2, Ev::Command, c1, "lock");
  record(c1, Ev::Acquired, kNoProc, "");      // redis1 and redis2: a grant
  record(n1, Ev::Expired, c1, "lock:other");  // redis1 still holds "lock"
  record(c1, Ev::Acquired, kNoProc, "");      // a grant still
  record(n2, Ev::KeyDeleted, c1, "lock");
  record(c1, Ev::Acquired, kNoProc, "");      // redis1 alone
  const auto beliefs = beliefs_not_grants(t);
  REQUIRE(beliefs.size() == 2);
  CHECK(beliefs[0].seq == 2);
  CHECK(beliefs[0].held == 1);
  CHECK(beliefs[1].seq == 9);
  CHECK(beliefs[1].held == 1);
}

// ---- a write in token order before the next holder touches the storage ---------

TEST_CASE("by hand: a superseded holder's write in token order, before the next holder touches the storage, is not stale") {
  // client1 (token 33) is superseded by client2 (token 34) at 200 ms. Its
  // write at 300 ms comes before client2 has read or written anything: the
  // storage orders it wholly before client2's critical section (client2's
  // read sees it), so no update can be lost through it. Each variant below
  // takes away one part of that and is stale again.
  struct Case {
    const char* what;
    Ev next_first;             // what client2 does at the storage before client1's write (Fault: nothing)
    std::int64_t token;        // client1's write's token
    std::int64_t seen_before;  // a token the storage accepted earlier (-1: none)
    std::size_t stale;
  };
  for (const Case& c : {Case{"in order, before client2 touched it", Ev::Fault, 33, -1, 0},
                        Case{"client2's read refused first: it changed nothing", Ev::StorageReject, 33, -1, 0},
                        Case{"after client2's read (K9's window)", Ev::StorageRead, 33, -1, 1},
                        Case{"no token: nothing orders it", Ev::Fault, -1, -1, 1},
                        Case{"a token below one the storage has seen", Ev::Fault, 33, 40, 1}}) {
    INFO(c.what);
    Trace t;
    const ProcId c1 = t.add_process("client1", ProcessRole::Client);
    const ProcId c2 = t.add_process("client2", ProcessRole::Client);
    const ProcId c3 = t.add_process("client3", ProcessRole::Client);
    const ProcId node = t.add_process("redis1", ProcessRole::LockNode);
    const ProcId st = t.add_process("storage", ProcessRole::Storage);
    auto ev = hand_events(t, "lock");
    if (c.seen_before >= 0) ev(0, st, Ev::StorageWrite, c3, kNoProc, 1, c.seen_before);  // before any grant: judged by nobody
    ev(1, node, Ev::Command, c1, c1);
    ev(2, c1, Ev::Acquired);
    ev(100, node, Ev::Expired, kNoProc, c1);
    ev(200, node, Ev::Command, c2, c2);
    ev(201, c2, Ev::Acquired);
    if (c.next_first != Ev::Fault) ev(250, st, c.next_first, c2, kNoProc, 0);
    ev(300, st, Ev::StorageWrite, c1, kNoProc, 1, c.token);
    ev(400, st, Ev::StorageRead, c2, kNoProc, 1, 34);
    ev(500, st, Ev::StorageWrite, c2, kNoProc, 2, 34);
    CheckOptions o;
    o.run_end = Instant::zero() + Duration::s(1);
    const auto stale = check_stale_write(t, o);
    CHECK(stale.size() == c.stale);
    // Once client2 has touched the storage, a second write of client1 is stale whatever its token.
    ev(600, st, Ev::StorageWrite, c1, kNoProc, 3, 35);
    CHECK(check_stale_write(t, o).size() == c.stale + 1);
  }
}

}  // namespace fencing_truth_test
