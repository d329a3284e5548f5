// etcd's concurrency.Mutex (client/v3/concurrency/mutex.go, session.go), as
// `etcdctl lock` uses it (algorithms.md §6):
//
//   session:  Grant(lease_ttl), in whole seconds; KeepAlive: the first at
//             once, each next one due a third of the TTL after the last
//             response, sent by a loop that wakes every 500 ms; no response
//             for a whole TTL, seen by a loop that wakes every second:
//             Session.Done()
//   acquire:  key = prefix/<leaseID>; Txn: if CreateRevision(key) == 0 then
//             Put(key, lease) else Get(key); and Get(prefix, FirstCreate).
//             myRev = our key's create revision; the first key is ours: held
//             waitDeletes: while a key under the prefix has a create revision
//             below myRev, watch the newest such key, from the revision the
//             Get saw it at, until it is deleted
//             3.5 only: Get(key) again; gone -> ErrSessionExpired
//   release:  Delete(key) — over a gRPC stream on TCP, a request is not lost
//             while the connection lives: one that got no answer is sent again
//             until the server answers or the session ends (the key is named
//             after our lease: a late delete can never remove another's)
//
// Fencing token: myRev. The Mutex never interrupts a holder: a holder whose
// lease expired (a pause, a partition) is not told. Version "3.4" (v3.4.3 ..
// v3.4.30) returns from Lock() after waiting without re-checking the session,
// Jepsen's etcd 3.4.3 finding (#11456); "3.5" re-checks. A restarted client
// opens a new session (its keepalives died with it).
//
// Assumes: the holder's keepalives keep flowing while it holds the lock.
#include <algorithm>
#include <cstdio>

#include "lockalgos/etcd.hpp"

#include "lockalgos/coordination_common.hpp"
#include "lockalgos/wakeup.hpp"

namespace locksim {
namespace {

constexpr const char* kPrefix = "/lock/";

// [lock] flavour's names (the registry lists the same, with their help).
constexpr std::pair<std::string_view, EtcdFlavour> kEtcdFlavours[] = {
    {"go-mutex", EtcdFlavour::Mutex},
    {"python-etcd3", EtcdFlavour::PythonEtcd3},
    {"etcd3-node", EtcdFlavour::Etcd3Node},
};

class EtcdMutex final : public Lock {
 public:
  EtcdMutex(ClientEnv& env, const LockTargets& targets, const EtcdOptions& options)
      : env_(env), options_(options), etcd_(targets.nodes.front()), deleted_(env) {}

  Task<std::optional<Grant>> acquire() override {
    const Duration timeout = options_.request_timeout;
    if (lease_ == 0 || session_done_) co_await new_session(timeout);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(lease_));
    const std::string key = std::string(kPrefix) + hex;
    coord::Request txn = coord_request(coord::Op::PutIfAbsent, key, lease_);
    txn.data = kPrefix;
    const auto put = co_await call(std::move(txn), timeout);
    if (!put) {
      // Lock() fails, but the Put may have happened: a caller that gets an
      // error gives up its place, or our key would block everyone behind it.
      env_.spawn(delete_until_answered(key, lease_));
      co_return std::nullopt;
    }
    if (!put->ok) co_return std::nullopt;  // the lease is gone: ErrSessionExpired
    const std::int64_t my_rev = put->id;
    const Grant grant{key, my_rev, std::nullopt, env_.name_of(etcd_)};
    // No key under the prefix but ours, or ours was created first: we hold it.
    if (put->nodes.empty() || put->nodes.front().revision == my_rev) co_return grant;

    for (;;) {  // waitDeletes(prefix, myRev - 1)
      const auto keys = co_await call(coord_request(coord::Op::Range, kPrefix), timeout);
      if (!keys) {
        co_await env_.sleep(kRetry);
        continue;
      }
      const coord::Node* newest_lower = nullptr;
      for (const coord::Node& n : keys->nodes)
        if (n.revision < my_rev && (!newest_lower || n.revision > newest_lower->revision)) newest_lower = &n;
      if (!newest_lower) break;
      awaiting_ = newest_lower->path;
      // From the Get's revision: a delete in between is not missed (key.go:26-31).
      const auto watching = co_await call(coord_request(coord::Op::WatchDelete, awaiting_, keys->id), timeout);
      if (!watching) continue;  // the watch may not be set: look again
      co_await deleted_.wait();
    }
    if (options_.version == EtcdVersion::V3_5) {
      // v3.5: make sure our own key (and so our session) survived the wait.
      const auto mine = co_await call(coord_request(coord::Op::Range, key), timeout);
      if (!mine) {  // the Get failed: Unlock, and return its error
        co_await release(grant);
        co_return std::nullopt;
      }
      const bool still_there = std::any_of(mine->nodes.begin(), mine->nodes.end(),
                                           [&](const coord::Node& n) { return n.path == key; });
      if (!still_there) {
        env_.note(Ev::AttemptFailed, {.detail = "its key is gone while it waited: ErrSessionExpired"});
        co_await env_.yield();
        co_return std::nullopt;
      }
    }
    co_return grant;
  }

  Task<bool> release(const Grant& grant) override {
    const auto r = co_await call(coord_request(coord::Op::DeleteKey, grant.value),
                                 options_.request_timeout);
    if (!r) env_.spawn(delete_until_answered(grant.value, lease_));
    co_return r && r->ok && r->id == 1;
  }

  bool on_push(ProcId, const Payload& push) override {
    const auto* n = std::get_if<coord::Notify>(&push);
    if (!n) return false;
    // Ours, or a lost message that may have been ours (ServerStream): look again.
    if (stream_.gap(n->seq) || n->path == awaiting_) deleted_.fire();
    return true;
  }

 private:
  static constexpr Duration kRetry = Duration::ms(100);
  static constexpr Duration kRetryConnWait = Duration::ms(500);           // lease.go:86
  static constexpr Duration kFirstKeepAliveTimeout = Duration::s(3);      // DialTimeout (2 s) + 1 s

  Task<std::optional<coord::Reply>> call(coord::Request req, Duration timeout) {
    auto r = co_await env_.call_coord(etcd_, std::move(req), timeout);
    if (r && stream_.gap(r->seq)) deleted_.fire();  // a lost message: look again (ServerStream)
    co_return r;
  }

  Task<void> new_session(Duration timeout) {
    for (;;) {
      coord::Request grant = coord_request(coord::Op::LeaseGrant);
      grant.ttl = options_.lease_ttl;
      const auto r = co_await call(std::move(grant), timeout);
      if (r && r->ok) {
        lease_ = r->id;
        session_done_ = false;
        // KeepAlive(ctx, id): a fresh keepalive is due at once, and its
        // deadline before any response is DialTimeout + 1 s — etcdctl's 2 s
        // dial timeout — (etcd v3.6.14 client/v3/lease.go:193, 296-297;
        // etcdctl/ctlv3/ctl.go:33). The lessor's loops start with the
        // client's first KeepAlive and serve every lease after it (:312-315).
        next_keep_alive_ = env_.mono_now();
        deadline_ = env_.mono_now() + kFirstKeepAliveTimeout;
        if (!lessor_running_) {
          lessor_running_ = true;
          env_.spawn(send_keep_alive_loop());
          env_.spawn(deadline_loop());
        }
        co_return;
      }
      co_await env_.sleep(Duration::s(1));
    }
  }

  Task<void> delete_until_answered(std::string key, std::int64_t lease) {
    while (lease == lease_ && !session_done_) {
      co_await env_.sleep(Duration::s(1));
      if (lease != lease_) co_return;
      const auto answered = co_await call(coord_request(coord::Op::DeleteKey, key),
                                          options_.request_timeout);
      if (answered) co_return;
    }
  }

  // clientv3's lessor, etcd v3.6.14 client/v3/lease.go. sendKeepAliveLoop
  // (:586-619) wakes every retryConnWait = 500 ms (:86) and sends the
  // keepalive of each lease whose nextKeepAlive has passed; a response sets
  // the next one a third of the reply's TTL on, and the deadline a whole TTL
  // on (recvKeepAlive, :542-543) — so a keepalive goes out on the loop's
  // first wake-up after it is due. (Go's Before is strict; here a wake-up at
  // the very instant a keepalive falls due sends it, which is how the fresh
  // lease's first one, due at its creation, goes out at once.)
  Task<void> send_keep_alive_loop() {
    for (;;) {
      if (lease_ != 0 && !session_done_ && next_keep_alive_ <= env_.mono_now()) env_.spawn(keep_alive(lease_));
      co_await env_.sleep(kRetryConnWait);
    }
  }

  // One keepalive and its response. TTL 0 ("lease not found") closes the
  // session at once (:532-538). No answer within 500 ms: the next wake-up
  // sends again; the connection is in doubt, and a watch event may be lost
  // with it: a waiter reads again, as the watch would resume from its revision.
  Task<void> keep_alive(std::int64_t lease) {
    const auto r = co_await call(coord_request(coord::Op::KeepAlive, "", lease), kRetryConnWait);
    if (lease != lease_ || session_done_) co_return;
    if (!r) {
      deleted_.fire();
      co_return;
    }
    if (!r->ok) {
      session_done_ = true;
      co_return;
    }
    // By the reply's TTL, which the server may have raised to its minimum.
    next_keep_alive_ = env_.mono_now() + r->ttl / 3;
    deadline_ = env_.mono_now() + r->ttl;
  }

  // deadlineLoop (:562-583): every second, a lease whose deadline has passed
  // closes its keepalive channel: Session.Done() — which nobody tells the holder.
  Task<void> deadline_loop() {
    for (;;) {
      co_await env_.sleep(Duration::s(1));
      if (lease_ != 0 && !session_done_ && deadline_ < env_.mono_now()) session_done_ = true;
    }
  }

  ClientEnv& env_;
  const EtcdOptions& options_;
  ProcId etcd_;
  ClientWakeup deleted_;
  ServerStream stream_;
  std::string awaiting_;
  std::int64_t lease_ = 0;
  bool session_done_ = false;
  Instant next_keep_alive_;  // the lease's nextKeepAlive
  Instant deadline_;         // and its deadline
  bool lessor_running_ = false;
};

// python-etcd3 0.12.0's Lock (Debian python3-etcd3 0.12.0,
// /usr/lib/python3/dist-packages/etcd3/locks.py): one key, not a prefix
// of leased keys, and no keepalive at all.
//   :34, 43   the key: /locks/<name>
//   :47       its value: uuid.uuid1().bytes, once per Lock object
//   :83-100   each try grants a new lease of the lock's ttl, then a Txn: if
//             create_revision(key) == 0, put(key, uuid, lease), else get(key);
//             a failed try drops its lease (it lives on until its TTL)
//   :58-74    acquire(timeout) retries until the timeout, waiting for an event
//             on the key in between (watch_once) — which Debian's tenacity 8.2
//             cannot call: the application polls acquire(timeout=0), a single
//             try, every retry_delay (default 100 ms), as the adapter does
//   :107-116  release(): a Txn, if value(key) == uuid then delete (here: the
//             key's lease is ours, the same test while we hold it)
//   :118-124  refresh(): one lease keepalive; nothing calls it but the
//             application (refresh_interval: a thread of its own, paused with it)
//   :126-133  is_acquired(): get(key), compare with our uuid: a round trip
//             (here: the key's create revision is the one our put made)
// Fencing token: the key's create revision (get(key)'s KVMetadata).
class PythonEtcd3Lock final : public Lock {
 public:
  PythonEtcd3Lock(ClientEnv& env, const LockTargets& targets, const EtcdOptions& options)
      : env_(env), options_(options), etcd_(targets.nodes.front()) {}

  Task<std::optional<Grant>> acquire() override {
    const Duration timeout = options_.request_timeout;
    for (;;) {
      coord::Request grant = coord_request(coord::Op::LeaseGrant);
      grant.ttl = options_.lease_ttl;
      const auto lease = co_await env_.call_coord(etcd_, std::move(grant), timeout);
      if (lease && lease->ok) {
        coord::Request txn = coord_request(coord::Op::PutIfAbsent, kKey, lease->id);
        txn.data = kKey;
        txn.watch = true;  // tell whether it succeeded
        const auto put = co_await env_.call_coord(etcd_, std::move(txn), timeout);
        if (put && put->ok && put->path == kKey) {
          lease_ = lease->id;
          my_rev_ = put->id;
          held_ = std::make_shared<bool>(true);
          if (options_.refresh_interval) env_.spawn(refresh_thread(lease_, held_));
          co_return Grant{kKey, my_rev_, std::nullopt, env_.name_of(etcd_)};
        }
        // An error answer (the lease expired before the Txn: LEASE_NOT_FOUND)
        // is not a lock held by another: the gRPC error propagates out of
        // _acquire (etcd3/locks.py:83-100, python3-etcd3 0.12.0: tenacity's
        // retry_never re-raises it) and acquire() raises, so the
        // application's try ends there. Measured
        // live: the grant's answer held past its 2 s TTL, the Txn raised
        // _InactiveRpcError NOT_FOUND "etcdserver: requested lease not found".
        if (put && !put->ok) co_return std::nullopt;
      }
      co_await env_.sleep(options_.retry_delay);
    }
  }

  Task<bool> release(const Grant&) override {
    if (held_) *held_ = false;
    coord::Request txn = coord_request(coord::Op::DeleteKey, kKey, lease_);
    const auto r = co_await env_.call_coord(etcd_, std::move(txn), options_.request_timeout);
    co_return r && r->ok && r->id == 1;
  }

  Task<bool> check(LibraryCheck, const Grant&) override {
    const auto r = co_await env_.call_coord(etcd_, coord_request(coord::Op::Range, kKey), options_.request_timeout);
    const bool mine = r && std::any_of(r->nodes.begin(), r->nodes.end(),
                                       [&](const coord::Node& n) { return n.path == kKey && n.revision == my_rev_; });
    if (mine) env_.note(Ev::Checked, {.detail = "is_acquired(): the key holds its uuid"});
    else env_.note(Ev::Lost, {.detail = r ? "is_acquired() is False: the key is gone or another's; it abandons the write"
                                          : "is_acquired() raised: no answer; it abandons the write"});
    co_await env_.yield();
    co_return mine;
  }

 private:
  static constexpr const char* kKey = "/locks/lock";

  // The application's refresh thread: lock.refresh() every refresh_interval.
  Task<void> refresh_thread(std::int64_t lease, std::shared_ptr<bool> held) {
    for (;;) {
      co_await env_.sleep(*options_.refresh_interval);
      if (!*held) co_return;
      const auto r = co_await env_.call_coord(etcd_, coord_request(coord::Op::KeepAlive, "", lease),
                                              options_.request_timeout);
      if (r && r->ok) env_.note(Ev::Renewed, {.value = (env_.mono_now() + r->ttl).ns()});
    }
  }

  ClientEnv& env_;
  const EtcdOptions& options_;
  ProcId etcd_;
  std::int64_t lease_ = 0;
  std::int64_t my_rev_ = 0;
  std::shared_ptr<bool> held_;
};

// etcd3 1.1.2's Lock for Node (npm etcd3@1.1.2, lib/lock.js, lib/lease.js):
//   lock.js:38      leaseTTL 30 s unless .ttl(seconds)
//   lock.js:61-81   acquire(): a new Lease (its grant, lease.js:101-119), then a
//                   Txn: if Create(key) == 0, put(key, '', lease); else release()
//                   (the lease revoked) and EtcdLockFailedError at once: it
//                   never waits. The application tries again every retry_delay
//                   (default 100 ms), as the adapter does
//   lock.js:92-97   release(): lease.revoke() (here: delete the key if it is our
//                   lease's, and stop keeping the lease alive)
//   lock.js:103-110 do(fn): acquire, fn, release — nothing between tells fn the
//                   lock is gone: `lease` is private, its 'lost' unheard
//   lease.js:219-259 keepalive(): a stream; setInterval(fireKeepAlive, ttl/3)
//                   from when it opens (a keepalive sent at once too); each
//                   reply resets a debounce of ttl (lastKeepAlive = Date.now())
//   lease.js:248-249, 266-277 a reply of TTL 0: EtcdLeaseInvalidError, 'lost';
//                   the debounce ending: the stream torn down, keepalive()
//                   again 100 ms later
//   lease.js:223-227 keepalive() finding Date.now() - lastKeepAlive > 2 x ttl:
//                   'lost'
// Fencing token: the key's create revision (a get of the key after acquire()).
class Etcd3NodeLock final : public Lock {
 public:
  Etcd3NodeLock(ClientEnv& env, const LockTargets& targets, const EtcdOptions& options)
      : env_(env), options_(options), etcd_(targets.nodes.front()) {}

  Task<std::optional<Grant>> acquire() override {
    const Duration timeout = options_.request_timeout;
    for (;;) {
      coord::Request grant = coord_request(coord::Op::LeaseGrant);
      grant.ttl = options_.lease_ttl;
      const auto lease = co_await env_.call_coord(etcd_, std::move(grant), timeout);
      if (lease && lease->ok) {
        const auto alive = std::make_shared<bool>(true);
        env_.spawn(keep_alive(lease->id, lease->ttl, alive));
        coord::Request txn = coord_request(coord::Op::PutIfAbsent, kKey, lease->id);
        txn.data = kKey;
        txn.watch = true;  // tell whether it succeeded
        const auto put = co_await env_.call_coord(etcd_, std::move(txn), timeout);
        const bool succeeded = put && put->ok && put->path == kKey;  // res.succeeded (lock.js:71)
        if (succeeded) {
          lease_ = lease->id;
          alive_ = alive;
          co_return Grant{kKey, put->id, std::nullopt, env_.name_of(etcd_)};
        }
        *alive = false;  // release(): the lease revoked, its keepalive closed
        co_await env_.call_coord(etcd_, coord_request(coord::Op::DeleteKey, kKey, lease->id), timeout);
      }
      co_await env_.sleep(options_.retry_delay);
    }
  }

  Task<bool> release(const Grant&) override {
    if (alive_) *alive_ = false;
    co_await env_.call_coord(etcd_, coord_request(coord::Op::DeleteKey, kKey, lease_), options_.request_timeout);
    co_return true;  // revoke() resolves; a LeaseInvalid error is swallowed (lease.js:144-151)
  }

 private:
  static constexpr const char* kKey = "lock";

  Task<void> keep_alive(std::int64_t lease, Duration ttl, std::shared_ptr<bool> alive) {
    Instant last = env_.wall_now();  // lastKeepAlive, on Date.now()
    for (;;) {
      if (env_.wall_now() - last > ttl * 2) {
        lose(alive, "lastKeepAlive is more than 2 x ttl ago");
        co_return;
      }
      // One stream: keepalives every ttl/3 from now; a reply resets the debounce.
      Instant debounce = env_.mono_now() + ttl;
      Instant next = env_.mono_now();
      for (;;) {
        if (!*alive) co_return;
        if (env_.mono_now() >= debounce) break;  // GRPCCancelledError: torn down
        if (env_.mono_now() >= next) {
          next = next + ttl / 3;
          const auto r = co_await env_.call_coord(etcd_, coord_request(coord::Op::KeepAlive, "", lease), ttl / 3);
          if (!*alive) co_return;
          if (r && !r->ok) {
            lose(alive, "a keepalive reply of TTL 0: EtcdLeaseInvalidError");
            co_return;
          }
          if (r) {
            last = env_.wall_now();
            debounce = env_.mono_now() + ttl;
          }
          continue;
        }
        co_await env_.sleep(min(next, debounce) - env_.mono_now());
      }
      co_await env_.sleep(Duration::ms(100));  // setTimeout(() => this.keepalive(), 100)
    }
  }

  void lose(const std::shared_ptr<bool>& alive, const char* why) {
    *alive = false;
    env_.note(Ev::Notified, {.value = static_cast<std::int64_t>(LibrarySignal::LeaseLost), .detail = why});
  }

  ClientEnv& env_;
  const EtcdOptions& options_;
  ProcId etcd_;
  std::int64_t lease_ = 0;
  std::shared_ptr<bool> alive_;
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_etcd(OptionReader& r, const LockConfig& common) {
  auto o = std::make_shared<EtcdOptions>();
  for (const auto& [name, flavour] : kEtcdFlavours)
    if (name == common.flavour) o->flavour = flavour;
  const bool library = o->flavour != EtcdFlavour::Mutex;
  if (library && r.has("version")) r.fail("version", "an option of the go-mutex flavour (concurrency.Mutex)");
  if (library) o->lease_ttl = o->flavour == EtcdFlavour::PythonEtcd3 ? Duration::s(60) : Duration::s(30);
  if (auto v = r.duration("retry_delay", Sign::Positive)) o->retry_delay = *v;
  if (auto v = r.duration("refresh_interval", Sign::Positive)) o->refresh_interval = *v;
  if (o->flavour != EtcdFlavour::PythonEtcd3 && o->refresh_interval)
    r.fail("refresh_interval", "an option of the python-etcd3 flavour (its Lock keeps nothing alive by itself)");
  if (!library && r.has("retry_delay")) r.fail("retry_delay", "an option of the python-etcd3 and etcd3-node flavours");
  if (auto v = r.duration("request_timeout", Sign::Positive)) o->request_timeout = *v;
  if (auto v = r.integer("first_token", 0, INT64_MAX / 2)) o->first_token = *v;
  if (auto v = r.duration("lease_ttl", Sign::Positive)) {
    // Grant(ctx, ttl int64): a lease's TTL is a number of seconds (etcd
    // v3.6.14 client/v3/lease.go:215; the server's LeaseGrantRequest.TTL too).
    if (v->count_ns() % Duration::s(1).count_ns() != 0)
      r.fail("lease_ttl", "etcd grants leases in whole seconds (Grant(ctx, ttl int64)): \"" + format_duration(*v) +
                              "\" is not one");
    o->lease_ttl = *v;
  }
  if (auto v = r.duration("election_timeout", Sign::Positive)) o->election_timeout = *v;
  if (auto v = r.choice<EtcdVersion>("version", {{"3.4", EtcdVersion::V3_4}, {"3.5", EtcdVersion::V3_5}})) o->version = *v;
  return o;
}

std::unique_ptr<Lock> make_etcd(ClientEnv& env, const LockTargets& targets, const LockConfig&,
                                const EtcdOptions& options) {
  if (options.flavour == EtcdFlavour::PythonEtcd3) return std::make_unique<PythonEtcd3Lock>(env, targets, options);
  if (options.flavour == EtcdFlavour::Etcd3Node) return std::make_unique<Etcd3NodeLock>(env, targets, options);
  return std::make_unique<EtcdMutex>(env, targets, options);
}

}  // namespace locksim
