// etcd scenarios run live (live/etcd/etcd_run.hpp, live/etcd/observer.hpp,
// live/etcd/client_calls.cpp): the catalogue's etcd locks against a real
// etcd, judged as the simulator's runs are; the scale a scenario allows; what
// the run's watch tells the trace; and that nothing outlives a killed run.
// Bounded: the two runs take 8 s and 15 s of real time.
#include <doctest/doctest.h>
#include <signal.h>

#include <utility>  // before Asio (Boost 1.74)

#include <boost/asio.hpp>
#include <filesystem>
#include <fstream>

#include "harness/run.hpp"
#include "live/etcd/etcd_run.hpp"
#include "live/etcd/observer.hpp"
#include "live/live_run.hpp"
#include "live/servers.hpp"
#include "lockalgos/coordination_common.hpp"
#include "tests/live_support.hpp"
#include "tests/support.hpp"

namespace live_etcd_run_test {

using namespace locksim;
using namespace locksim::live;
using locksim::live::testing::Child;
using locksim::live::testing::eventually;
using locksim::testing::catalogue;

namespace {

std::vector<const TraceEvent*> at_node(const RunResult& r, Ev kind) {
  std::vector<const TraceEvent*> out;
  const ProcId etcd = *r.world->trace().find("etcd");
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == kind && e.process == etcd) out.push_back(&e);
  return out;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<pid_t> out;
  for (pid_t c; in >> c;) out.push_back(c);
  return out;
}

std::string comm(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace

TEST_CASE("a live etcd holder paused past its lease: etcd revokes it, the next takes the lock, the late write lands") {
  LiveOptions o;
  o.time_scale = 5;  // the 10 s lease is 2 s of real time; the pause outlasts it by 5.5 s of scenario time
  o.details = true;
  const RunResult r = run_live(catalogue("scenarios/etcd/pause-after-lock.toml"), o);
  CHECK(r.verdict == std::set<ViolationKind>{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate});
  // The run's watch told who held the lock: client1, then client2 once client1's lease was revoked.
  const auto holders = at_node(r, Ev::Holder);
  REQUIRE(holders.size() >= 2);
  CHECK(r.world->trace().name(holders[0]->owner) == "client1");
  CHECK(r.world->trace().name(holders[1]->owner) == "client2");
  const auto expired = at_node(r, Ev::Expired);
  REQUIRE(expired.size() == 1);
  CHECK(r.world->trace().name(expired[0]->owner) == "client1");
  // Revoked between the lease's end (10 s after the grant, less the work) and its revoke loop's next turn.
  CHECK(expired[0]->at > Instant::zero() + Duration::s(9));
  CHECK(expired[0]->at < Instant::zero() + Duration::s(14));
  // client2's release deleted its own key: KeyDeleted, by client2.
  const auto deleted = at_node(r, Ev::KeyDeleted);
  REQUIRE(!deleted.empty());
  CHECK(deleted.back()->peer == deleted.back()->owner);
}

TEST_CASE("live etcd 3.4's Mutex returns to a waiter whose lease expired: the overlap Jepsen found") {
  LiveOptions o;
  o.time_scale = 2;
  o.details = true;
  const RunResult r = run_live(catalogue("scenarios/etcd/lease-expires-while-waiting-3.4.toml"), o);
  CHECK(r.verdict == std::set<ViolationKind>{ViolationKind::Overlap});
  // first_token = 100: the store was brought to revision 99, so client1's key is created at 100.
  const ProcId client1 = *r.world->trace().find("client1");
  bool acquired = false;
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Acquired && e.process == client1 && !acquired) {
      acquired = true;
      CHECK(e.token == 100);
    }
  CHECK(acquired);
  // The lease is 10 s of scenario time (5 s real, answered 5 and read back as 10): client1, holding
  // for 11 s, keeps it alive a third of that apart.
  std::vector<Instant> keepalives;
  for (const TraceEvent* e : at_node(r, Ev::Command))
    if (e->peer == client1 && e->detail.rfind("LEASE KEEPALIVE", 0) == 0) keepalives.push_back(e->at);
  REQUIRE(keepalives.size() >= 2);
  for (std::size_t i = 1; i < keepalives.size(); ++i) {
    CHECK(keepalives[i] - keepalives[i - 1] > Duration::ms(3200));
    CHECK(keepalives[i] - keepalives[i - 1] < Duration::ms(3900));
  }
}

TEST_CASE("a live etcd holder cut off by a partition loses its lease as in the simulator: the proxy drops its HTTP messages") {
  // pause-after-lock with a partition in place of the pause: client1 keeps working, its keepalives are lost.
  Scenario s = catalogue("scenarios/etcd/pause-after-lock.toml");
  REQUIRE(s.faults.size() == 1);
  s.faults[0].kind = FaultKind::Partition;
  s.faults[0].groups = {{"client1"}, {"etcd"}};
  s.faults[0].target.clear();
  const RunResult sim = run_scenario(s, {});
  REQUIRE(sim.verdict.count(ViolationKind::Overlap));
  LiveOptions o;
  o.time_scale = 5;
  const RunResult r = run_live(s, o);
  CHECK(r.verdict == sim.verdict);
}

TEST_CASE("an etcd scenario's time scale keeps its leases whole seconds and as the simulator grants them") {
  const Scenario s = catalogue("scenarios/etcd/pause-after-lock.toml");
  // TTL 10 s: scale 2 at most, so that the 500 ms revoke loop is late by at most a tenth of it.
  CHECK(etcd::scale_for(s, 10) == 2);
  CHECK(etcd::scale_for(s, 1) == 1);
  CHECK(live_scale_for(s, {}, 10) == 2);
  Scenario odd = s;
  set_lock_options(odd, {{"lease_ttl", "\"15s\""}});
  CHECK(etcd::scale_for(odd, 10) == 3);  // 15 s / 3 = 5 s, and 3 <= 15 / 5
  set_lock_options(odd, {{"lease_ttl", "\"7s\""}});
  CHECK(etcd::scale_for(odd, 10) == 1);  // 7 s divides into no whole seconds
  set_lock_options(odd, {{"lease_ttl", "\"11s\""}});
  CHECK(etcd::scale_for(odd, 10) == 1);  // 11 / 5 allows 2, but 5.5 s is not whole
  // A 1 s lease is granted 2 s (the shortest at a 1 s election timeout): only scale 1 or 2 keep that, and 1 <= 1/5 s fails.
  set_lock_options(odd, {{"lease_ttl", "\"1s\""}});
  CHECK(etcd::scale_for(odd, 10) == 1);
}

TEST_CASE("an etcd node's clock cannot be moved live: refused with the reason, never faked") {
  Scenario s = catalogue("scenarios/etcd/pause-after-lock.toml");
  FaultSpec jump;
  jump.kind = FaultKind::ClockJump;
  jump.target = "etcd";
  jump.at = Duration::s(1);
  jump.by = Duration::s(5);
  jump.line = 99;
  s.faults.push_back(jump);
  const auto why = live_unsupported(s);
  REQUIRE(why);
  CHECK(why->find("vDSO") != std::string::npos);
  CHECK(why->find("line 99") != std::string::npos);
  CHECK_THROWS_AS(run_live(s, {}), ScenarioError);
  // A client's clock is ours: that runs.
  s.faults.back().target = "client1";
  CHECK_FALSE(live_unsupported(s));
}

TEST_CASE("the run's watch tells the holder, a client's delete and a lease's revoke as the model's server does") {
  boost::asio::io_context io;
  std::vector<std::pair<Ev, TraceEvent>> told;
  etcd::Observer o(io, {"127.0.0.1", 1}, [&](Ev kind, TraceEvent&& e) { told.emplace_back(kind, std::move(e)); }, true);
  const ProcId c1 = 3, c2 = 4;
  o.answered(c1, coord_request(coord::Op::LeaseGrant), {.id = 11});
  o.answered(c2, coord_request(coord::Op::LeaseGrant), {.id = 12});
  coord::Request put = coord_request(coord::Op::PutIfAbsent, "/lock/b", 11);
  put.data = "/lock/";
  o.sent(c1, put);
  o.on_message(R"({"result":{"header":{"revision":"1"},"created":true}})");
  // Base64 of /lock/b, /lock/c.
  o.on_message(R"({"result":{"events":[{"kv":{"key":"L2xvY2svYg==","create_revision":"2","mod_revision":"2","lease":"11"}}]}})");
  o.on_message(R"({"result":{"events":[{"kv":{"key":"L2xvY2svYw==","create_revision":"3","mod_revision":"3","lease":"12"}}]}})");
  REQUIRE(told.size() == 1);  // client2's key is not first: no change of holder
  CHECK(told[0].first == Ev::Holder);
  CHECK(told[0].second.owner == c1);
  CHECK(told[0].second.key == "/lock/");
  CHECK(o.revision() == 3);
  // client1 deletes its key: KeyDeleted by client1; client2 holds.
  o.sent(c1, coord_request(coord::Op::DeleteKey, "/lock/b"));
  o.on_message(R"({"result":{"events":[{"type":"DELETE","kv":{"key":"L2xvY2svYg==","mod_revision":"4"},"prev_kv":{"key":"L2xvY2svYg==","create_revision":"2","lease":"11"}}]}})");
  REQUIRE(told.size() == 3);
  CHECK(told[1].first == Ev::KeyDeleted);
  CHECK(told[1].second.peer == c1);
  CHECK(told[1].second.owner == c1);
  CHECK(told[2].first == Ev::Holder);
  CHECK(told[2].second.owner == c2);
  // client2's key goes with its lease, nobody having asked: Expired, and nobody holds.
  o.on_message(R"({"result":{"events":[{"type":"DELETE","kv":{"key":"L2xvY2svYw==","mod_revision":"5"},"prev_kv":{"key":"L2xvY2svYw==","create_revision":"3","lease":"12"}}]}})");
  REQUIRE(told.size() == 5);
  CHECK(told[3].first == Ev::Expired);
  CHECK(told[3].second.owner == c2);
  CHECK(told[4].first == Ev::Holder);
  CHECK(told[4].second.owner == kNoProc);
}

TEST_CASE("an external client's lease, named by its Txn, owns the key, and a key deleted with a lease it revokes is its delete") {
  boost::asio::io_context io;
  std::vector<std::pair<Ev, TraceEvent>> told;
  etcd::Observer o(io, {"127.0.0.1", 1}, [&](Ev kind, TraceEvent&& e) { told.emplace_back(kind, std::move(e)); }, false);
  const ProcId c1 = 3, c2 = 4;
  o.watch_lock("lock");
  o.lease_of(c1, 21);
  o.lease_of(c2, 22);
  o.on_message(R"({"result":{"header":{"revision":"1"},"created":true}})");
  // Base64 of "lock".
  o.on_message(R"({"result":{"events":[{"kv":{"key":"bG9jaw==","create_revision":"2","mod_revision":"2","lease":"21"}}]}})");
  REQUIRE(told.size() == 1);
  CHECK(told[0].second.owner == c1);
  // client1 revokes its lease (etcd3 for Node's release): its delete.
  CHECK(o.revoking(c1, 21));
  CHECK_FALSE(o.revoking(c1, 21));  // told once
  o.on_message(R"({"result":{"events":[{"type":"DELETE","kv":{"key":"bG9jaw==","mod_revision":"3"},"prev_kv":{"key":"bG9jaw==","create_revision":"2","lease":"21"}}]}})");
  REQUIRE(told.size() == 3);
  CHECK(told[1].first == Ev::KeyDeleted);
  CHECK(told[1].second.peer == c1);
  // client2's key, its lease revoked by nobody: Expired.
  o.on_message(R"({"result":{"events":[{"kv":{"key":"bG9jaw==","create_revision":"4","mod_revision":"4","lease":"22"}}]}})");
  o.on_message(R"({"result":{"events":[{"type":"DELETE","kv":{"key":"bG9jaw==","mod_revision":"5"},"prev_kv":{"key":"bG9jaw==","create_revision":"4","lease":"22"}}]}})");
  REQUIRE(told.size() == 6);
  CHECK(told[3].second.owner == c2);
  CHECK(told[4].first == Ev::Expired);
  CHECK(told[4].second.owner == c2);
}

TEST_CASE("a reply waits for the run's watch to reach its revision, and goes after a second without it") {
  boost::asio::io_context io;
  etcd::Observer o(io, {"127.0.0.1", 1}, [](Ev, TraceEvent&&) {}, false);
  o.on_message(R"({"result":{"header":{"revision":"1"},"created":true}})");
  int early = 0, waiting = 0, late = 0;
  o.after_revision(0, [&] { ++early; });
  o.after_revision(2, [&] { ++waiting; });
  o.after_revision(9, [&] { ++late; });
  io.run_for(std::chrono::milliseconds(50));
  CHECK(early == 1);
  CHECK(waiting == 0);
  o.on_message(R"({"result":{"events":[{"kv":{"key":"L2E=","create_revision":"2","mod_revision":"2"}}]}})");
  CHECK(waiting == 1);
  CHECK(late == 0);
  io.restart();
  io.run_for(std::chrono::milliseconds(1300));
  CHECK(late == 1);  // the watch never got there: the reply goes anyway
}

TEST_CASE("a SIGKILLed locksim live of an etcd scenario leaves no etcd behind") {
  Child locksim(LOCKSIM_BINARY, {"live", std::string(LOCKSIM_SOURCE_DIR) + "/scenarios/etcd/pause-after-lock.toml", "--time-scale", "5"});
  std::vector<pid_t> servers;
  REQUIRE(eventually([&] {
    servers = children_of(locksim.pid());
    return !servers.empty() && comm(servers[0]) == "etcd";
  }, Duration::s(20)));
  const pid_t etcd = servers[0];
  const pid_t killed = locksim.pid();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // into the run: clients hold connections and watches
  locksim.kill(SIGKILL);
  locksim.wait();
  CHECK(eventually([&] { return !process_alive(etcd); }, Duration::s(10)));
  if (process_alive(etcd)) ::kill(etcd, SIGKILL);  // never left behind, even when the test fails
  // Its temporary root (the WAL's 122 MiB in it) goes with the next supervisor's sweep.
  const std::filesystem::path tmp = std::filesystem::temp_directory_path();
  remove_abandoned_roots(tmp);
  for (const auto& entry : std::filesystem::directory_iterator(tmp)) {
    const std::filesystem::path owner = entry.path() / "owner";
    if (!std::filesystem::exists(owner)) continue;
    std::ifstream in(owner);
    pid_t pid = 0;
    in >> pid;
    CHECK_MESSAGE(pid != killed, entry.path());
  }
}

}  // namespace live_etcd_run_test
