// The etcd model (sim/etcd_server.hpp) where `locksim diff-etcd` found it
// answering otherwise than a real etcd 3.4.23: each rule as the reference
// states it, pinned by a test that failed before the fix.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "harness/sim_client.hpp"
#include "lockalgos/coordination_common.hpp"
#include "sim/servers/etcd/server.hpp"

namespace etcd_server_test {

using namespace locksim;

namespace {

struct Probe final : Process {
  explicit Probe(World& w) : Process(w, "client", ProcessRole::Client, {}) {}
  void on_message(Message& m) override {
    if (const auto* n = std::get_if<coord::Notify>(&m.body)) notified.push_back(n->path);
  }
  std::vector<std::string> notified;
};

// One etcd model and a client that sends it requests, one at a time, at the times given.
struct Bench {
  World w{1};
  EtcdServer& etcd;
  Probe& client;
  Bench() : etcd(w.add<EtcdServer>("etcd", ClockSpec{}, 2, Duration::s(1))), client(w.add<Probe>()) {
    w.network().configure({DurationRange::fixed(Duration::zero()), 0.0, true});
  }
  // The reply to `r`, sent at `at` from the start.
  coord::Reply ask(coord::Request r, Duration at = Duration::zero()) {
    std::optional<coord::Reply> out;
    w.at(Instant::zero() + at, [&] {
      client.spawn([](Probe& self, ProcId to, coord::Request r, std::optional<coord::Reply>& out) -> Task<void> {
        SimClientEnv env(self);
        out = co_await env.call_coord(to, std::move(r), Duration::zero());
      }(client, etcd.id(), std::move(r), out));
    });
    w.run_until(Instant::zero() + at + Duration::ms(1));
    REQUIRE(out.has_value());
    return *out;
  }
  std::int64_t grant(Duration ttl, Duration at = Duration::zero()) {
    coord::Request r = coord_request(coord::Op::LeaseGrant);
    r.ttl = ttl;
    return ask(r, at).id;
  }
  coord::Reply put(const std::string& key, std::int64_t lease, Duration at = Duration::zero()) {
    coord::Request r = coord_request(coord::Op::PutIfAbsent, key, lease);
    r.data = "/lock/";
    return ask(r, at);
  }
};

}  // namespace

TEST_CASE("etcd's Txn checks the Put's lease only when the compare chose the Put: a key that exists is read with any lease") {
  Bench b;
  const std::int64_t lease = b.grant(Duration::s(10));
  const coord::Reply first = b.put("/lock/a", lease);
  REQUIRE(first.ok);
  // A lease nobody granted: the key exists, so the Else branch reads it and nothing checks the lease.
  const coord::Reply again = b.put("/lock/a", 999, Duration::ms(10));
  CHECK(again.ok);
  CHECK(again.id == first.id);
  // Where the Put would run, the lease must exist.
  const coord::Reply absent = b.put("/lock/b", 999, Duration::ms(20));
  CHECK_FALSE(absent.ok);
  CHECK(absent.error == "LEASE_NOT_FOUND");
}

TEST_CASE("etcd revokes a lease's keys in one write: one revision for all of them, none for a lease without keys") {
  Bench b;
  const std::int64_t lease = b.grant(Duration::s(2));
  b.put("/lock/a", lease);
  b.put("/lock/b", lease, Duration::ms(10));
  const std::int64_t bare = b.grant(Duration::s(2), Duration::ms(20));
  (void)bare;
  CHECK(b.etcd.revision() == 3);  // the two puts, on a store that started after revision 1
  // Both leases expire at 2 s and are revoked by the loop's tick at 2.5 s at the latest.
  const std::int64_t later = b.grant(Duration::s(10), Duration::s(3));
  const coord::Reply next = b.put("/lock/c", later, Duration::s(3) + Duration::ms(10));
  CHECK(next.id == 5);  // the revoke was revision 4 (both keys); the lease without keys moved nothing
  CHECK(b.etcd.revision() == 5);
}

TEST_CASE("an etcd watch from a range's revision fires for a key deleted since, even if it was created again") {
  Bench b;
  const std::int64_t lease = b.grant(Duration::s(30));
  b.put("/lock/a", lease);
  const coord::Reply range = b.ask(coord_request(coord::Op::Range, "/lock/"), Duration::ms(10));
  REQUIRE(range.nodes.size() == 1);
  CHECK(range.id == b.etcd.revision());  // the header's revision
  // Deleted and put again before the watch is made: a watch from the range's revision sees the delete.
  b.ask(coord_request(coord::Op::DeleteKey, "/lock/a"), Duration::ms(20));
  b.put("/lock/a", lease, Duration::ms(30));
  CHECK(b.ask(coord_request(coord::Op::WatchDelete, "/lock/a", range.id), Duration::ms(40)).ok);
  CHECK(b.client.notified == std::vector<std::string>{"/lock/a"});
  // A watch from the revision the key (as it is now) was seen at waits for its delete.
  const coord::Reply now = b.ask(coord_request(coord::Op::Range, "/lock/"), Duration::ms(50));
  CHECK(b.ask(coord_request(coord::Op::WatchDelete, "/lock/a", now.id), Duration::ms(60)).ok);
  CHECK(b.client.notified.size() == 1);
  b.ask(coord_request(coord::Op::DeleteKey, "/lock/a"), Duration::ms(70));
  CHECK(b.client.notified.size() == 2);
}

TEST_CASE("an etcd watch on a key already gone fires at once: the waiter does not wait for a delete that has happened") {
  // The waiter ranged the prefix, saw the key ahead of it, and by the time
  // its watch arrives the key is deleted: Watch(key, WithRev(rev)) replays
  // that delete from the history (client/v3/concurrency/key.go:26-31, v3.6.14).
  Bench b;
  const std::int64_t lease = b.grant(Duration::s(30));
  b.put("/lock/a", lease);
  const coord::Reply range = b.ask(coord_request(coord::Op::Range, "/lock/"), Duration::ms(10));
  REQUIRE(range.nodes.size() == 1);
  b.ask(coord_request(coord::Op::DeleteKey, "/lock/a"), Duration::ms(20));
  CHECK(b.ask(coord_request(coord::Op::WatchDelete, "/lock/a", range.id), Duration::ms(30)).ok);
  CHECK(b.client.notified == std::vector<std::string>{"/lock/a"});
  // And a watch with no revision on a key that never was fires as well.
  CHECK(b.ask(coord_request(coord::Op::WatchDelete, "/lock/never"), Duration::ms(40)).ok);
  CHECK(b.client.notified == std::vector<std::string>{"/lock/a", "/lock/never"});
}

TEST_CASE("etcd never grants lease 0: a delete that compares an expired lease leaves the key a later lease put") {
  // Lease 0 is NoLease (lease/lessor.go), and LeaseGrant draws an id again
  // while it is 0 (etcdserver/v3_server.go LeaseGrant, v3.4). The model's
  // DeleteKey reads id 0 as "whatever the lease" (an unconditional delete).
  Bench b;
  const std::int64_t first = b.grant(Duration::s(2));
  CHECK(first != 0);
  REQUIRE(b.put("/lock/a", first).ok);
  // The lease expires at 2 s and is revoked by 2.5 s; another lease puts the key again.
  const std::int64_t second = b.grant(Duration::s(10), Duration::s(3));
  REQUIRE(b.put("/lock/a", second, Duration::s(3) + Duration::ms(10)).ok);
  const coord::Reply late = b.ask(coord_request(coord::Op::DeleteKey, "/lock/a", first), Duration::s(3) + Duration::ms(20));
  CHECK(late.id == 0);  // nothing deleted
  const coord::Reply range = b.ask(coord_request(coord::Op::Range, "/lock/"), Duration::s(3) + Duration::ms(30));
  REQUIRE(range.nodes.size() == 1);
  CHECK(range.nodes[0].path == "/lock/a");
}

}  // namespace etcd_server_test
