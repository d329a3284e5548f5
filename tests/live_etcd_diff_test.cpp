// `locksim diff-etcd` (live/etcd/diff.hpp): where its steps may run, the
// sequences it draws, and one sequence run on the model and on a real etcd.
#include <doctest/doctest.h>

#include <sstream>

#include "live/etcd/diff.hpp"

namespace live_etcd_diff_test {

using namespace locksim;
using namespace locksim::live::etcd::diff;

namespace {

Step grant(std::int64_t ttl_s) { return {.kind = Step::Kind::Grant, .ttl_s = ttl_s}; }
Step keepalive(int lease) { return {.kind = Step::Kind::KeepAlive, .lease = lease}; }
Step put(const std::string& key, int lease) { return {.kind = Step::Kind::Put, .lease = lease, .key = key}; }
Step range(const std::string& prefix = "/lock/") { return {.kind = Step::Kind::Range, .key = prefix}; }
Step watch(int pick) { return {.kind = Step::Kind::Watch, .pick = pick}; }
Step del(const std::string& key) { return {.kind = Step::Kind::Delete, .key = key}; }
Step wait(Duration d) { return {.kind = Step::Kind::Wait, .wait = d}; }

}  // namespace

TEST_CASE("a diff-etcd step may not run near a lease's expiry, but a keepalive may once it has expired") {
  // A 2 s lease granted at 0 expires at 2 s and is revoked by 2.5 s: nothing runs in [1.75 s, 2.75 s].
  CHECK(schedule({grant(2), wait(Duration::ms(1700)), range()}));
  CHECK_FALSE(schedule({grant(2), wait(Duration::ms(1800)), range()}));
  CHECK_FALSE(schedule({grant(2), wait(Duration::ms(2700)), range()}));
  CHECK(schedule({grant(2), wait(Duration::ms(2800)), range()}));
  // Its keepalive after 2.25 s finds it expired, awaiting its revoke: allowed (after a pause that
  // does not look at the watches), and the next step waits for the window's end.
  Step late = keepalive(0);
  late.wait = Duration::ms(2300);
  CHECK(schedule({grant(2), late, wait(Duration::ms(500)), range()}));
  CHECK_FALSE(schedule({grant(2), late, range()}));
  CHECK_FALSE(schedule({grant(2), wait(Duration::ms(2300)), keepalive(0)}));  // a look at the watches in the window
  late.wait = Duration::ms(2100);
  CHECK_FALSE(schedule({grant(2), late}));  // it might be renewed yet
  // A 1 s grant is raised to 2 s: its window is the 2 s lease's.
  CHECK_FALSE(schedule({grant(1), wait(Duration::ms(1900)), range()}));
  // A renewal moves the window; each command is planned 40 ms after the one before.
  const auto at = schedule({grant(2), wait(Duration::s(1)), keepalive(0), wait(Duration::ms(1700)), range()});
  REQUIRE(at);
  CHECK((*at)[2] == Duration::ms(1040));
  CHECK((*at)[4] == Duration::ms(2780));  // the lease now ends at 3.04 s: 2.78 s is 260 ms before
  CHECK_FALSE(schedule({grant(2), wait(Duration::s(1)), keepalive(0), wait(Duration::ms(1800)), range()}));
}

TEST_CASE("diff-etcd's outcomes differ in any field it compares: the store's revision, a node's create revision, the watches fired") {
  const Outcome a{.id = 7, .nodes = {{"/lock/a", 7}}, .revision = 7};
  CHECK(same(a, a));
  Outcome b = a;
  b.revision = 8;
  CHECK_FALSE(same(a, b));
  b = a;
  b.nodes[0].revision = 6;
  CHECK_FALSE(same(a, b));
  b = a;
  b.fired = {0};
  CHECK_FALSE(same(a, b));
  CHECK(first_difference({a, a}, {a, b}) == std::optional<std::size_t>(1));
  CHECK(first_difference({a}, {a, a}) == std::optional<std::size_t>(1));
}

TEST_CASE("an outcome as told: a wait's is the watches fired, a command's its reply, and only a watch with no key is skipped") {
  CHECK(describe(Outcome{}) == "fired: none");
  CHECK(describe(Outcome{.fired = {0, 2}}) == "fired: #0 #2");
  CHECK(describe(Outcome{.id = 7, .revision = 7}) == "ok id 7 rev 7");
  CHECK(describe(Outcome{.ok = false, .error = "LEASE_NOT_FOUND"}) == "error LEASE_NOT_FOUND");
  CHECK(describe(Outcome{.skipped = true}) == "(no key to watch)");
}

TEST_CASE("every sequence diff-etcd draws can be scheduled, and the same seed draws the same steps") {
  int awaiting_revoke = 0;
  for (std::uint64_t i = 0; i < 300; ++i) {
    const Sequence s = generate(7, i);
    REQUIRE_MESSAGE(schedule(s), "sequence " << i);
    CHECK(s.back().kind == Step::Kind::Wait);  // a last look at the watches
    for (const Step& step : s) awaiting_revoke += step.kind == Step::Kind::KeepAlive && !step.wait.is_zero();
  }
  CHECK(awaiting_revoke > 10);  // keepalives of expired leases awaiting their revoke are drawn
  const Sequence a = generate(7, 3), b = generate(7, 3);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(describe(a[i]) == describe(b[i]));
}

TEST_CASE("diff-etcd compares a watch from a range's revision after its key was deleted and created again") {
  // The case the model answered otherwise before it took the watch's revision.
  const Sequence seq{grant(30), put("/lock/a", 0), range(), del("/lock/a"), put("/lock/a", 0), watch(0),
                     wait(Duration::ms(300))};
  RealEtcd real;
  const RealEtcd::Run r = real.run(seq);
  REQUIRE_MESSAGE(!r.voided, r.why);
  const Outcomes model = run_model(seq, r.revision);
  std::ostringstream shown;
  print_case(shown, seq, model, r.outcomes, real.port());
  INFO(shown.str());
  CHECK_FALSE(first_difference(model, r.outcomes));
  CHECK(r.outcomes.back().fired == std::vector<int>{0});
  // A txn on a lease nobody granted, where the key exists: read, not refused (the other fix).
  const Sequence txn{grant(30), put("/lock/b", 0), put("/lock/b", 5), wait(Duration::ms(100))};
  const RealEtcd::Run t = real.run(txn);
  REQUIRE_MESSAGE(!t.voided, t.why);
  CHECK_FALSE(first_difference(run_model(txn, t.revision), t.outcomes));
  CHECK(t.outcomes[2].ok);
}

}  // namespace live_etcd_diff_test
