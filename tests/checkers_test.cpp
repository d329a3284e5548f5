// Each checker on small traces built by hand: it must find what is there and
// nothing that is not.
#include <doctest/doctest.h>

#include "reports/checkers.hpp"

using namespace locksim;

namespace {

struct T {
  Trace trace;
  ProcId c1 = trace.add_process("client1", ProcessRole::Client);
  ProcId c2 = trace.add_process("client2", ProcessRole::Client);
  ProcId c3 = trace.add_process("client3", ProcessRole::Client);
  ProcId redis = trace.add_process("redis1", ProcessRole::LockNode);
  ProcId storage = trace.add_process("storage", ProcessRole::Storage);

  T& ev(std::int64_t ms, ProcId p, Ev kind, ProcId peer = kNoProc, std::int64_t value = 0, ProcId owner = kNoProc) {
    TraceEvent e;
    e.at = Instant::from_ns(ms * 1'000'000);
    e.process = p;
    e.kind = kind;
    e.peer = peer;
    e.value = value;
    e.owner = owner;
    trace.record(e);
    return *this;
  }
  // A client's lock life: acquiring, acquired at `from`, releasing at `to`.
  T& holds(ProcId c, std::int64_t from, std::int64_t to) {
    ev(from, c, Ev::Acquiring).ev(from, c, Ev::Acquired);
    return ev(to, c, Ev::Releasing).ev(to, c, Ev::Released);
  }
  T& write(std::int64_t ms, ProcId c, std::int64_t value) { return ev(ms, storage, Ev::StorageWrite, c, value); }
};

CheckOptions until(std::int64_t ms, std::optional<Duration> ttl = std::nullopt) {
  CheckOptions o;
  o.run_end = Instant::from_ns(ms * 1'000'000);
  o.ttl = ttl;
  return o;
}

}  // namespace

TEST_CASE("two clients holding at once is an overlap, over exactly the shared interval") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(50, t.c2, Ev::Acquired).ev(100, t.c1, Ev::Releasing).ev(200, t.c2, Ev::Releasing);
  const auto v = check_overlap(t.trace, until(300));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == Instant::from_ns(50'000'000));
  CHECK(v[0].until == Instant::from_ns(100'000'000));
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
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
  CHECK(v[0].until == Instant::from_ns(600'000'000));
}

TEST_CASE("a write accepted from a superseded holder is a stale write naming both clients") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).ev(100, t.c2, Ev::Acquired).write(150, t.c2, 1).ev(200, t.c2, Ev::Releasing);
  t.write(400, t.c1, 1).ev(500, t.c1, Ev::Releasing);
  const auto v = check_stale_write(t.trace, until(1000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == Instant::from_ns(400'000'000));
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
}

TEST_CASE("writes by the latest holder are not stale, and rejected writes never are") {
  T t;
  t.ev(0, t.c1, Ev::Acquired).write(50, t.c1, 1).ev(100, t.c1, Ev::Releasing);
  t.ev(200, t.c2, Ev::Acquired).write(250, t.c2, 2).ev(260, t.storage, Ev::StorageReject, t.c1, 3);
  t.ev(300, t.c2, Ev::Releasing);
  CHECK(check_stale_write(t.trace, until(1000)).empty());
}

TEST_CASE("two accepted increments of the same value are a lost update") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 0).write(10, t.c1, 1).write(20, t.c2, 1);
  const auto v = check_lost_update(t.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].at == Instant::from_ns(20'000'000));
  CHECK(v[0].detail.find("counter is 1 after 2 accepted increments") != std::string::npos);
}

TEST_CASE("sequential increments from a non-zero start are not a lost update") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 41).write(10, t.c1, 42).write(20, t.c2, 43).write(30, t.c3, 44);
  CHECK(check_lost_update(t.trace, until(100)).empty());
  T u;
  u.ev(0, u.storage, Ev::Started, kNoProc, 41).write(10, u.c1, 1);  // ignores the initial value
  CHECK(check_lost_update(u.trace, until(100)).size() == 1);
}

TEST_CASE("deleting another client's key during a release is a foreign release") {
  T t;
  t.ev(0, t.c1, Ev::Releasing).ev(1, t.redis, Ev::KeyDeleted, t.c1, 0, t.c2).ev(2, t.c1, Ev::Released);
  const auto v = check_foreign_release(t.trace, until(100));
  REQUIRE(v.size() == 1);
  CHECK(v[0].processes == std::vector{t.c1, t.c2});
}

TEST_CASE("deleting your own key, or someone's key outside a release, is not a foreign release") {
  T t;
  t.ev(0, t.c1, Ev::Releasing).ev(1, t.redis, Ev::KeyDeleted, t.c1, 0, t.c1).ev(2, t.c1, Ev::Released);
  // An expired holder's key removed while acquiring (the SETNX-timestamp recipe).
  t.ev(10, t.c2, Ev::Acquiring).ev(11, t.redis, Ev::KeyDeleted, t.c2, 0, t.c3);
  // A release that already finished does not cover a later deletion.
  t.ev(20, t.redis, Ev::KeyDeleted, t.c1, 0, t.c3);
  CHECK(check_foreign_release(t.trace, until(100)).empty());
}

TEST_CASE("waiting with nobody holding for longer than 2 x TTL is stuck; shorter is not") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(25'000, t.c1, Ev::Acquired);
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(10))).size() == 1);  // 25 s > 20 s
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(15))).empty());      // 25 s < 30 s
}

TEST_CASE("a liveness window overrides the TTL default") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(25'000, t.c1, Ev::Acquired);
  CheckOptions o = until(60'000, Duration::s(30));
  o.liveness_window = Duration::s(5);
  CHECK(check_stuck(t.trace, o).size() == 1);
}

TEST_CASE("waiting while someone holds the lock is not stuck") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired).ev(1, t.c2, Ev::Acquiring);
  t.ev(50'000, t.c1, Ev::Releasing).ev(50'001, t.c2, Ev::Acquired);
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(10))).empty());
}

TEST_CASE("without a TTL, stuck means waiting to the end of the run, for more than half of it") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(0, t.c1, Ev::Acquired).ev(100, t.c1, Ev::Crashed);
  t.ev(200, t.c2, Ev::Acquiring);
  const auto v = check_stuck(t.trace, until(60'000));
  REQUIRE(v.size() == 1);
  CHECK(v[0].processes == std::vector{t.c2});
  T u;  // a short wait at the very end of a run is not stuck
  u.holds(u.c1, 0, 59'900);
  u.ev(59'950, u.c2, Ev::Acquiring);
  CHECK(check_stuck(u.trace, until(60'000)).empty());
}

TEST_CASE("a crashed waiter stops waiting") {
  T t;
  t.ev(0, t.c1, Ev::Acquiring).ev(1'000, t.c1, Ev::Crashed);
  CHECK(check_stuck(t.trace, until(60'000, Duration::s(10))).empty());
}

TEST_CASE("check_trace returns every kind, ordered by time") {
  T t;
  t.ev(0, t.storage, Ev::Started, kNoProc, 0);
  t.ev(0, t.c1, Ev::Acquired).ev(100, t.c2, Ev::Acquired).write(150, t.c2, 1).ev(200, t.c2, Ev::Releasing);
  t.write(400, t.c1, 1).ev(500, t.c1, Ev::Releasing);
  const auto v = check_trace(t.trace, until(1000));
  REQUIRE(v.size() == 3);
  CHECK(v[0].kind == ViolationKind::Overlap);
  CHECK(v[1].at <= v[2].at);
}

TEST_CASE("violation names round-trip, and unknown names are rejected") {
  for (ViolationKind k : kAllViolationKinds) CHECK(parse_violation(violation_name(k)) == k);
  CHECK_FALSE(parse_violation("overlaps").has_value());
  CHECK_FALSE(parse_violation("").has_value());
}
