// Tests written to kill the four mutants that survived the last mutation run:
// each fails with its mutant applied (see the comment above each test for
// the mutant), and passes on the code as it is.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "harness/liveness.hpp"
#include "harness/run.hpp"
#include "harness/scenario_writer.hpp"
#include "harness/shrink.hpp"
#include "judge/checkers.hpp"
#include "sim/world.hpp"
#include "tests/support.hpp"

namespace mutants_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// A bare process that keeps what it receives, in arrival order.
struct Inbox : Process {
  Inbox(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  std::vector<std::int64_t> received;
  void on_message(Message& m) override { received.push_back(std::get<storage::Request>(m.body).value); }
};

// `count` messages from a to b, one every 100 us, numbered 0..count-1, over
// a link whose one-way delay is drawn from 1 ms..50 ms; the order b got them in.
std::vector<std::int64_t> arrival_order(bool fifo, int count) {
  World w(7);
  auto& a = w.add<Inbox>("a");
  auto& b = w.add<Inbox>("b");
  w.network().configure({DurationRange{Duration::ms(1), Duration::ms(50)}, 0.0, fifo});
  for (int i = 0; i < count; ++i)
    w.at(Instant::zero() + Duration::us(100) * i, [&a, &b, i] {
      storage::Request r;
      r.value = i;
      a.send(b.id(), std::move(r));
    });
  w.run_until(Instant::zero() + Duration::s(1));
  return b.received;
}

std::vector<std::int64_t> iota(int count) {
  std::vector<std::int64_t> v;
  for (int i = 0; i < count; ++i) v.push_back(i);
  return v;
}

}  // namespace

// Mutant: sim/network.cpp Network::send_stored without `at = max(at, last)` (network-fifo-ignored).
TEST_CASE("a FIFO link delivers many messages in the order they were sent, whatever delays are drawn") {
  REQUIRE(arrival_order(true, 500).size() == 500);
  CHECK(arrival_order(true, 500) == iota(500));
  // The same draws without FIFO reorder them: the order above is the rule's doing.
  CHECK(arrival_order(false, 500) != iota(500));
}

// Mutant: judge/checkers.cpp OverlapChecker::close with `end < p.later_start`
// instead of `end <= p.later_start`.
TEST_CASE("a grant recorded before another client's release at the same instant is not an overlap") {
  Trace trace;
  const ProcId c1 = trace.add_process("client1", ProcessRole::Client);
  const ProcId c2 = trace.add_process("client2", ProcessRole::Client);
  auto ev = hand_events(trace);
  ev(0, c1, Ev::Acquired);
  ev(100, c2, Ev::Acquired);   // the grant is recorded first...
  ev(100, c1, Ev::Releasing);  // ...then, at the same instant, the release
  ev(200, c2, Ev::Releasing);
  CheckOptions o;
  o.run_end = Instant::zero() + Duration::ms(300);
  CHECK(check_overlap(trace, o).empty());
  // One nanosecond later is an overlap (of that nanosecond).
  Trace later;
  const ProcId d1 = later.add_process("client1", ProcessRole::Client);
  const ProcId d2 = later.add_process("client2", ProcessRole::Client);
  for (auto [ns, p, kind] : {std::tuple{0, d1, Ev::Acquired}, std::tuple{100'000'000, d2, Ev::Acquired},
                             std::tuple{100'000'001, d1, Ev::Releasing}}) {
    TraceEvent e;
    e.at = Instant::from_ns(ns);
    e.process = p;
    e.kind = kind;
    later.record(std::move(e));
  }
  const auto v = check_overlap(later, o);
  REQUIRE(v.size() == 1);
  CHECK(v[0].until - v[0].at == Duration::ns(1));
}

// Mutant: lockalgos/etcd.cpp keep_alive treating a keepalive answered
// LEASE_NOT_FOUND as a renewal (the `r && !r->ok` branch dropped).
TEST_CASE("an etcd client whose lease was revoked under it acquires again with a new lease") {
  // client1's clocks run at a fifth of true speed: it sends a keepalive every
  // 1 s of its own (5 s of true time), after etcd has revoked its 3 s lease.
  // The keepalive is answered LEASE_NOT_FOUND: the session is over, and each
  // next acquire opens a new one (its key, /lock/<lease>, names the lease).
  const Scenario s = parse_scenario(R"(title = "t"
about = "a"
source = "s"
duration = "60s"

[lock]
algorithm = "etcd"
lease_ttl = "3s"

[network]
delay = "1ms"

[[node]]
name = "etcd"

[[client]]
name = "client1"
job = "hold"
hold = "100ms"
repeat = "forever"
think = "1s"
clock = { offset = "0s", drift_ppm = -800000 }
)",
                                    "etcd-revoked.toml");
  const RunResult r = run_scenario(s);
  std::set<std::string> leases;
  int acquired = 0;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Acquired) {
      ++acquired;
      leases.insert(e.key);
    }
  INFO("acquired " << acquired << " times with " << leases.size() << " leases");
  CHECK(acquired >= 5);
  CHECK(leases.size() >= 5);
  CHECK(r.verdict.empty());
}

// Mutant: harness/shrink.cpp later() without its keeps_order() check.
TEST_CASE("the shrinker moves a crash and its restart later but keeps the restart after the crash, times rounded") {
  // redis1 down for more than 2 x TTL leaves the clients stuck; back sooner,
  // they take the lock again. So the failure needs the restart late after the
  // crash, and a crash moved past its restart (a restart of a running node
  // does nothing) would fail too: only the order check keeps them in order.
  const Scenario s = parse_scenario(R"(title = "t"
about = "a"
source = "s"
duration = "30s"

[lock]
algorithm = "redis-single"
ttl = "1s"
retry_delay = "100ms"
retry_count = "forever"

[network]
delay = "1ms"

[[node]]
name = "redis1"

[[client]]
name = "client"
count = 2
job = "hold"
hold = "200ms"
repeat = "forever"

[[fault]]
at = "5s"
kind = "crash"
target = "redis1"

[[fault]]
at = "12s"
kind = "restart"
target = "redis1"
)",
                                    "crash-restart.toml");
  REQUIRE(run_scenario(s).verdict.count(ViolationKind::Stuck) == 1);
  const ShrinkResult shrunk = shrink(s, ViolationKind::Stuck);
  const std::vector<FaultSpec>& f = shrunk.scenario.faults;
  REQUIRE(f.size() == 2);
  REQUIRE(f[0].kind == FaultKind::Crash);
  REQUIRE(f[1].kind == FaultKind::Restart);
  INFO("crash at " << format_duration(*f[0].at) << ", restart at " << format_duration(*f[1].at));
  CHECK(*f[0].at < *f[1].at);
  CHECK(*f[0].at > Duration::s(5));  // both moved later
  CHECK(*f[1].at > Duration::s(12));
  for (const FaultSpec& x : f) CHECK(x.at->count_ns() % Duration::ms(1).count_ns() == 0);
  // And the file it would write still fails the same way.
  const RunResult replay = run_scenario(parse_scenario(to_toml(shrunk.scenario), "shrunk.toml"));
  CHECK(replay.verdict.count(ViolationKind::Stuck) == 1);
}

// One client asks for the lock when every fault is healed (at 10 s, a 5 s
// window), and its wait ends with `ends` after `waited`; the run ends at 60 s.
namespace {
LivenessVerdict one_wait(Ev ends, Duration waited) {
  Trace trace;
  LivenessWatch watch(trace);
  const Instant healed = Instant::zero() + Duration::s(10);
  watch.healed(healed, Duration::s(5));
  TraceEvent e;
  e.at = healed;
  e.process = trace.add_process("client1", ProcessRole::Client);
  e.kind = Ev::Acquiring;
  watch.observe(e);
  e.at = healed + waited;
  e.kind = ends;
  watch.observe(e);
  return watch.finish(Instant::zero() + Duration::s(60));
}
}  // namespace

// The liveness judge (harness/liveness.cpp): the lock is stuck when clients
// wait with nobody holding it for longer than the window; a wait exactly as
// long as the window is within it (explore --liveness-window: "no wait
// longer than" the window).
TEST_CASE("the liveness judge: a wait exactly as long as the window is not stuck, a nanosecond more is") {
  for (const Duration extra : {Duration::zero(), Duration::ns(1)}) {
    const LivenessVerdict v = one_wait(Ev::Acquired, Duration::s(5) + extra);
    INFO("extra " << extra.count_ns() << " ns");
    CHECK(v.longest_wait == Duration::s(5) + extra);
    CHECK(v.stuck == (extra > Duration::zero()));
    CHECK(v.reacquired == Instant::zero() + Duration::s(15) + extra);
  }
}

// A client whose acquire failed (it gave up) waits no more: the stretch the
// liveness judge measures ends there, as the stuck checker counts it.
TEST_CASE("the liveness judge: a client that gave up on the lock is no longer waiting for it") {
  const LivenessVerdict v = one_wait(Ev::AcquireFailed, Duration::s(1));
  CHECK(v.longest_wait == Duration::s(1));
  CHECK_FALSE(v.stuck);
  CHECK_FALSE(v.reacquired);
}

// The liveness phase's client takes a name no process of the run has.
TEST_CASE("the liveness probe's name is one the run does not use: probe, else probe2, probe3...") {
  Trace trace;
  CHECK(probe_name(trace) == "probe");
  trace.add_process("probe", ProcessRole::Client);
  CHECK(probe_name(trace) == "probe2");
  trace.add_process("probe2", ProcessRole::LockNode);
  CHECK(probe_name(trace) == "probe3");
}

}  // namespace mutants_test
