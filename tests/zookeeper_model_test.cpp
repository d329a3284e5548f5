// The ZooKeeper server model's zxids (sim/zookeeper_server.cpp) as a real
// ZooKeeper 3.8.0 spends them: one per transaction — createSession, create,
// delete (a failed one too), closeSession and a session's expiry (one each,
// however many ephemerals go with it) — and none for a read or a ping.
// tests/live_zookeeper_test.cpp pins the same numbers on a real server, and
// `locksim diff-zookeeper` compares every czxid.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "lockalgos/coordination_common.hpp"
#include "sim/world.hpp"
#include "sim/servers/zookeeper/server.hpp"

namespace zookeeper_model_test {

using namespace locksim;

namespace {

// A client of the model's server whose calls the test runs one at a time.
struct Caller final : Process, ReplySink {
  Caller(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  std::optional<coord::Reply> answer;
  std::vector<coord::Notify> notified;
  void on_reply(std::uint32_t, Payload* p) override {
    answer.reset();
    if (p)
      if (auto* r = std::get_if<coord::Reply>(p)) answer = *r;
  }
  coord::Reply call(ProcId zk, coord::Request req) {
    answer.reset();
    start_call(zk, Payload(std::move(req)), Duration::zero(), *this, 0);
    world().run_until(world().now() + Duration::ms(10));
    REQUIRE(answer);
    return *answer;
  }
  std::int64_t connect(ProcId zk, Duration timeout) {
    coord::Request hello = coord_request(coord::Op::Connect);
    hello.ttl = timeout;
    return call(zk, hello).id;
  }
  coord::Reply create(ProcId zk, std::int64_t session) {
    coord::Request r = coord_request(coord::Op::Create, "/lock", session);
    r.data = "n-";
    return call(zk, r);
  }

 protected:
  void on_message(Message& m) override {
    if (auto* n = std::get_if<coord::Notify>(&m.body)) notified.push_back(*n);
  }
};

struct Model {
  Model() { w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true}); }
  World w{1};
  ZooKeeperServer& zk = w.add<ZooKeeperServer>("zk", ClockSpec{}, Duration::ms(100), 100);
  Caller& a = w.add<Caller>("a");
  Caller& b = w.add<Caller>("b");
};

}  // namespace

TEST_CASE("the ZooKeeper model spends a zxid on each transaction: createSession, create, delete, closeSession") {
  Model m;
  const std::int64_t sa = m.a.connect(m.zk.id(), Duration::s(1));  // zxid 100
  CHECK(m.a.create(m.zk.id(), sa).id == 101);
  const std::int64_t sb = m.b.connect(m.zk.id(), Duration::s(1));  // 102
  const coord::Reply bs = m.b.create(m.zk.id(), sb);              // 103
  CHECK(bs.id == 103);
  CHECK(m.b.create(m.zk.id(), sb).id == 104);
  const coord::Reply missing = m.b.call(m.zk.id(), coord_request(coord::Op::Delete, "/lock/none", sb));  // 105
  CHECK(missing.error == "NO_NODE");
  CHECK(m.b.call(m.zk.id(), coord_request(coord::Op::GetChildren, "/lock", sb)).nodes.size() == 3);  // a read: none
  CHECK(m.b.call(m.zk.id(), coord_request(coord::Op::Ping, "", sb)).ok);                           // a ping: none
  CHECK(m.b.call(m.zk.id(), coord_request(coord::Op::CloseSession, "", sb)).ok);  // 106, both of b's nodes with it
  const coord::Reply after = m.a.create(m.zk.id(), sa);
  CHECK(after.id == 107);
  CHECK(after.path == "/lock/n-0000000003");  // numbered by creates
}

TEST_CASE("the ZooKeeper model's session expiry is one transaction, however many nodes it removes") {
  Model m;
  const std::int64_t sa = m.a.connect(m.zk.id(), Duration::s(2));   // 100
  const std::int64_t sb = m.b.connect(m.zk.id(), Duration::ms(200));  // 101
  m.b.create(m.zk.id(), sb);                                           // 102
  m.b.create(m.zk.id(), sb);                                           // 103
  m.w.run_until(m.w.now() + Duration::ms(400));  // b is silent: expired at a tick, one closeSession (104)
  CHECK(m.b.call(m.zk.id(), coord_request(coord::Op::Ping, "", sb)).error == "SESSION_EXPIRED");
  CHECK(m.a.call(m.zk.id(), coord_request(coord::Op::GetChildren, "/lock", sa)).nodes.empty());
  CHECK(m.a.create(m.zk.id(), sa).id == 105);
}

// Found by diff-zookeeper: a client that set a watch, then opened a new
// session (its old handle closed without a closeSession, as Curator does after
// LOST), heard the old watch fire in the model; a real server dropped the
// watch with the old handle's connection.
TEST_CASE("the ZooKeeper model drops a client's watches when it opens a new session: they lived in the old connection") {
  for (const bool reconnect : {false, true}) {
    Model m;
    const std::int64_t first = m.a.connect(m.zk.id(), Duration::s(2));
    coord::Request list = coord_request(coord::Op::GetChildren, "/lock", first);
    list.watch = true;
    m.a.call(m.zk.id(), list);
    if (reconnect) m.a.connect(m.zk.id(), Duration::s(2));  // the first session lives on at the server
    const std::int64_t sb = m.b.connect(m.zk.id(), Duration::s(2));
    m.b.create(m.zk.id(), sb);
    CHECK(m.a.notified.size() == (reconnect ? 0u : 1u));
  }
}

// Found by diff-zookeeper: a client watching its own node that closes its
// session hears the node's deletion, before the answer to its closeSession.
TEST_CASE("the ZooKeeper model fires a closing session's own watches on its ephemerals") {
  Model m;
  const std::int64_t sa = m.a.connect(m.zk.id(), Duration::s(2));
  const coord::Reply mine = m.a.create(m.zk.id(), sa);
  coord::Request look = coord_request(coord::Op::Exists, mine.path, sa);
  look.watch = true;
  REQUIRE(m.a.call(m.zk.id(), look).ok);
  CHECK(m.a.call(m.zk.id(), coord_request(coord::Op::CloseSession, "", sa)).ok);
  REQUIRE(m.a.notified.size() == 1);
  CHECK(m.a.notified[0].path == mine.path);
  CHECK(m.a.notified[0].what == "deleted");
}

// A watch lives in its session's connection, which the server closes when
// the session expires (NIOServerCnxn.close -> ZooKeeperServer.removeCnxn ->
// DataTree.removeCnxn: NIOServerCnxn.java:589-597, DataTree.java:1502-1505,
// release-3.8.0): a client whose session expired hears no watch fire,
// though its process still runs.
TEST_CASE("the ZooKeeper model does not fire the watches of a session that expired") {
  Model m;
  const std::int64_t sa = m.a.connect(m.zk.id(), Duration::ms(200));
  coord::Request list = coord_request(coord::Op::GetChildren, "/lock", sa);
  list.watch = true;
  m.a.call(m.zk.id(), list);
  const std::int64_t sb = m.b.connect(m.zk.id(), Duration::s(2));
  m.w.run_until(m.w.now() + Duration::ms(400));  // a is silent: its session expires at a tick
  REQUIRE(m.a.call(m.zk.id(), coord_request(coord::Op::Ping, "", sa)).error == "SESSION_EXPIRED");
  m.b.create(m.zk.id(), sb);
  CHECK(m.a.notified.empty());
  // b's own watch, in a live session, fires.
  coord::Request mine = coord_request(coord::Op::GetChildren, "/lock", sb);
  mine.watch = true;
  m.b.call(m.zk.id(), mine);
  m.b.create(m.zk.id(), sb);
  CHECK(m.b.notified.size() == 1);
}

}  // namespace zookeeper_model_test
