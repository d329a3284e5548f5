// etcd's concurrency.Mutex (client/v3/concurrency/mutex.go, session.go), as
// `etcdctl lock` uses it (algorithms.md §6):
//
//   session:  Grant(lease_ttl); KeepAlive every ttl/3
//   acquire:  key = prefix/<leaseID>; Txn: if CreateRevision(key) == 0 then
//             Put(key, lease); myRev = its create revision
//             waitDeletes: while a key under the prefix has a create revision
//             below myRev, watch the newest such key until it is deleted
//             3.5 only: Get(key) again; gone -> ErrSessionExpired
//   release:  Delete(key)
//
// Fencing token: myRev. The Mutex never interrupts a holder: a holder whose
// lease expired (a pause, a partition) is not told. Version "3.4" (v3.4.3 ..
// v3.4.30) returns from Lock() after waiting without re-checking the session,
// Jepsen's etcd 3.4.3 finding (#11456); "3.5" re-checks.
//
// Assumes: the holder's keepalives keep flowing while it holds the lock.
#include <algorithm>
#include <cstdio>

#include "lockalgos/coordination_common.hpp"
#include "sim/coordination.hpp"

namespace locksim {
namespace {

constexpr const char* kPrefix = "/lock/";

class EtcdMutex final : public Lock {
 public:
  explicit EtcdMutex(LockEnv env) : env_(std::move(env)), etcd_(env_.nodes.front()), deleted_(env_.self) {}

  Task<std::optional<Grant>> acquire() override {
    const Duration timeout = env_.config.request_timeout.value_or(Duration::s(5));
    if (lease_ == 0 || session_done_) co_await new_session(timeout);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(lease_));
    const std::string key = std::string(kPrefix) + hex;
    const auto put = co_await call(coord_request(coord::Op::PutIfAbsent, key, lease_), timeout);
    if (!put || !put->ok) co_return std::nullopt;  // the lease is gone: ErrSessionExpired
    const std::int64_t my_rev = put->id;

    bool waited = false;
    for (;;) {  // waitDeletes
      const auto keys = co_await call(coord_request(coord::Op::Range, kPrefix), timeout);
      if (!keys) continue;
      const coord::Node* newest_lower = nullptr;
      for (const coord::Node& n : keys->nodes)
        if (n.revision < my_rev && (!newest_lower || n.revision > newest_lower->revision)) newest_lower = &n;
      if (!newest_lower) break;
      waited = true;
      awaiting_ = newest_lower->path;
      co_await call(coord_request(coord::Op::WatchDelete, awaiting_), timeout);
      co_await deleted_.wait();
    }
    if (waited && env_.config.version == "3.5") {
      // v3.5: make sure our own key (and so our session) survived the wait.
      const auto mine = co_await call(coord_request(coord::Op::Range, key), timeout);
      const bool still_there = mine && std::any_of(mine->nodes.begin(), mine->nodes.end(),
                                                   [&](const coord::Node& n) { return n.path == key; });
      if (!still_there) {
        env_.self.note(Ev::AttemptFailed, {.detail = "its key is gone while it waited: ErrSessionExpired"});
        co_await env_.self.yield();
        co_return std::nullopt;
      }
    }
    co_return Grant{key, my_rev, std::nullopt, env_.self.world().trace().name(etcd_)};
  }

  Task<bool> release(const Grant& grant) override {
    const auto r = co_await call(coord_request(coord::Op::DeleteKey, grant.value),
                                 env_.config.request_timeout.value_or(Duration::s(5)));
    co_return r && r->ok && r->id == 1;
  }

  bool on_push(Message& m) override {
    const auto* n = std::get_if<coord::Notify>(&m.body);
    if (!n) return false;
    if (n->path == awaiting_) deleted_.fire();
    return true;
  }

 private:
  Task<std::optional<coord::Reply>> call(coord::Request req, Duration timeout) {
    return coord_call(env_.self, etcd_, std::move(req), timeout);
  }

  Task<void> new_session(Duration timeout) {
    for (;;) {
      coord::Request grant = coord_request(coord::Op::LeaseGrant);
      grant.ttl = env_.config.lease_ttl;
      const auto r = co_await call(std::move(grant), timeout);
      if (r && r->ok) {
        lease_ = r->id;
        session_done_ = false;
        env_.self.spawn(keep_alive(lease_));
        co_return;
      }
      co_await env_.self.sleep(Duration::s(1));
    }
  }

  // The next keepalive goes out a third of the TTL after each response.
  Task<void> keep_alive(std::int64_t lease) {
    while (lease == lease_ && !session_done_) {
      co_await env_.self.sleep(env_.config.lease_ttl / 3);
      const auto r = co_await call(coord_request(coord::Op::KeepAlive, "", lease), env_.config.lease_ttl / 3);
      if (r && !r->ok) session_done_ = true;  // Session.Done(): nobody interrupts the holder
    }
  }

  LockEnv env_;
  ProcId etcd_;
  Wakeup deleted_;
  std::string awaiting_;
  std::int64_t lease_ = 0;
  bool session_done_ = false;
};

}  // namespace

std::unique_ptr<Lock> make_etcd(LockEnv env) { return std::make_unique<EtcdMutex>(std::move(env)); }

Process& make_etcd_node(World& world, const NodeConfig& node, const LockConfig& lock) {
  return world.add<EtcdServer>(node.name, node.clock, lock.first_token);
}

}  // namespace locksim
