// The library flavours besides node-redlock (tests/node_redlock_test.cpp):
// redis-semaphore 5.8.0, redis-py 4.3.4, kazoo 2.8.0, python-etcd3 0.12.0 and
// etcd3 1.1.2 for Node. Each behaviour pinned here has its line of the
// shipped code beside it in the flavour's file.
#include <doctest/doctest.h>

#include <string>

#include "harness/run.hpp"
#include "tests/support.hpp"

namespace library_flavours_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

std::string scenario(const std::string& library, const std::string& lock_keys, const std::string& nodes,
                     const std::string& rest, const std::string& duration = "20s") {
  return "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"" + duration + "\"\n[lock]\nlibrary = \"" +
         library + "\"\n" + lock_keys + "\n[network]\ndelay = \"1ms\"\n" + nodes + rest;
}

RunResult run_text(const std::string& text) { return run_scenario(parse_scenario(text, "t.toml")); }

Instant at_ms(std::int64_t ms) { return Instant::from_ns(Duration::ms(ms).count_ns()); }

const std::string kRedis1 = "[[node]]\nname = \"redis1\"\n";
// 100 ms into the work: the work's timer is set (a pause at the read itself would hold the job before it sets it).
const std::string kPauseAfterRead =
    "[[fault]]\non = \"client1 read\"\nafter = \"100ms\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"4s\"\n";

std::size_t signals(const RunResult& r, const std::string& who, LibrarySignal s) {
  std::size_t n = 0;
  for (const TraceEvent* e : events_of(r, Ev::Notified, who)) n += e->value == static_cast<std::int64_t>(s);
  return n;
}

}  // namespace

// --- redis-semaphore 5.8.0 (lib/Lock.js, lib/mutex/*.js, lib/redlockMutex/*.js) ---

TEST_CASE("redis-semaphore: the refresh timer runs every round(0.8 x lockTimeout), and renews by PEXPIRE if still ours") {
  // Lock.js:45,48 refreshInterval = Math.round(lockTimeout * 0.8); :112-115 setInterval.
  const RunResult r = run_text(scenario("redis-semaphore@5.8.0", "ttl = \"2s\"", kRedis1,
                                        "[[client]]\nname = \"client1\"\nwork = \"3500ms\"\n"));
  const auto renewed = events_of(r, Ev::Renewed, "client1");
  REQUIRE(renewed.size() == 2);
  CHECK(renewed[0]->at == at_ms(2 + 1600 + 2));  // acquired at 2 ms; its reply 2 ms after the timer
  CHECK(renewed[1]->at == at_ms(2 + 3200 + 2));
  CHECK(events_of(r, Ev::Wrote, "client1").size() == 1);
  // Rounded, not truncated: 0.8 x 1007 ms = 805.6 ms is 806 ms.
  const RunResult odd = run_text(scenario("redis-semaphore@5.8.0", "ttl = \"1007ms\"", kRedis1,
                                          "[[client]]\nname = \"client1\"\nwork = \"1s\"\n"));
  const auto first = events_of(odd, Ev::Renewed, "client1");
  REQUIRE(first.size() >= 1);
  CHECK(first[0]->at == at_ms(2 + 806 + 2));
}

TEST_CASE("redis-semaphore: acquireAttemptsLimit = 3 makes three tries, then acquire() fails") {
  // Mutex acquire: "while (Date.now() < end && ++attempt <= acquireAttemptsLimit)".
  const RunResult r = run_text(scenario("redis-semaphore@5.8.0", "ttl = \"2s\"\nacquire_attempts_limit = 3", kRedis1,
                                        "[[client]]\nname = \"client1\"\nwork = \"3s\"\n"
                                        "[[client]]\nname = \"client2\"\nstart = \"500ms\"\nwork = \"1s\"\n"));
  const ProcId client2 = *r.world->find("client2");
  std::size_t sets = 0;
  for (const TraceEvent* e : events_of(r, Ev::Command, "redis1")) sets += e->peer == client2 && e->detail.rfind("SET ", 0) == 0;
  CHECK(sets == 3);
  CHECK(events_of(r, Ev::AcquireFailed, "client2").size() == 1);
}

TEST_CASE("redis-semaphore: acquire() gives up after acquireTimeout, 10 s by default") {
  // misc.js:7 defaultTimeoutOptions.acquireTimeout = 10000, taken by Lock.js:48; the Mutex's
  // acquire loops until Date.now() passes it. client1 holds the lock for 15 s.
  const RunResult r = run_text(scenario("redis-semaphore@5.8.0", "ttl = \"2s\"", kRedis1,
                                        "[[client]]\nname = \"client1\"\nwork = \"15s\"\n"
                                        "[[client]]\nname = \"client2\"\nstart = \"500ms\"\nwork = \"1s\"\n"));
  const auto failed = events_of(r, Ev::AcquireFailed, "client2");
  REQUIRE(failed.size() >= 1);
  CHECK(failed[0]->at >= at_ms(500 + 10'000));
  CHECK(failed[0]->at < at_ms(500 + 10'000 + 50));
}

TEST_CASE("redis-semaphore: after a pause isAcquired is still true at the write, onLockLost comes after it") {
  // The work timer (due 1.004 s) comes before the refresh timer (1.602 s): the
  // check reads the flag (Lock.js:105-107), which only a failed refresh clears
  // (:61-69), and that refresh has not run yet.
  const RunResult r = run_text(scenario("redis-semaphore@5.8.0", "ttl = \"2s\"", kRedis1,
                                        "[[client]]\nname = \"client1\"\nwork = \"1s\"\ncheck = \"is-acquired\"\n"
                                        "[[client]]\nname = \"client2\"\nstart = \"2500ms\"\nwork = \"500ms\"\n" + kPauseAfterRead));
  const auto wrote = events_of(r, Ev::Wrote, "client1");
  REQUIRE(wrote.size() == 1);
  const auto notified = events_of(r, Ev::Notified, "client1");
  REQUIRE(notified.size() == 1);
  CHECK(notified[0]->value == static_cast<std::int64_t>(LibrarySignal::LockLost));
  CHECK(wrote[0]->seq < notified[0]->seq);
  // release() resolves: the job is told it released (Lock.js:144-154), though nothing was deleted.
  CHECK(events_of(r, Ev::Released, "client1").size() == 1);
  CHECK(events_of(r, Ev::ReleaseFailed, "client1").empty());
}

TEST_CASE("redis-semaphore: a refresh that failed before the check clears isAcquired, and the write is abandoned") {
  // redis1 restarts empty at 0.5 s; the refresh at 1.602 s finds no key; the check at 2.004 s reads false.
  const RunResult r = run_text(scenario("redis-semaphore@5.8.0", "ttl = \"2s\"", kRedis1,
                                        "[[client]]\nname = \"client1\"\nwork = \"2s\"\ncheck = \"is-acquired\"\n"
                                        "[[fault]]\nat = \"500ms\"\nkind = \"crash\"\ntarget = \"redis1\"\n"
                                        "[[fault]]\nat = \"510ms\"\nkind = \"restart\"\ntarget = \"redis1\"\n"));
  CHECK(signals(r, "client1", LibrarySignal::LockLost) == 1);
  CHECK(events_of(r, Ev::Lost, "client1").size() == 1);
  CHECK(events_of(r, Ev::Writing, "client1").empty());
}

TEST_CASE("redis-semaphore RedlockMutex: of two nodes, both are a quorum: round(1.5) is 2") {
  // utils/redlock.js:5-7 getQuorum = Math.round((n + 1) / 2). redis2 restarts
  // empty at 510 ms: client2, from 1 s, takes it alone, which is not enough,
  // until client1's refresh at 1.6 s finds it lost there.
  const std::string nodes = "[[node]]\nname = \"redis1\"\n[[node]]\nname = \"redis2\"\n";
  const RunResult r = run_text(scenario("redis-semaphore-redlock@5.8.0", "ttl = \"2s\"", nodes,
                                        "[[client]]\nname = \"client1\"\nwork = \"3s\"\n"
                                        "[[client]]\nname = \"client2\"\nstart = \"1s\"\nwork = \"500ms\"\n"
                                        "[[fault]]\nat = \"500ms\"\nkind = \"crash\"\ntarget = \"redis2\"\n"
                                        "[[fault]]\nat = \"510ms\"\nkind = \"restart\"\ntarget = \"redis2\"\n"));
  const auto taken = events_of(r, Ev::Acquired, "client2");
  REQUIRE(taken.size() == 1);
  CHECK(taken[0]->at > at_ms(1600));
}

TEST_CASE("redis-semaphore RedlockMutex: a quorum of round((n+1)/2) acquires and refreshes, no validity is counted") {
  // redlockMutex/acquire.js:16-28, refresh.js:14-40, utils/redlock.js:5-7: 2 of 3.
  const std::string nodes = "[[node]]\nname = \"redis1\"\n[[node]]\nname = \"redis2\"\n[[node]]\nname = \"redis3\"\n";
  const RunResult r = run_text(scenario("redis-semaphore-redlock@5.8.0", "ttl = \"2s\"", nodes,
                                        "[[client]]\nname = \"client1\"\nwork = \"2s\"\n"
                                        "[[fault]]\nat = \"0s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"redis3\"]]\n"
                                        "duration = \"100ms\"\n"));
  // redis3's SET is lost: every reply is awaited (Promise.all), and ioredis has no timeout: it never comes.
  CHECK(events_of(r, Ev::Acquired, "client1").empty());
  const RunResult ok = run_text(scenario("redis-semaphore-redlock@5.8.0", "ttl = \"2s\"", nodes,
                                         "[[client]]\nname = \"client1\"\nwork = \"2s\"\n"));
  REQUIRE(events_of(ok, Ev::Acquired, "client1").size() == 1);
  CHECK(events_of(ok, Ev::Renewed, "client1").size() == 1);
  CHECK(signals(ok, "client1", LibrarySignal::LockLost) == 0);
}

TEST_CASE("redis-semaphore RedlockMutex: a refresh that reaches exactly a quorum keeps the lock, and takes the key again where it was lost") {
  // redlockMutex/refresh.js:21-39: refreshedCount >= quorum; SET NX on the failed nodes.
  const std::string nodes = "[[node]]\nname = \"redis1\"\n[[node]]\nname = \"redis2\"\n[[node]]\nname = \"redis3\"\n";
  const RunResult r = run_text(scenario("redis-semaphore-redlock@5.8.0", "ttl = \"2s\"", nodes,
                                        "[[client]]\nname = \"client1\"\nwork = \"2s\"\n"
                                        "[[fault]]\nat = \"500ms\"\nkind = \"crash\"\ntarget = \"redis3\"\n"
                                        "[[fault]]\nat = \"510ms\"\nkind = \"restart\"\ntarget = \"redis3\"\n"));
  CHECK(events_of(r, Ev::Renewed, "client1").size() == 1);
  CHECK(signals(r, "client1", LibrarySignal::LockLost) == 0);
  int sets_on_redis3 = 0;
  for (const TraceEvent* e : events_of(r, Ev::Command, "redis3"))
    if (e->detail.rfind("SET lock", 0) == 0 && e->at > at_ms(510)) ++sets_on_redis3;
  CHECK(sets_on_redis3 == 1);  // after the restart: the refresh's SET NX
}

// --- redis-py 4.3.4 (redis/lock.py) ---

TEST_CASE("redis-py: the Lock keeps no deadline, waits for a late reply, and owned() is a GET") {
  // lock.py:206-215 (SET NX PX, no deadline), redis.Redis() socket_timeout None.
  const RunResult late = run_text(scenario("redis-py@4.3.4", "ttl = \"2s\"", kRedis1,
                                           "[[client]]\nname = \"client1\"\nwork = \"100ms\"\n"
                                           "[[fault]]\nat = \"0s\"\nkind = \"delay\"\nfrom = \"redis1\"\nto = \"client1\"\nby = \"3s\"\ncount = 1\n"));
  const auto acquired = events_of(late, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  CHECK(acquired[0]->at == at_ms(3002));
  CHECK(acquired[0]->value == -1);  // no validity kept
  // One SET: with a command timeout it would have given up at 2 s and sent
  // another (whose reply, in order behind the late one, would still come at 3 s).
  int sets = 0;
  for (const TraceEvent* e : events_of(late, Ev::Command, "redis1")) sets += e->detail.rfind("SET lock", 0) == 0;
  CHECK(sets == 1);
  // owned() (:233-243): the key is client2's after the pause, the write is abandoned.
  const RunResult checked = run_text(scenario("redis-py@4.3.4", "ttl = \"2s\"", kRedis1,
                                              "[[client]]\nname = \"client1\"\nwork = \"1s\"\ncheck = \"owned\"\n"
                                              "[[client]]\nname = \"client2\"\nstart = \"2500ms\"\nwork = \"3s\"\n" + kPauseAfterRead));
  CHECK(events_of(checked, Ev::Lost, "client1").size() == 1);
  CHECK(events_of(checked, Ev::Writing, "client1").empty());
  CHECK(has_command(checked, "redis1", "GET lock"));
}

TEST_CASE("redis-py refuses fencing tokens: its token is a random uuid1") {
  CHECK_THROWS_WITH_AS(parse_scenario(scenario("redis-py@4.3.4", "ttl = \"2s\"\nfencing = \"token\"", kRedis1,
                                               "[[client]]\nname = \"client1\"\n"), "t.toml"),
                       doctest::Contains("redis-py's Lock issues no fencing token"), ScenarioError);
}

// --- kazoo 2.8.0 (recipe/lock.py, protocol/connection.py, client.py) ---

namespace {
const std::string kZk = "[[node]]\nname = \"zk1\"\n";
const std::string kKazooLock = "session_timeout = \"4s\"\ntick_time = \"2s\"";
std::string kazoo_pause(const std::string& client1_keys) {
  return "[[client]]\nname = \"client1\"\nwork = \"1s\"\n" + client1_keys +
         "[[client]]\nname = \"client2\"\nstart = \"1s\"\nwork = \"1s\"\n"
         "[[fault]]\non = \"client1 read\"\nafter = \"100ms\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"10s\"\n";
}
}  // namespace

TEST_CASE("kazoo: after a pause past the session, SUSPENDED at once, the write in the same instant, LOST on the refused reconnect") {
  const RunResult r = run_text(scenario("kazoo@2.8.0", kKazooLock, kZk, kazoo_pause("")));
  const auto resumed = events_of(r, Ev::Resumed, "client1");
  REQUIRE(resumed.size() == 1);
  const auto notified = events_of(r, Ev::Notified, "client1");
  REQUIRE(notified.size() >= 2);
  CHECK(notified[0]->value == static_cast<std::int64_t>(LibrarySignal::Suspended));
  CHECK(notified[0]->at == resumed[0]->at);  // the closed socket is read at once (connection.py:231-262)
  const auto writing = events_of(r, Ev::Writing, "client1");
  REQUIRE(writing.size() == 1);
  CHECK(writing[0]->at == resumed[0]->at);
  CHECK(notified[1]->value == static_cast<std::int64_t>(LibrarySignal::SessionLost));
  // The reconnect after 0.1 s x U(0.6, 1.4) (retry.py:137-160), then one round trip.
  CHECK(notified[1]->at - resumed[0]->at >= Duration::ms(60));
  CHECK(notified[1]->at - resumed[0]->at <= Duration::ms(145));
  // release() returns True (lock.py:344-359): the node is already gone, NoNodeError passes.
  CHECK(events_of(r, Ev::Released, "client1").size() == 1);
  CHECK(events_of(r, Ev::Wrote, "client1").size() == 1);
}

TEST_CASE("kazoo: a check of the connection state or an exists() call stops the write after the pause") {
  for (const char* check : {"state", "exists"}) {
    INFO(std::string(check));
    const RunResult r = run_text(scenario("kazoo@2.8.0", kKazooLock, kZk, kazoo_pause(std::string("check = \"") + check + "\"\n")));
    CHECK(events_of(r, Ev::Lost, "client1").size() == 1);
    CHECK(events_of(r, Ev::Writing, "client1").empty());
  }
}

TEST_CASE("kazoo: an unanswered ping drops the connection within two selects, nothing tells the holder") {
  // connection.py:586-600: select() for read_timeout/2 - jitter; a ping; another
  // select with the ping unanswered: ConnectionDropped. 4 s session: read_timeout 2.667 s.
  const RunResult r = run_text(scenario("kazoo@2.8.0", kKazooLock, kZk,
                                        "[[client]]\nname = \"client1\"\nwork = \"6s\"\n"
                                        "[[fault]]\nat = \"1s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"zk1\"]]\nduration = \"2s\"\n"));
  const auto notified = events_of(r, Ev::Notified, "client1");
  REQUIRE(notified.size() >= 2);
  CHECK(notified[0]->value == static_cast<std::int64_t>(LibrarySignal::Suspended));
  CHECK(notified[0]->at > at_ms(1000));
  CHECK(notified[0]->at <= at_ms(1000 + 2667 + 10));
  // Reconnected, or LOST if its reconnect went out during the partition and
  // waited its whole connect timeout (the session timeout): either way the
  // job was not told, and wrote.
  CHECK(notified[1]->value != static_cast<std::int64_t>(LibrarySignal::Suspended));
  CHECK(events_of(r, Ev::Lost, "client1").empty());
  CHECK(events_of(r, Ev::Wrote, "client1").size() == 1);
}

TEST_CASE("kazoo: the lock's token is its node's czxid, and a second client waits on its predecessor") {
  const RunResult r = run_text(scenario("kazoo@2.8.0", kKazooLock + "\nfencing = \"token\"", kZk,
                                        "[[client]]\nname = \"client1\"\nwork = \"1s\"\n"
                                        "[[client]]\nname = \"client2\"\nstart = \"100ms\"\nwork = \"1s\"\n"));
  const auto a1 = events_of(r, Ev::Acquired, "client1");
  const auto a2 = events_of(r, Ev::Acquired, "client2");
  REQUIRE(a1.size() == 1);
  REQUIRE(a2.size() == 1);
  CHECK(a1[0]->token > 0);
  CHECK(a2[0]->token > a1[0]->token);
  CHECK(a2[0]->at > events_of(r, Ev::Releasing, "client1")[0]->at);
  CHECK(r.verdict.empty());
}

// --- python-etcd3 0.12.0 (etcd3/locks.py) and etcd3 1.1.2 for Node (lib/lock.js, lib/lease.js) ---

namespace {
const std::string kEtcd = "[[node]]\nname = \"etcd1\"\n";
std::string etcd_pause(const std::string& client1_keys) {
  // client2 still holds the lock when client1 resumes, checks and releases.
  return "[[client]]\nname = \"client1\"\nwork = \"1s\"\n" + client1_keys +
         "[[client]]\nname = \"client2\"\nstart = \"500ms\"\nwork = \"3s\"\n" + kPauseAfterRead;
}
}  // namespace

TEST_CASE("python-etcd3: no keepalive: a lock held past its lease is lost without a pause") {
  // locks.py:83-100: a lease of ttl per try, nothing renews it (refresh() is the application's).
  const RunResult r = run_text(scenario("python-etcd3@0.12.0", "lease_ttl = \"2s\"", kEtcd,
                                        "[[client]]\nname = \"client1\"\nwork = \"4s\"\n"
                                        "[[client]]\nname = \"client2\"\nstart = \"500ms\"\nwork = \"500ms\"\n"));
  REQUIRE(events_of(r, Ev::Acquired, "client2").size() == 1);
  CHECK(events_of(r, Ev::Acquired, "client2")[0]->at < at_ms(3000));
  // client2 waited while client1's key lived: its failed tries polled every 100 ms.
  CHECK(events_of(r, Ev::Acquired, "client2")[0]->at > at_ms(2000));
  CHECK(r.verdict.count(ViolationKind::Overlap) == 1);
}

TEST_CASE("python-etcd3: is_acquired() is a round trip and stops the write, a refresh thread is paused with it") {
  const RunResult checked = run_text(scenario("python-etcd3@0.12.0", "lease_ttl = \"2s\"", kEtcd, etcd_pause("check = \"is-acquired\"\n")));
  CHECK(events_of(checked, Ev::Lost, "client1").size() == 1);
  CHECK(events_of(checked, Ev::Writing, "client1").empty());
  const RunResult refreshed = run_text(scenario("python-etcd3@0.12.0", "lease_ttl = \"2s\"\nrefresh_interval = \"500ms\"", kEtcd, etcd_pause("")));
  CHECK(events_of(refreshed, Ev::Renewed, "client1").empty());  // its first refresh was due in the pause
  CHECK(events_of(refreshed, Ev::Wrote, "client1").size() == 1);
  CHECK(refreshed.verdict.count(ViolationKind::StaleWrite) == 1);
  // Its release compares the value (locks.py:107-116): client2's key is left alone.
  CHECK(refreshed.verdict.count(ViolationKind::ForeignRelease) == 0);
}

TEST_CASE("python-etcd3: a Txn naming a lease that expired raises out of acquire(): the try ends, no retry") {
  // etcd1's answers to client1 held from 500 us for 3 s: the lease grant's
  // answer comes after its 2 s lease, the Txn then names a lease etcd no
  // longer has (LEASE_NOT_FOUND). locks.py:83-100: the gRPC error propagates
  // (tenacity's retry_never re-raises it), as measured live: NOT_FOUND
  // "etcdserver: requested lease not found", and client1's round ended.
  const RunResult r = run_text(scenario("python-etcd3@0.12.0", "lease_ttl = \"2s\"", kEtcd,
                                        "[[client]]\nname = \"client1\"\nwork = \"500ms\"\n"
                                        "[[client]]\nname = \"client2\"\nstart = \"1s\"\nwork = \"500ms\"\n"
                                        "[[fault]]\nat = \"500us\"\nkind = \"delay\"\nfrom = \"etcd1\"\nto = \"client1\"\n"
                                        "duration = \"3s\"\n"));
  CHECK(events_of(r, Ev::Acquired, "client1").empty());
  const auto failed = events_of(r, Ev::AcquireFailed, "client1");
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]->at > at_ms(3000));
  CHECK(failed[0]->at < at_ms(3100));  // at the Txn's answer, not a retry_delay later
  REQUIRE(events_of(r, Ev::Acquired, "client2").size() == 1);
  CHECK(r.verdict.empty());
}

TEST_CASE("etcd3 for Node: acquire() fails at once when held, the lease is kept alive every ttl/3, 'lost' after a pause") {
  // lock.js:61-81 (EtcdLockFailedError, never waits); lease.js:235-236 (ttl/3, one at once).
  const RunResult calm = run_text(scenario("etcd3-node@1.1.2", "lease_ttl = \"2s\"", kEtcd,
                                           "[[client]]\nname = \"client1\"\nwork = \"5s\"\n"
                                           "[[client]]\nname = \"client2\"\nstart = \"500ms\"\nwork = \"500ms\"\n"));
  std::size_t first_second = 0;
  for (const TraceEvent* e : events_of(calm, Ev::Command, "etcd1"))
    if (e->detail.find("LEASE KEEPALIVE") != std::string::npos && calm.world->trace().name(e->peer) == "client1" &&
        e->at < at_ms(1000))
      ++first_second;
  CHECK(first_second == 2);  // at once, and ttl/3 later
  // The keepalives hold it: client2 waits (trying every 100 ms) until client1 releases.
  CHECK(calm.verdict.empty());
  CHECK(events_of(calm, Ev::Acquired, "client2")[0]->at > events_of(calm, Ev::Releasing, "client1")[0]->at);
  // A pause past the lease: the 4 s one, a stale write; 'lost' after it.
  const RunResult r = run_text(scenario("etcd3-node@1.1.2", "lease_ttl = \"2s\"", kEtcd, etcd_pause("")));
  CHECK(signals(r, "client1", LibrarySignal::LeaseLost) == 1);
  CHECK(r.verdict.count(ViolationKind::StaleWrite) == 1);
}

TEST_CASE("etcd3 for Node: a keepalive answered TTL 0 is 'lost' at once, before twice the TTL has passed") {
  // lease.js:248-249, 266-277: after the pause (2.5 s) the stream's debounce
  // has passed; keepalive() again 100 ms later (2 x ttl not yet gone since the
  // last one, :223), and its answer, TTL 0, is the loss.
  const RunResult r = run_text(scenario("etcd3-node@1.1.2", "lease_ttl = \"2s\"", kEtcd,
                                        "[[client]]\nname = \"client1\"\nwork = \"3s\"\n"
                                        "[[fault]]\non = \"client1 read\"\nafter = \"100ms\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"2500ms\"\n"));
  const auto notified = events_of(r, Ev::Notified, "client1");
  REQUIRE(notified.size() == 1);
  const Instant resumed = events_of(r, Ev::Resumed, "client1")[0]->at;
  CHECK(notified[0]->at - resumed >= Duration::ms(100));
  CHECK(notified[0]->at - resumed <= Duration::ms(105));
}

}  // namespace library_flavours_test
