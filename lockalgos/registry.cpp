#include "lockalgos/registry.hpp"

#include <algorithm>
#include <array>

#include "lockalgos/chubby.hpp"
#include "lockalgos/consul.hpp"
#include "lockalgos/etcd.hpp"
#include "lockalgos/redis_common.hpp"
#include "lockalgos/redis_semaphore.hpp"
#include "lockalgos/redisson.hpp"
#include "lockalgos/redlock.hpp"
#include "lockalgos/zookeeper.hpp"

namespace locksim {

namespace {

// An algorithm's make, handed the options its parse made.
template <typename Options,
          std::unique_ptr<Lock> (*Make)(ClientEnv&, const LockTargets&, const LockConfig&, const Options&)>
std::unique_ptr<Lock> typed(ClientEnv& env, const LockTargets& targets, const LockConfig& config) {
  return Make(env, targets, config, config.options_as<Options>());
}

const OptionInfo kKey{"key", "the lock's key (default \"lock\")"};
const OptionInfo kRetryDelay{"retry_delay", "pause between tries, fixed or a range \"a..b\" (default 100ms)"};
const OptionInfo kRetryCount{"retry_count", "retries after the first try, or \"forever\" (default forever)"};
const OptionInfo kRequestTimeout{"request_timeout", "how long a command may take before the client gives up on it (default 2s)"};

// Redlock holds the lock with a majority of the masters (redis.io,
// "Distributed locks with Redis", step 3; RedissonRedLock's minLocksAmount
// n/2 + 1); MultiLock needs every one (RedissonMultiLock, failedLocksLimit 0).
std::size_t majority(std::size_t nodes) { return nodes / 2 + 1; }
std::size_t every(std::size_t nodes) { return nodes; }

const std::vector<AlgorithmInfo>& table() {
  static const std::vector<AlgorithmInfo> algos = {
      {.name = "redis-single",
       .help = "SET key value NX PX ttl on one Redis node; release by compare-and-delete",
       .source = "redis.io, Distributed locks with Redis: the single-instance lock",
       .options = {kKey,
                   {"release", "\"compare-and-delete\" (default, one script) | \"del\" | \"get-then-del\" (broken variants)"},
                   kRetryDelay, kRetryCount, kRequestTimeout,
                   {"first_token", "with fencing = \"token\": the first token issued (default 1)"}},
       .flavours = {{"redis.io", "(default) the page's recipe: a 20-byte random value, valid until the request's start + ttl, 2 s command timeout"},
                    {"redis-py", "redis-py 4.3.4's Lock: a uuid1 token, no deadline kept (nothing checks the time), no command timeout, owned() a GET"}},
       .needs_ttl = true,
       .monotonic_token = true,
       .parse = parse_redis_single,
       .make = typed<RedisSingleOptions, make_redis_single>},
      {.name = "redlock",
       .help = "Redlock: SET NX PX on N independent masters; held with a majority within the validity time",
       .source = "redis.io, Distributed locks with Redis; redlock-rb, redlock-py, redsync, node-redlock",
       .options = {kKey,
                   {"retry_delay", "pause between tries (default: the flavour's: rb 200ms + U[0,50)ms, rb-2014 U[0,200)ms, py 200ms, redsync U[50,250)ms, node U[100,300)ms, in whole ms)"},
                   {"retry_count", "retries after the first try, or \"forever\" (default: rb 3, rb-2014 2, py 2, redsync 31, node 10)"},
                   {"request_timeout", "per command (default: rb 100ms, rb-2014 5s, redsync 5% of the ttl, py and node none)"},
                   {"drift_factor", "clock drift allowance as a fraction of the ttl (default 0.01)"},
                   {"auto_extend", "redsync, node-redlock-v5, -v4: extend (PEXPIRE if still ours, on a majority) when this much validity is left, e.g. \"500ms\" as node-redlock's using()"},
                   {"fanout", "\"sequential\" (one node after another) | \"parallel\" (all at once) (default: the flavour's)"},
                   {"collect", "with a parallel fan-out: \"quorum\" (go on at a majority of OKs; redsync: WithFailFast, also at a majority taken) | \"all\" (wait for every reply or its timeout) (default: the flavour's: node quorum, redsync all)"},
                   {"unlock", "\"wait\" (default: wait for every node's reply) | \"no-wait\" (CLIENT REPLY SKIP: send the unlock and go on)"},
                   {"check", "flavour redsync, with a client's check_before_write: \"until\" (default: Until(), the validity on its own clock) | \"valid\" (Valid(): GET on every node, every reply awaited, true iff a quorum holds our value; go-redsync/redsync#72)"},
                   {"redis_errors", "flavour redlock-py: \"raise\" (default, 1.0.7+: a RedisError on any node fails a try that won a quorum, MultipleRedlockException, no unlock) | \"ignore\" (1.0.6: an error is a no)"},
                   {"watchdog_timeout", "flavour redisson: each node's RLock lease, renewed by a watchdog (default 30s)"},
                   {"wait_time", "flavour redisson: tryLock's budget (default: lock(), rounds of n x 1.5 s forever)"},
                   {"replication_guard", "flavour redisson: \"check\" (default) | \"wait\" | \"none\", as for watchdog"},
                   {"slaves_sync_timeout", "flavour redisson: WAIT's timeout (default 1s)"}},
       .flavours = {{"redlock-rb", "(default) the gem redlock 2.0.6: sequential, CLOCK_MONOTONIC, drift ttl*1%+2ms, validity >= 0 accepted, 4 tries 200ms + U[0,50)ms apart with a new value each, 100ms command timeout, unlock all each try"},
                    {"redlock-rb-2014", "antirez's 2014 redlock.rb (the gem 0.0.1 alike): sequential, wall clock (Time.now), validity > 0, 3 tries with one value, U[0,200)ms after each, 5s command timeout"},
                    {"redlock-py", "redlock-py 1.0.8: sequential, wall clock, drift ttl*1%+2ms, 3 tries with one value, 200ms after each, no command timeout, a RedisError fails a try that won (see redis_errors)"},
                    {"redlock-py-1.0.2", "redlock-py 1.0.2 (before PR #3): as redlock-py but validity = ttl - (elapsed - drift), the drift added; drift ttl*1%+2ms unrounded; any error is a no"},
                    {"redsync", "go-redsync v4.17.0: parallel, every reply awaited (collect = \"quorum\": WithFailFast), monotonic clock, drift ttl*1% (no +2ms), 32 tries U[50,250)ms with one value, timeout 5% of ttl"},
                    {"node-redlock-v5", "npm redlock 5.0.0-beta.2: parallel, a round ends at a quorum for or against, expiration counted from before the first try, never checks validity at acquire, 11 tries, unlocks only at the end"},
                    {"redisson", "RedissonRedLock: an RLock per node in turn, a majority needed, ttl as the lease, no drift"},
                    {"node-redlock-v4", "npm redlock 4.2.0 (what `npm install redlock` gives): parallel, every reply awaited, Date.now() read at each try, validity > 0 checked, 11 tries unlocking after each; its extend() unlocks on a failed try"}},
       .needs_ttl = true,
       .parse = parse_redlock,
       .make = typed<RedlockOptions, make_redlock>,
       .grant_quorum = majority,
       .starting_nodes = 5},  // Redlock's page: five independent masters
      {.name = "watchdog",
       .help = "Redisson's RLock: a 30 s lease that a watchdog in the client renews every 10 s",
       .source = "redisson RedissonLock, RedissonBaseLock, RenewalTask",
       .options = {kKey,
                   {"watchdog_timeout", "the watchdog's lease, renewed every third of it (default 30s)"},
                   {"lease_time", "a fixed lease instead, with no watchdog (lock(leaseTime))"},
                   {"wait_time", "tryLock(waitTime): give up after this long on the wall clock (default: wait forever)"},
                   {"request_timeout", "per command (default 3s, Redisson's timeout)"},
                   {"replication_guard", "\"check\" (default: WAIT for the replicas after each lock write, and fail the lock if none acknowledged it; redisson >= 3.17.0) | \"wait\" (WAIT, count ignored; 3.12.5-3.16, or checkLockSyncedSlaves = false) | \"none\" (no WAIT; before 3.12.5)"},
                   {"slaves_sync_timeout", "WAIT's timeout (default 1s, Config.slavesSyncTimeout)"},
                   {"version", "\"4.7\" (default: unlock cancels the watchdog, a failed renewal is retried) | \"2.11\" (until 2.13.1: only an unlock that released cancels it, redisson#1602; a failed renewal stops it)"}},
       .takes_ttl = false,
       .parse = parse_redisson,
       .make = typed<RedissonOptions, make_redisson>},
      {.name = "fenced-lock",
       .help = "Redisson's RFencedLock: the watchdog lock plus a token INCRed on the same (replicated) master",
       .source = "redisson RedissonFencedLock",
       .options = {kKey,
                   {"watchdog_timeout", "the watchdog's lease, renewed every third of it (default 30s)"},
                   {"lease_time", "a fixed lease instead, with no watchdog"},
                   {"wait_time", "give up after this long on the wall clock (default: wait forever)"},
                   {"request_timeout", "per command (default 3s)"},
                   {"first_token", "the first token issued (default 1)"},
                   {"replication_guard", "\"check\" (default: WAIT for the replicas after each lock write, and fail the lock if none acknowledged it; redisson >= 3.17.0) | \"wait\" (WAIT, count ignored; 3.12.5-3.16, or checkLockSyncedSlaves = false) | \"none\" (no WAIT; before 3.12.5)"},
                   {"slaves_sync_timeout", "WAIT's timeout (default 1s, Config.slavesSyncTimeout)"}},
       .takes_ttl = false,
       .monotonic_token = true,
       .parse = parse_redisson,
       .make = typed<RedissonOptions, make_redisson_fenced>},
      {.name = "multilock",
       .help = "Redisson's MultiLock: an RLock on every node, all of them needed",
       .source = "redisson RedissonMultiLock",
       .options = {kKey,
                   {"watchdog_timeout", "each RLock's lease, renewed by a watchdog (default 30s)"},
                   {"lease_time", "a fixed lease instead, with no watchdog"},
                   {"wait_time", "tryLock's budget (default: lock(), rounds of n x 1.5 s forever)"},
                   {"request_timeout", "per command (default 3s)"},
                   {"replication_guard", "\"check\" (default: WAIT for the replicas after each lock write, and fail the lock if none acknowledged it; redisson >= 3.17.0) | \"wait\" (WAIT, count ignored; 3.12.5-3.16, or checkLockSyncedSlaves = false) | \"none\" (no WAIT; before 3.12.5)"},
                   {"slaves_sync_timeout", "WAIT's timeout (default 1s, Config.slavesSyncTimeout)"}},
       .takes_ttl = false,
       .parse = parse_redisson,
       .make = typed<RedissonOptions, make_redisson_multilock>,
       .grant_quorum = every,
       .starting_nodes = 3},  // over one node a MultiLock would be a plain lock
      {.name = "zookeeper",
       .help = "ZooKeeper's recipe (Curator InterProcessMutex): ephemeral-sequential node, lowest wins, watch the predecessor",
       .source = "zookeeper recipes.md; curator LockInternals, ConnectionStateManager; ClientCnxn, ExpiryQueue",
       .options = {{"session_timeout", "asked-for session timeout, clamped to [2, 20] x tick_time (default 10s)"},
                   {"tick_time", "the server's tick: session expiry is rounded up to it (default 2s)"},
                   {"on_suspended", "\"continue\" (default: Curator never interrupts a holder; give up at LOST) | \"stop\""},
                   {"watch", "\"predecessor\" (default) | \"parent\" (every waiter wakes on every change: the herd)"},
                   {"client", "the ZooKeeper client: \"3.9.3\" (default, Curator 5.9.0's: expires its session itself once nothing was heard for 4/3 of the timeout, checked when its send loop runs) | \"3.9.2\" (no client-side expiry)"},
                   {"reconnect_jitter", "the random sleep before each reconnect, after the host provider's 1 s spin (default: 0-999 ms drawn per attempt, as ClientCnxn does); a duration or range pins it"},
                   {"first_token", "the zxid the ensemble starts from (tokens are czxids; default 1)"}},
       .flavours = {{"curator", "(default) Curator 5.9.0's InterProcessMutex over ZooKeeper 3.9.3's client"},
                    {"kazoo", "kazoo 2.8.0's Lock: its own connection thread (pings at read_timeout/2 - jitter, SUSPENDED on a dropped connection, LOST only when a reconnect is refused); never tells a holder"}},
       .takes_ttl = false,
       .monotonic_token = true,
       .parse = parse_zookeeper,
       .make = typed<ZooKeeperOptions, make_zookeeper>,
       .server = ServerKind::ZooKeeper},
      {.name = "etcd",
       .help = "etcd's concurrency.Mutex: a leased key, wait for every older key to go; token = create revision",
       .source = "etcd client/v3/concurrency mutex.go, session.go; Jepsen etcd 3.4.3",
       .options = {{"lease_ttl", "the session lease, in whole seconds, kept alive at once and then a third of it after each response (default 10s, etcdctl lock's)"},
                   {"version", "\"3.5\" (default: re-checks its key after waiting) | \"3.4\" (does not: #11456)"},
                   {"election_timeout", "the cluster's election timeout (default 1s): leases shorter than ceil(1.5 x it) s are raised to that; a new leader adds it to every lease"},
                   {"request_timeout", "per request (default 5s)"},
                   {"first_token", "the revision the store starts from (default 1)"},
                   {"retry_delay", "python-etcd3, etcd3-node: the application's next acquire() after one that failed (default 100ms)"},
                   {"refresh_interval", "python-etcd3: the application's thread calls lock.refresh() this often (default: no such thread)"}},
       .flavours = {{"go-mutex", "(default) Go's concurrency.Mutex, as etcdctl lock runs it"},
                    {"python-etcd3", "python-etcd3 0.12.0's Lock: one key /locks/<name>, a new lease per try, no keepalive (lease_ttl default 60s)"},
                    {"etcd3-node", "etcd3 1.1.2's Lock for Node: a leased key, kept alive every ttl/3; acquire() never waits (lease_ttl default 30s)"}},
       .takes_ttl = false,
       .monotonic_token = true,
       .parse = parse_etcd,
       .make = typed<EtcdOptions, make_etcd>,
       .server = ServerKind::Etcd},
      {.name = "chubby",
       .help = "Chubby's lock: a session kept by held KeepAlives, Acquire answered on grant, lock-delay after a failed holder",
       .source = "Burrows 2006, The Chubby lock service, §2.3-2.8 (OSDI '06)",
       .options = {{"lock_delay", "how long a lock freed by its holder's failure stays unclaimable, at most 60s (default 60s: the paper's bound; it names no default)"},
                   {"grace", "the grace period after the local lease ends (default 45s)"},
                   {"first_token", "the first generation number (default 1)"}},
       .takes_ttl = false,
       .monotonic_token = true,
       .parse = parse_chubby,
       .make = typed<ChubbyOptions, make_chubby>,
       .server = ServerKind::Chubby},
      {.name = "consul",
       .help = "Consul's api.Lock: a KV key acquired with a session renewed every TTL/2; blocking GETs; lock-delay after an invalidated holder",
       .source = "hashicorp/consul api/lock.go, api/session.go RenewPeriodic; agent/consul session_ttl.go, kvs_endpoint.go, state/kvs.go, state/session.go",
       .options = {{"session_ttl", "the session's TTL, in [10s, 24h] (default 15s, api/lock.go's); the leader ends it after ttl_multiplier x TTL unrenewed"},
                   {"lock_delay", "how long a key released by an invalidated session stays unlockable, 0 to 60s (default 15s; with api-lock a 0 is not sent and the agent applies 15s, with http it is sent)"},
                   {"lock_wait_time", "how long each blocking GET of the key waits (default 15s)"},
                   {"behavior", "what an invalidated session does to its key: \"release\" (default) | \"delete\" (LockIndex starts again at 1)"},
                   {"checks", "\"serfHealth\" (default: a crashed client's node fails gossip and its session ends about 5 s later) | \"none\" (the TTL alone)"},
                   {"token", "the fencing token: \"lock-index\" (default: the key's LockIndex) | \"modify-index\""},
                   {"ttl_multiplier", "the servers' SessionTTLMultiplier (default 2)"},
                   {"first_token", "the Raft index the cluster starts from (ModifyIndex; default 1)"}},
       .flavours = {{"api-lock", "(default) the Go client's api.Lock: Session.Create leaves a zero LockDelay out, so the agent's 15s applies"},
                    {"http", "the same steps by direct HTTP calls (curl, a hand-written client): the session's LockDelay is sent as given, 0 included"}},
       .takes_ttl = false,
       .monotonic_token = true,
       .parse = parse_consul,
       .make = typed<ConsulOptions, make_consul>,
       .server = ServerKind::Consul},
      {.name = "redis-semaphore",
       .help = "redis-semaphore's Mutex (one node) or RedlockMutex (a majority): SET NX PX, a refresh timer every 0.8 x lockTimeout, a local isAcquired flag",
       .source = "npm redis-semaphore@5.8.0 lib/Lock.js, mutex/*.js, redlockMutex/*.js",
       .options = {{"acquire_timeout", "acquireTimeout: acquire() gives up after this long on Date.now() (default 10s)"},
                   {"acquire_attempts_limit", "acquireAttemptsLimit: tries at most, or \"forever\" (default forever)"},
                   {"retry_interval", "retryInterval: the pause between tries (default 10ms)"},
                   {"refresh_interval", "refreshInterval: the refresh timer's period, 0 for none (default round(0.8 x ttl))"}},
       .flavours = {{"mutex", "(default) Mutex: one Redis node"},
                    {"redlock-mutex", "RedlockMutex: every node at once, round((n+1)/2) needed, no drift and no validity counted"}},
       .parse = parse_redis_semaphore,
       .make = typed<RedisSemaphoreOptions, make_redis_semaphore>,
       .grant_quorum = majority},
      {.name = "setnx",
       .help = "SETNX key value with no TTL, release DEL: a crashed holder keeps the lock forever",
       .source = "redis.io, SETNX: the naive locking pattern",
       .options = {kKey, kRetryDelay, kRetryCount, kRequestTimeout},
       .takes_ttl = false,
       .parse = parse_single_node,
       .make = typed<SingleNodeOptions, make_setnx>},
      {.name = "getset",
       .help = "GET key, then SET key value if it was nil: not atomic, no TTL, release DEL",
       .source = "the seed articles' Go example",
       .options = {kKey, kRetryDelay, kRetryCount, kRequestTimeout},
       .takes_ttl = false,
       .parse = parse_single_node,
       .make = typed<SingleNodeOptions, make_getset>},
      {.name = "setnx-timestamp",
       .help = "SETNX key <expiry timestamp>; an expired timestamp is DELeted and SETNX tried again (racy)",
       .source = "redis.io, SETNX: the old locking recipe, its unsafe DEL variant",
       .options = {kKey, kRetryDelay, kRetryCount, kRequestTimeout},
       .needs_ttl = true,
       .parse = parse_single_node,
       .make = typed<SingleNodeOptions, make_setnx_timestamp>},
  };
  return algos;
}

}  // namespace

std::span<const AlgorithmInfo> algorithms() { return table(); }

const AlgorithmInfo* find_algorithm(std::string_view name) {
  for (const AlgorithmInfo& a : table())
    if (a.name == name) return &a;
  return nullptr;
}

std::size_t grant_quorum(const AlgorithmInfo& a, std::size_t nodes) {
  return a.grant_quorum ? std::max<std::size_t>(1, a.grant_quorum(nodes)) : 1;
}

}  // namespace locksim
