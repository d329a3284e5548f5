// etcd's concurrency.Mutex (client/v3/concurrency/mutex.go, session.go), as
// `etcdctl lock` uses it (algorithms.md §6):
//
//   session:  Grant(lease_ttl); KeepAlive a third of the TTL after each
//             response, again every 500 ms while one is overdue; no response
//             for a whole TTL: Session.Done()
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
  static constexpr Duration kOverdue = Duration::ms(500);

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
        // The server's TTL, which may be raised to its minimum: clientv3 keeps
        // alive by the reply's TTL (etcd v3.6.14 client/v3/lease.go:542-543).
        env_.spawn(keep_alive(lease_, r->ttl));
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

  // clientv3's lessor: the next keepalive is due a third of the TTL after
  // each response, and one overdue goes out every 500 ms until answered; a
  // whole TTL without a response (or "lease not found") closes the session,
  // Session.Done() — which nobody tells the holder.
  Task<void> keep_alive(std::int64_t lease, Duration ttl) {
    Instant next = env_.mono_now() + ttl / 3;
    Instant deadline = env_.mono_now() + ttl;
    while (lease == lease_ && !session_done_) {
      if (env_.mono_now() < next) {
        co_await env_.sleep(next - env_.mono_now());
        continue;
      }
      if (env_.mono_now() >= deadline) {
        session_done_ = true;
        co_return;
      }
      const Instant sent = env_.mono_now();
      const auto r = co_await call(coord_request(coord::Op::KeepAlive, "", lease), kOverdue);
      if (lease != lease_) co_return;
      if (r && !r->ok) session_done_ = true;
      else if (r) {
        next = env_.mono_now() + ttl / 3;
        deadline = env_.mono_now() + ttl;
      } else {
        next = sent + kOverdue;  // unanswered (or refused): again on the next 500 ms tick
        // The connection is in doubt, and a watch event may be lost with it: a
        // waiter reads again, as the watch would resume from its revision.
        deleted_.fire();
      }
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
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_etcd(OptionReader& r, const LockConfig&) {
  auto o = std::make_shared<EtcdOptions>();
  if (auto v = r.duration("request_timeout", Sign::Positive)) o->request_timeout = *v;
  if (auto v = r.integer("first_token", 0, INT64_MAX / 2)) o->first_token = *v;
  if (auto v = r.duration("lease_ttl", Sign::Positive)) o->lease_ttl = *v;
  if (auto v = r.duration("election_timeout", Sign::Positive)) o->election_timeout = *v;
  if (auto v = r.choice<EtcdVersion>("version", {{"3.4", EtcdVersion::V3_4}, {"3.5", EtcdVersion::V3_5}})) o->version = *v;
  return o;
}

std::unique_ptr<Lock> make_etcd(ClientEnv& env, const LockTargets& targets, const LockConfig&,
                                const EtcdOptions& options) {
  return std::make_unique<EtcdMutex>(env, targets, options);
}

}  // namespace locksim
