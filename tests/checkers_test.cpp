// Each checker on small traces built by hand: it must find what is there and
// nothing that is not.
#include <doctest/doctest.h>

#include <set>

#include "judge/checkers.hpp"
#include "sim/word_ids.hpp"
#include "tests/support.hpp"

namespace checkers_test {

using namespace locksim;
using locksim::testing::english;

namespace {

struct T {
  Trace trace;
  ProcId c1 = trace.add_process("client1", ProcessRole::Client);
  ProcId c2 = trace.add_process("client2", ProcessRole::Client);
  ProcId c3 = trace.add_process("client3", ProcessRole::Client);
  ProcId redis = trace.add_process("redis1", ProcessRole::LockNode);
  ProcId storage = trace.add_process("storage", ProcessRole::Storage);

  T& ev(std::int64_t ms, ProcId p, Ev kind, ProcId peer = kNoProc, std::int64_t value = 0, ProcId owner = kNoProc,
        std::int64_t token = -1, std::string key = {}) {
    testing::record_event(trace, ms, p, kind, peer, owner, value, token, std::move(key));
    return *this;
  }
  // A client's lock life: acquiring, acquired at `from`, releasing at `to`.
  T& holds(ProcId c, std::int64_t from, std::int64_t to) {
    ev(from, c, Ev::Acquiring).ev(from, c, Ev::Acquired);
    return ev(to, c, Ev::Releasing).ev(to, c, Ev::Released);
  }
  T& write(std::int64_t ms, ProcId c, std::int64_t value, std::int64_t token = -1) {
    return ev(ms, storage, Ev::StorageWrite, c, value, kNoProc, token);
  }
  T& reject(std::int64_t ms, ProcId c, std::int64_t value, std::int64_t token = -1) {
    return ev(ms, storage, Ev::StorageReject, c, value, kNoProc, token);
  }
  T& deleted(std::int64_t ms, ProcId requester, ProcId owner) {
    return ev(ms, redis, Ev::KeyDeleted, requester, 0, owner, -1, "lock");
  }
};

CheckOptions until(std::int64_t ms, std::optional<Duration> ttl = std::nullopt) {
  CheckOptions o;
  o.run_end = Instant::from_ns(ms * 1'000'000);
  o.ttl = ttl;
  return o;
}

Instant at_ms(std::int64_t ms) { return Instant::from_ns(ms * 1'000'000); }

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::set<ViolationKind> kinds(const std::vector<Violation>& vs) {
  std::set<ViolationKind> out;
  for (const Violation& v : vs) out.insert(v.kind);
  return out;
}

}  // namespace

// ---- overlap ------------------------------------------------------------------

TEST_CASE("two clients holding at once is an overlap, over exactly the shared interval") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(50, t.c2, Ev::Acquired).ev(100, t.c1, Ev::Releasing).ev(200, t.c2, Ev::Releasing);
  const auto v = check_overlap(t.trace, until(300));
  REQUIRE(v.size() == 1);
  CHECK(v[0].kind == ViolationKind::Overlap);
  CHECK(v[0].at == at_ms(50));
  CHECK(v[0].until == at_ms(100));
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
  CHECK(english(v[0].detail) == "client1 and client2 both held the lock from 0.050s to 0.100s");
}

TEST_CASE("a release and the next acquire at the same instant are not an overlap") {
  T t;
  t.holds(t.c1, 0, 100).holds(t.c2, 100, 200).holds(t.c3, 200, 300);
  CHECK(check_overlap(t.trace, until(400)).empty());
}

TEST_CASE("a crash or a noticed loss ends a critical section") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired).ev(10, t.c3, Ev::Acquiring).ev(50, t.c1, Ev::Crashed);
  t.ev(60, t.c3, Ev::Acquired).ev(70, t.c3, Ev::Lost);
  t.holds(t.c2, 80, 200);
  CHECK(check_overlap(t.trace, until(300)).empty());
}

TEST_CASE("a critical section still open when the run ends lasts until the end") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired);
  t.holds(t.c2, 500, 600);
  const auto v = check_overlap(t.trace, until(1000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(500));
  CHECK(v[0].until == at_ms(600));
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
}

TEST_CASE("three clients holding at once give one overlap per pair, earlier acquirer first") {
  T t;
  t.ev(0, t.c3, Ev::Acquired).ev(10, t.c1, Ev::Acquired).ev(20, t.c2, Ev::Acquired);
  t.ev(30, t.c3, Ev::Releasing).ev(40, t.c1, Ev::Releasing).ev(50, t.c2, Ev::Releasing);
  const auto v = check_overlap(t.trace, until(100));
  REQUIRE(v.size() == 3);
  CHECK(v[0].processes == std::vector{t.c3, t.c1});
  CHECK(v[0].at == at_ms(10));
  CHECK(v[0].until == at_ms(30));
  CHECK(v[1].processes == std::vector{t.c3, t.c2});
  CHECK(v[1].at == at_ms(20));
  CHECK(v[1].until == at_ms(30));
  CHECK(v[2].processes == std::vector{t.c1, t.c2});
  CHECK(v[2].at == at_ms(20));
  CHECK(v[2].until == at_ms(40));
}

TEST_CASE("one long critical section overlapping two later ones is two overlaps") {
  T u;
  u.ev(0, u.c1, Ev::Acquired).holds(u.c2, 100, 200).holds(u.c3, 300, 400).ev(450, u.c1, Ev::Releasing);
  u.holds(u.c2, 500, 600);
  const auto v = check_overlap(u.trace, until(1000));
  REQUIRE(v.size() == 2);
  CHECK(v[0].processes == std::vector{u.c1, u.c2});
  CHECK(v[0].until == at_ms(200));
  CHECK(v[1].processes == std::vector{u.c1, u.c3});
  CHECK(v[1].at == at_ms(300));
}

TEST_CASE("a client acquiring again while it holds is not an overlap with itself") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(10, t.c1, Ev::Acquired).ev(20, t.c1, Ev::Releasing);
  t.holds(t.c1, 30, 40);
  CHECK(check_overlap(t.trace, until(100)).empty());
  // ...but its section runs from the first grant: another client in between overlaps it.
  T u;
  u.ev(0, u.c1, Ev::Acquired).ev(5, u.c2, Ev::Acquired).ev(8, u.c2, Ev::Releasing);
  u.ev(10, u.c1, Ev::Acquired).ev(20, u.c1, Ev::Releasing);
  const auto v = check_overlap(u.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(5));
  CHECK(v[0].until == at_ms(8));
}

TEST_CASE("only client events make critical sections") {
  T t;
  t.ev(0, t.redis, Ev::Acquired).holds(t.c1, 10, 20);
  CHECK(check_overlap(t.trace, until(100)).empty());
}

TEST_CASE("many sequential critical sections are checked quickly and find nothing") {
  T t;
  const ProcId cs[] = {t.c1, t.c2, t.c3};
  for (std::int64_t i = 0; i < 60'000; ++i) t.holds(cs[i % 3], i, i + 1);
  CHECK(check_overlap(t.trace, until(100'000)).empty());
  CHECK(check_stuck(t.trace, until(100'000, Duration::ms(1))).empty());
}

// ---- stale-write --------------------------------------------------------------

TEST_CASE("a write accepted from a superseded holder is a stale write naming both clients") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(100, t.c2, Ev::Acquired).write(150, t.c2, 1).ev(200, t.c2, Ev::Releasing);
  t.write(400, t.c1, 2, 33).ev(500, t.c1, Ev::Releasing);
  const auto v = check_stale_write(t.trace, until(1000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].kind == ViolationKind::StaleWrite);
  CHECK(v[0].at == at_ms(400));
  CHECK(v[0].until == at_ms(400));
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
  CHECK(english(v[0].detail) ==
        "storage accepted client1's write (token 33) at 0.400s, but client2 was granted the lock at 0.100s, "
        "after client1 (0.000s)");
}

TEST_CASE("writes by the latest holder are not stale, and rejected writes never are") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).write(50, t.c1, 1).ev(100, t.c1, Ev::Releasing);
  t.ev(200, t.c2, Ev::Acquired).write(250, t.c2, 2).reject(260, t.c1, 3);
  t.ev(300, t.c2, Ev::Releasing);
  CHECK(check_stale_write(t.trace, until(1000)).empty());
}

TEST_CASE("a stale write names the latest of the clients granted the lock after the writer") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(100, t.c2, Ev::Acquired).ev(200, t.c3, Ev::Acquired).write(300, t.c1, 1);
  const auto v = check_stale_write(t.trace, until(1000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].processes == std::vector{t.c1, t.c3});
  CHECK(contains(english(v[0].detail), "client3 was granted the lock at 0.200s"));
}

TEST_CASE("a writer granted the lock again after the other client is not stale") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(100, t.c2, Ev::Acquired).ev(150, t.c2, Ev::Releasing);
  t.ev(200, t.c1, Ev::Acquired).write(300, t.c1, 1);
  CHECK(check_stale_write(t.trace, until(1000)).empty());
}

TEST_CASE("a write from a client that never acquired, or grants at the same instant, are not stale") {
  T t;
  t.ev(0, t.c2, Ev::Acquired).write(10, t.c1, 1);  // client1 never acquired
  CHECK(check_stale_write(t.trace, until(100)).empty());
  T u;
  u.ev(0, u.c1, Ev::Acquired).ev(0, u.c2, Ev::Acquired).write(10, u.c1, 1);  // not granted *after* client1
  CHECK(check_stale_write(u.trace, until(100)).empty());
}

// ---- lost-update --------------------------------------------------------------

TEST_CASE("two accepted increments of the same value are a lost update") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 0).write(10, t.c1, 1).write(20, t.c2, 1);
  const auto v = check_lost_update(t.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].kind == ViolationKind::LostUpdate);
  CHECK(v[0].at == at_ms(20));
  CHECK(v[0].processes == std::vector{t.c2, t.c1});
  CHECK(english(v[0].detail) == "counter is 1 after 2 accepted increments: client2's write of 1 at 0.020s overwrote client1's 1");
}

TEST_CASE("sequential increments from a non-zero start are not a lost update") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 41).write(10, t.c1, 42).write(20, t.c2, 43).write(30, t.c3, 44);
  CHECK(check_lost_update(t.trace, until(100)).empty());
  T u;
  u.ev(0, u.storage, Ev::Started, kNoProc, 41).write(10, u.c1, 1);  // ignores the initial value
  const auto v = check_lost_update(u.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].processes == std::vector{u.c1});
  CHECK(contains(english(v[0].detail), "counter is 1 after 1 accepted increment from 41"));
  CHECK(contains(english(v[0].detail), "overwrote the initial 41"));
}

TEST_CASE("a trace has at most one lost update, at the first write that lost one, with the final count") {
  T t;
  t.write(10, t.c1, 1).write(20, t.c2, 1).write(30, t.c1, 2).write(40, t.c3, 2);
  const auto v = check_lost_update(t.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(20));
  CHECK(contains(english(v[0].detail), "counter is 2 after 4 accepted increments"));
}

TEST_CASE("no accepted writes, or only rejected ones, are not a lost update") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 5);
  CHECK(check_lost_update(t.trace, until(100)).empty());
  t.reject(10, t.c1, 1, 3).reject(20, t.c2, 1, 4);
  CHECK(check_lost_update(t.trace, until(100)).empty());
}

TEST_CASE("a fenced run that overlaps but rejects the stale write has no stale write or lost update") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 0);
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired, kNoProc, 0, kNoProc, 33);
  t.ev(0, t.c1, Ev::Read, kNoProc, 0);  // then client1 pauses
  t.ev(100, t.c2, Ev::Acquiring).ev(100, t.c2, Ev::Acquired, kNoProc, 0, kNoProc, 34);
  t.write(150, t.c2, 1, 34).ev(200, t.c2, Ev::Releasing).ev(200, t.c2, Ev::Released);
  t.reject(400, t.c1, 1, 33).ev(400, t.c1, Ev::WriteRejected).ev(500, t.c1, Ev::Releasing);
  const auto v = check_trace(t.trace, until(1000));
  CHECK(kinds(v) == std::set{ViolationKind::Overlap});
  CHECK(check_stale_write(t.trace, until(1000)).empty());
  CHECK(check_lost_update(t.trace, until(1000)).empty());
}

// ---- foreign-release ----------------------------------------------------------

TEST_CASE("deleting another client's key during a release is a foreign release") {
  T t;
  t.ev(0, t.c1, Ev::Releasing).deleted(1, t.c1, t.c2).ev(2, t.c1, Ev::Released);
  const auto v = check_foreign_release(t.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].kind == ViolationKind::ForeignRelease);
  CHECK(v[0].at == at_ms(1));
  CHECK(v[0].until == at_ms(1));
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
  CHECK(english(v[0].detail) == "client1's release deleted 'lock' on redis1, which held client2's lock");
}

TEST_CASE("deleting your own key, or someone's key outside a release, is not a foreign release") {
  T t;
  t.ev(0, t.c1, Ev::Releasing).deleted(1, t.c1, t.c1).ev(2, t.c1, Ev::Released);
  // An expired holder's key removed while acquiring (the SETNX-timestamp recipe).
  t.ev(10, t.c2, Ev::Acquiring).deleted(11, t.c2, t.c3);
  // A release that already finished does not cover a later deletion.
  t.deleted(20, t.c1, t.c3);
  // Nor does one that failed, one cut short by a crash, or one followed by a new acquire.
  t.ev(30, t.c2, Ev::Releasing).ev(31, t.c2, Ev::ReleaseFailed).deleted(32, t.c2, t.c3);
  t.ev(40, t.c3, Ev::Releasing).ev(41, t.c3, Ev::Crashed).deleted(42, t.c3, t.c1);
  t.ev(50, t.c1, Ev::Releasing).ev(51, t.c1, Ev::Acquiring).deleted(52, t.c1, t.c2);
  // A key with no known owner.
  t.ev(60, t.c2, Ev::Releasing).deleted(61, t.c2, kNoProc);
  CHECK(check_foreign_release(t.trace, until(100)).empty());
}

// ---- stuck --------------------------------------------------------------------

TEST_CASE("waiting with nobody holding for longer than 2 x TTL is stuck, shorter is not") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(25'000, t.c1, Ev::Acquired);
  const auto v = check_stuck(t.trace, until(60'000, Duration::s(10)));  // 25 s > 20 s
  REQUIRE(v.size() == 1);
  CHECK(v[0].kind == ViolationKind::Stuck);
  CHECK(v[0].at == at_ms(0));
  CHECK(v[0].until == at_ms(25'000));
  CHECK(v[0].processes == std::vector{t.c1});
  CHECK(english(v[0].detail) == "client1 waited 25s to acquire while nobody held the lock (liveness window 20s)");
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(15))).empty());  // 25 s < 30 s
}

TEST_CASE("a judge states its facts, not sentences: who waited, how long, and the window, as values") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c2, Ev::Acquiring).ev(25'000, t.c1, Ev::Acquired);
  const auto v = check_stuck(t.trace, until(60'000, Duration::s(10)));
  REQUIRE(v.size() == 1);
  const Phrase& d = v[0].detail;
  CHECK(d.id == W::ViolationStuckWindow);
  REQUIRE(d.find("who"));
  CHECK(d.find("who")->type == Phrase::Arg::Type::Names);
  CHECK(d.find("who")->text == "client1\nclient2");
  CHECK(d.find("d")->number == Duration::s(25).count_ns());
  CHECK(d.find("window")->number == Duration::s(20).count_ns());
  // Each language joins the names its own way.
  CHECK(say(Lang::En, d) == "client1 and client2 waited 25s to acquire while nobody held the lock (liveness window 20s)");
  CHECK(say(Lang::Zh, d).find("client1 和 client2") != std::string::npos);

  // A lost update's fact holds the first bad write as a phrase of its own.
  T u;
  u.ev(0, u.storage, Ev::Started, kNoProc, 0).write(10, u.c1, 1).write(20, u.c2, 1);
  const auto lost = check_lost_update(u.trace, until(100));
  REQUIRE(lost.size() == 1);
  CHECK(lost[0].detail.id == W::ViolationCounter);
  REQUIRE(lost[0].detail.find("how"));
  const Phrase& how = lost[0].detail.parts.at(static_cast<std::size_t>(lost[0].detail.find("how")->number));
  CHECK(how.id == W::ViolationOverwrote);
  CHECK(how.find("writer")->text == "client1");
  CHECK(how.find("previous")->number == 1);
}

TEST_CASE("a liveness window overrides the TTL default") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(25'000, t.c1, Ev::Acquired);
  CheckOptions o = until(60'000, Duration::s(30));
  o.liveness_window = Duration::s(5);
  CHECK(check_stuck(t.trace, o).size() == 1);
  o.liveness_window = Duration::s(25);  // exactly the window is not longer than it
  CHECK(check_stuck(t.trace, o).empty());
}

TEST_CASE("a client frozen by a pause inside its acquire is not waiting on the lock: not stuck while frozen") {
  // explore --exhaustive on redisson/fenced-lock-failover-guard: client1 paused
  // 60 s as it asks, client2 takes and releases the lock at 8 s, the run ends
  // with client1 still frozen — the lock was free for anyone who could ask.
  T t;
  t.ev(100, t.c1, Ev::Acquiring).ev(100, t.c1, Ev::Paused);
  t.holds(t.c2, 7'000, 8'022);
  CHECK(check_stuck(t.trace, until(60'000)).empty());
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(10))).empty());
  // Once it runs again and still cannot get a free lock, it waits: stuck after the window.
  T u;
  u.ev(100, u.c1, Ev::Acquiring).ev(100, u.c1, Ev::Paused).ev(10'000, u.c1, Ev::Resumed);
  const auto v = check_stuck(u.trace, until(60'000, Duration::s(10)));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(10'000));  // from when it could ask again
  CHECK(v[0].processes == std::vector{u.c1});
}

TEST_CASE("waiting while someone holds the lock is not stuck") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired).ev(1, t.c2, Ev::Acquiring);
  t.ev(50'000, t.c1, Ev::Releasing).ev(50'001, t.c2, Ev::Acquired);
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(10))).empty());
}

TEST_CASE("a crashed holder leaves every waiter stuck, named in order, until the run ends") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired).ev(10, t.c3, Ev::Acquiring);
  t.ev(100, t.c1, Ev::Crashed).ev(5'000, t.c2, Ev::Acquiring);
  const auto v = check_stuck(t.trace, until(60'000, Duration::s(10)));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(100));
  CHECK(v[0].until == at_ms(60'000));
  CHECK(v[0].processes == std::vector{t.c2, t.c3});
  CHECK(contains(english(v[0].detail), "client2 and client3 waited 59.9s"));
}

TEST_CASE("a stuck stretch ends when a client acquires, giving up ends a client's wait") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(30'000, t.c1, Ev::AcquireFailed);  // 30 s > 20 s
  t.ev(31'000, t.c2, Ev::Acquiring).ev(35'000, t.c2, Ev::Acquired);   // 4 s
  const auto v = check_stuck(t.trace, until(60'000, Duration::s(10)));
  REQUIRE(v.size() == 1);
  CHECK(v[0].until == at_ms(30'000));
  CHECK(v[0].processes == std::vector{t.c1});
}

TEST_CASE("without a TTL, stuck means waiting to the end of the run, for more than half of it") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired).ev(100, t.c1, Ev::Crashed);
  t.ev(200, t.c2, Ev::Acquiring);
  const auto v = check_stuck(t.trace, until(60'000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(200));  // from when client2 began to wait
  CHECK(v[0].until == at_ms(60'000));
  CHECK(v[0].processes == std::vector{t.c2});
  CHECK(contains(english(v[0].detail), "client2 waited 59.8s to acquire while nobody held the lock (no TTL"));
  T u;  // a short wait at the very end of a run is not stuck
  u.holds(u.c1, 0, 59'900);
  u.ev(59'950, u.c2, Ev::Acquiring);
  CHECK(check_stuck(u.trace, until(60'000)).empty());
}

TEST_CASE("without a TTL, a long wait that ends before the run does is not stuck") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(50'000, t.c1, Ev::Acquired);
  CHECK(check_stuck(t.trace, until(60'000)).empty());
}

TEST_CASE("a crashed waiter stops waiting") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(1'000, t.c1, Ev::Crashed);
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(10))).empty());
  CHECK(check_stuck(t.trace, until(60'000)).empty());
}

// ---- all together -------------------------------------------------------------

TEST_CASE("check_trace returns every kind, ordered by time then kind") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 0);
  t.ev(0, t.c1, Ev::Acquired).ev(100, t.c2, Ev::Acquired).write(150, t.c2, 1).ev(200, t.c2, Ev::Releasing);
  t.write(400, t.c1, 1).ev(500, t.c1, Ev::Releasing);
  const auto v = check_trace(t.trace, until(1000));
  REQUIRE(v.size() == 3);
  CHECK(v[0].kind == ViolationKind::Overlap);
  CHECK(v[0].at == at_ms(100));
  CHECK(v[1].kind == ViolationKind::StaleWrite);
  CHECK(v[1].at == at_ms(400));
  CHECK(v[2].kind == ViolationKind::LostUpdate);
  CHECK(v[2].at == at_ms(400));
}

TEST_CASE("a clean run has no violations at all") {
  T u;
  u.ev(0, u.storage, Ev::Started, kNoProc, 0);
  u.ev(0, u.c1, Ev::Acquiring).ev(0, u.c1, Ev::Acquired).write(50, u.c1, 1);
  u.ev(60, u.c2, Ev::Acquiring);
  u.ev(100, u.c1, Ev::Releasing).ev(101, u.redis, Ev::KeyDeleted, u.c1, 0, u.c1).ev(102, u.c1, Ev::Released);
  u.ev(103, u.c2, Ev::Acquired).write(150, u.c2, 2).ev(200, u.c2, Ev::Releasing).ev(201, u.c2, Ev::Released);
  CHECK(check_trace(u.trace, until(1000, Duration::s(10))).empty());
  CHECK(check_trace(u.trace, until(1000)).empty());
}

TEST_CASE("violation names round-trip, and unknown names are rejected") {
  CHECK(violation_name(ViolationKind::Overlap) == "overlap");
  CHECK(violation_name(ViolationKind::StaleWrite) == "stale-write");
  CHECK(violation_name(ViolationKind::LostUpdate) == "lost-update");
  CHECK(violation_name(ViolationKind::ForeignRelease) == "foreign-release");
  CHECK(violation_name(ViolationKind::Stuck) == "stuck");
  for (ViolationKind k : kAllViolationKinds) {
    CHECK(parse_violation(violation_name(k)) == k);
  }
  CHECK_FALSE(parse_violation("overlaps").has_value());
  CHECK_FALSE(parse_violation("Overlap").has_value());
  CHECK_FALSE(parse_violation("").has_value());
}

// ---- more edges -----------------------------------------------------------------

TEST_CASE("a section cut short by a crash or a loss overlaps only up to that event") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(40, t.c2, Ev::Acquired).ev(50, t.c1, Ev::Lost);
  t.ev(80, t.c3, Ev::Acquired).ev(90, t.c2, Ev::Crashed).ev(120, t.c3, Ev::Releasing);
  const auto v = check_overlap(t.trace, until(1000));
  REQUIRE(v.size() == 2);
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
  CHECK(v[0].at == at_ms(40));
  CHECK(v[0].until == at_ms(50));
  CHECK(v[1].processes == std::vector{t.c2, t.c3});
  CHECK(v[1].at == at_ms(80));
  CHECK(v[1].until == at_ms(90));
}

TEST_CASE("two sections both open when the run ends overlap until the end") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(700, t.c2, Ev::Acquired);
  const auto v = check_overlap(t.trace, until(1000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(700));
  CHECK(v[0].until == at_ms(1000));
}

TEST_CASE("an accepted write that skips a value is a lost update that says so") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 10).write(10, t.c1, 11).write(20, t.c2, 13);
  const auto v = check_lost_update(t.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(20));
  CHECK(v[0].processes == std::vector{t.c2, t.c1});
  CHECK(contains(english(v[0].detail), "counter is 13 after 2 accepted increments from 10"));
  CHECK(contains(english(v[0].detail), "skipped from client1's 11 (expected 12)"));
}

TEST_CASE("only the accepted one of a superseded holder's writes is stale, and its token is named if it has one") {
  T t;
  // client2 has read the storage (its read accepted) before client1's writes.
  t.ev(0, t.c1, Ev::Acquired).ev(100, t.c2, Ev::Acquired).ev(150, t.storage, Ev::StorageRead, t.c2);
  t.reject(200, t.c1, 1, 1).write(300, t.c1, 1, 1);
  const auto v = check_stale_write(t.trace, until(1000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(300));
  CHECK(contains(english(v[0].detail), "(token 1)"));
  // Without a token the detail says nothing of one.
  T u;
  u.ev(0, u.c1, Ev::Acquired).ev(100, u.c2, Ev::Acquired).write(300, u.c1, 1);
  const auto w = check_stale_write(u.trace, until(1000));
  REQUIRE(w.size() == 1);
  CHECK_FALSE(contains(english(w[0].detail), "token"));
}

TEST_CASE("every foreign deletion during one release is reported") {
  T t;
  t.ev(0, t.c1, Ev::Releasing).deleted(1, t.c1, t.c2).deleted(2, t.c1, t.c3).ev(3, t.c1, Ev::Released);
  const auto v = check_foreign_release(t.trace, until(100));
  REQUIRE(v.size() == 2);
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
  CHECK(v[1].processes == std::vector{t.c1, t.c3});
  CHECK(v[1].at == at_ms(2));
}

TEST_CASE("with a TTL, a wait still open when the run ends counts only beyond the window") {
  T t;
  t.ev(45'000, t.c1, Ev::Acquiring);  // 15 s to the end: within 2 x 10 s
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(10))).empty());
  T u;
  u.ev(30'000, u.c1, Ev::Acquiring);  // 30 s to the end: beyond 20 s
  const auto v = check_stuck(u.trace, until(60'000, Duration::s(10)));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == at_ms(30'000));
  CHECK(v[0].until == at_ms(60'000));
}

TEST_CASE("a liveness window applies even without a TTL, to waits that end before the run does") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(10'000, t.c1, Ev::Acquired);  // 10 s: ends long before the run
  CHECK(check_stuck(t.trace, until(60'000)).empty());            // no TTL, no window: not stuck
  CheckOptions o = until(60'000);
  o.liveness_window = Duration::s(5);
  const auto v = check_stuck(t.trace, o);
  REQUIRE(v.size() == 1);
  CHECK(v[0].until == at_ms(10'000));
  CHECK(contains(english(v[0].detail), "(liveness window 5s)"));
}

TEST_CASE("check_trace sorts by time across checkers, not by checker") {
  // A stuck stretch at the start, an overlap later: stuck comes first though its
  // checker runs last.
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(30'000, t.c1, Ev::Acquired).ev(31'000, t.c2, Ev::Acquired);
  t.ev(32'000, t.c1, Ev::Releasing).ev(33'000, t.c2, Ev::Releasing);
  const auto v = check_trace(t.trace, until(60'000, Duration::s(10)));
  REQUIRE(v.size() == 2);
  CHECK(v[0].kind == ViolationKind::Stuck);
  CHECK(v[0].at == at_ms(0));
  CHECK(v[1].kind == ViolationKind::Overlap);
  CHECK(v[1].at == at_ms(31'000));
}

TEST_CASE("a restarted judge forgets the run it judged before: who held what, the highest token, open sections") {
  // Run a: redis1 names client1 the key's owner, client1 writes with token
  // 5, client2's section is still open when the run ends.
  T a;
  a.ev(0, a.redis, Ev::Command, a.c1, 0, a.c1, -1, "lock");
  a.holds(a.c1, 0, 100).write(50, a.c1, 1, 5);
  a.ev(200, a.c2, Ev::Acquiring).ev(200, a.c2, Ev::Acquired);
  // Run b: no node names a holder (every grant counts), client1's write with
  // token 1 lands before client2 has touched the storage (not stale).
  T b;
  b.ev(0, b.c1, Ev::Acquiring).ev(0, b.c1, Ev::Acquired).ev(50, b.c2, Ev::Acquiring).ev(50, b.c2, Ev::Acquired);
  b.ev(100, b.c1, Ev::Releasing).write(120, b.c1, 1, 1).ev(150, b.c2, Ev::Releasing);
  const std::vector<Violation> fresh = check_trace(b.trace, until(200));
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].kind == ViolationKind::Overlap);
  CHECK(contains(english(fresh[0].detail), "client1 and client2 both held the lock"));

  for (const bool finished : {true, false}) {
    INFO((finished ? "after a finished run" : "after a run cut off"));
    Judge judge(a.trace, until(300));
    for (const TraceEvent& e : a.trace.events()) judge.observe(e);
    if (finished) CHECK(judge.finish(at_ms(300)).empty());
    judge.restart(b.trace, until(200));
    for (const TraceEvent& e : b.trace.events()) judge.observe(e);
    const std::vector<Violation> again = judge.finish(at_ms(200));
    REQUIRE(again.size() == fresh.size());
    CHECK(again[0].kind == fresh[0].kind);
    CHECK(again[0].until == fresh[0].until);
    CHECK(again[0].processes == fresh[0].processes);
    CHECK(again[0].detail == fresh[0].detail);
  }
}

TEST_CASE("a restarted judge forgets which node held the key for whom") {
  // Run a: redis1 holds the key for client1.
  T a;
  a.ev(0, a.redis, Ev::Command, a.c1, 0, a.c1, -1, "lock");
  // Run b: redis2 holds it for client2; redis1 names nobody. Both clients
  // act as holders, but only client2's grant is real: client1 only believed
  // it held the lock. With redis1 still holding the key for client1 (c),
  // both would have held it.
  T b;
  const ProcId redis2 = b.trace.add_process("redis2", ProcessRole::LockNode);
  b.ev(0, redis2, Ev::Command, b.c2, 0, b.c2, -1, "lock");
  b.ev(10, b.c1, Ev::Acquiring).ev(10, b.c1, Ev::Acquired).ev(10, b.c2, Ev::Acquiring).ev(10, b.c2, Ev::Acquired);
  b.ev(100, b.c1, Ev::Releasing).ev(100, b.c2, Ev::Releasing);
  const std::vector<Violation> fresh = check_trace(b.trace, until(200));
  REQUIRE(fresh.size() == 1);
  CHECK(contains(english(fresh[0].detail), "client2 held the lock and client1 believed it did"));
  T c;
  const ProcId c_redis2 = c.trace.add_process("redis2", ProcessRole::LockNode);
  c.ev(0, c.redis, Ev::Command, c.c1, 0, c.c1, -1, "lock").ev(0, c_redis2, Ev::Command, c.c2, 0, c.c2, -1, "lock");
  c.ev(10, c.c1, Ev::Acquiring).ev(10, c.c1, Ev::Acquired).ev(10, c.c2, Ev::Acquiring).ev(10, c.c2, Ev::Acquired);
  c.ev(100, c.c1, Ev::Releasing).ev(100, c.c2, Ev::Releasing);
  const std::vector<Violation> remembered = check_trace(c.trace, until(200));
  REQUIRE(remembered.size() == 1);
  CHECK(contains(english(remembered[0].detail), "client1 and client2 both held the lock"));

  Judge judge(a.trace, until(300));
  for (const TraceEvent& e : a.trace.events()) judge.observe(e);
  CHECK(judge.finish(at_ms(300)).empty());
  judge.restart(b.trace, until(200));
  for (const TraceEvent& e : b.trace.events()) judge.observe(e);
  const std::vector<Violation> again = judge.finish(at_ms(200));
  REQUIRE(again.size() == 1);
  CHECK(again[0].detail == fresh[0].detail);
}

// ---- what the service held, and sections, at their edges ------------------------

TEST_CASE("a node holding two of a client's keys counts once toward the quorum a grant needs") {
  T t;
  const ProcId redis2 = t.trace.add_process("redis2", ProcessRole::LockNode);
  (void)redis2;
  t.trace.set_grant_quorum(2);
  t.ev(0, t.redis, Ev::Command, t.c1, 0, t.c1, -1, "a").ev(0, t.redis, Ev::Command, t.c1, 0, t.c1, -1, "b");
  t.ev(1, t.c1, Ev::Acquiring).ev(1, t.c1, Ev::Acquired);
  const auto beliefs = beliefs_not_grants(t.trace);
  REQUIRE(beliefs.size() == 1);  // one node of the two a grant needs
  CHECK(beliefs[0].held == 1);
}

TEST_CASE("an expired or deleted key holds nothing: a client acquiring after it only believes it holds the lock") {
  for (Ev gone : {Ev::Expired, Ev::KeyDeleted}) {
    T t;
    t.ev(0, t.redis, Ev::Command, t.c1, 0, t.c1, -1, "lock");
    t.ev(10, t.redis, gone, kNoProc, 0, t.c1, -1, "lock");
    t.ev(20, t.c1, Ev::Acquiring).ev(20, t.c1, Ev::Acquired);
    const auto beliefs = beliefs_not_grants(t.trace);
    REQUIRE(beliefs.size() == 1);
    CHECK(beliefs[0].held == 0);
  }
}

TEST_CASE("a re-entrant acquire inside a section opens no second one: its release ends the client's hold") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired).ev(10, t.c1, Ev::Acquired);  // again, holding
  t.ev(20, t.c1, Ev::Releasing).ev(20, t.c1, Ev::Released);
  t.holds(t.c2, 30, 40);
  CHECK(check_overlap(t.trace, until(100)).empty());
}

TEST_CASE("a client that overwrites its own value is named once in the lost update") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 0).write(10, t.c1, 1).write(20, t.c1, 1);
  const auto v = check_lost_update(t.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].processes == std::vector{t.c1});
}

}  // namespace checkers_test
