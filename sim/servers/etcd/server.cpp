#include "sim/servers/etcd/server.hpp"

namespace locksim {

using coord::Op;
using coord::Reply;
using coord::Request;

EtcdServer::EtcdServer(World& world, std::string name, const ClockSpec& clock, std::int64_t first_revision,
                       Duration election_timeout)
    : CoordinationServer(world, std::move(name), clock), election_timeout_(election_timeout),
      revision_(first_revision - 1) {
  spawn(revoke_expired());
}

Duration EtcdServer::min_lease_ttl(Duration election_timeout) {
  // etcd v3.6.14 server/etcdserver/server.go:353: minTTL :=
  // (3*ElectionTicks)/2 * heartbeat; :358 MinLeaseTTL = ceil(minTTL seconds).
  const std::int64_t heartbeat_ns = Duration::ms(100).count_ns();  // TickMs (embed/config.go:671)
  const std::int64_t election_ticks = election_timeout.count_ns() / heartbeat_ns;
  const std::int64_t min_ns = (3 * election_ticks) / 2 * heartbeat_ns;
  const std::int64_t second = Duration::s(1).count_ns();
  return Duration::s((min_ns + second - 1) / second);
}

void EtcdServer::on_crash() {}
// A new leader's Promote(ElectionTimeout()): every lease gets the election
// timeout on top of its whole TTL (etcd v3.6.14 server/etcdserver/server.go:1971-1973,
// server/lease/lessor.go:480-492, refresh(extend) in lease.go:84-89).
void EtcdServer::on_restart() {
  for (auto& [id, lease] : leases_) lease.expires = mono_now() + election_timeout_ + lease.ttl;
  spawn(revoke_expired());
}

Reply EtcdServer::handle(const Request& req, ProcId from) {
  Reply r;
  switch (req.op) {
    case Op::LeaseGrant: {
      const std::int64_t id = next_lease_++;
      // A TTL below the minimum is raised to it, silently; the reply carries
      // the raised TTL (etcd v3.6.14 server/lease/lessor.go:301-303, apply/apply.go:194).
      const Duration ttl = max(req.ttl, min_lease_ttl(election_timeout_));
      leases_[id] = Lease{from, ttl, mono_now() + ttl};
      r.id = id;
      r.ttl = ttl;
      break;
    }
    case Op::KeepAlive: {
      auto it = leases_.find(req.id);
      // An expired lease awaiting its revoke cannot be renewed (lessor.Renew).
      if (it == leases_.end() || it->second.expires <= mono_now()) return error("LEASE_NOT_FOUND");
      it->second.expires = mono_now() + it->second.ttl;
      r.id = req.id;
      r.ttl = it->second.ttl;
      break;
    }
    case Op::PutIfAbsent: {
      auto it = keys_.find(req.path);
      const bool created = it == keys_.end();
      // Only the branch the compare chose is checked: the Put's lease when the
      // key is absent, nothing when the Else branch only reads it (etcd v3.6.14
      // server/etcdserver/txn/txn.go:270-277 and :424-425 checkTxn on txnPath;
      // v3.4.23 etcdserver/apply.go:359-361, 949-952; found by diff-etcd).
      if (created && !leases_.count(req.id)) return error("LEASE_NOT_FOUND");
      holder_.try_emplace(req.data, kNoProc);  // the Txn names the lock's prefix: a lock from now on
      if (created) it = keys_.emplace(req.path, Key{++revision_, req.id, from}).first;
      r.id = it->second.create_revision;
      // Asked (watch: python-etcd3's and etcd3's Locks read the Txn's
      // `succeeded`), say whether this request put the key (message.hpp's
      // path); Go's Mutex does not ask, and its replies stay as they were.
      if (created && req.watch) r.path = req.path;
      if (created) note_holders(req.path);
      // The Txn's second op: Get(prefix `data`, FirstCreate) — the owner.
      for (auto k = keys_.lower_bound(req.data); k != keys_.end() && k->first.rfind(req.data, 0) == 0; ++k)
        if (r.nodes.empty() || k->second.create_revision < r.nodes[0].revision)
          r.nodes.assign(1, {k->first, k->second.create_revision});
      break;
    }
    case Op::Range:
      for (auto it = keys_.lower_bound(req.path); it != keys_.end() && it->first.rfind(req.path, 0) == 0; ++it)
        r.nodes.push_back({it->first, it->second.create_revision});
      r.id = revision_;  // the header's revision: where waitDeletes watches from
      break;
    case Op::WatchDelete: {
      // Watch(key, WithRev(rev)) sees every event from `rev` on (etcd v3.6.14
      // client/v3/concurrency/key.go:26-31; v3.4.23 clientv3/concurrency/key.go:26-31):
      // a key gone since, or deleted and created again since (its create
      // revision is then after `rev`), was deleted after it; found by diff-etcd.
      const auto it = keys_.find(req.path);
      if (it == keys_.end() || (req.id > 0 && it->second.create_revision > req.id)) notify(from, req.path, "deleted");
      else watch(delete_watches_[req.path], from);
      break;
    }
    case Op::DeleteKey: {
      // id: a Txn's compare first (python-etcd3's release: the value is ours;
      // etcd3's revoke of our lease): delete only a key put with lease `id`.
      const auto it = keys_.find(req.path);
      const bool match = it != keys_.end() && (req.id == 0 || it->second.lease == req.id);
      r.id = match ? 1 : 0;  // etcd answers Deleted: 0 for a missing key
      if (!match) break;     // and moves no revision for it
      ++revision_;
      delete_key(req.path, "", from);
      break;
    }
    default:
      return error("UNIMPLEMENTED");
  }
  return r;
}

void EtcdServer::delete_key(const std::string& key, const char* why, ProcId requester) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  if (*why) note(Ev::Expired, {.owner = it->second.owner, .key = key, .detail = why});
  else note(Ev::KeyDeleted, {.peer = requester, .owner = it->second.owner, .key = key});
  keys_.erase(it);
  note_holders(key);
  auto w = delete_watches_.find(key);
  if (w == delete_watches_.end()) return;
  const std::vector<ProcId> watchers = std::move(w->second);
  delete_watches_.erase(w);
  for (ProcId p : watchers) notify(p, key, "deleted");
}

// A lock prefix is held by the key under it with the lowest create revision:
// Mutex.Lock returns when the Txn's Get(prefix, FirstCreate) names its own
// key, or once waitDeletes has seen every key created before it deleted
// (etcd v3.6.14 client/v3/concurrency/mutex.go:80-84, 89, 122; key.go:49-63).
// A fact of the server's state, stated when it changes, for the judge.
void EtcdServer::note_holders(const std::string& key) {
  for (auto& [prefix, stated] : holder_) {
    if (key.rfind(prefix, 0) != 0) continue;
    const Key* first = nullptr;
    const std::string* first_key = nullptr;
    for (auto k = keys_.lower_bound(prefix); k != keys_.end() && k->first.rfind(prefix, 0) == 0; ++k)
      if (!first || k->second.create_revision < first->create_revision) {
        first = &k->second;
        first_key = &k->first;
      }
    const ProcId now = first ? first->owner : kNoProc;
    if (now == stated) continue;
    stated = now;
    std::string why;
    if (detailed()) why = first ? "its first-created key is " + *first_key : "it has no key left";
    note(Ev::Holder, {.owner = now, .key = prefix, .detail = std::move(why)});
  }
}

Task<void> EtcdServer::revoke_expired() {
  for (;;) {
    co_await sleep(Duration::ms(500));
    const Instant now = mono_now();
    std::vector<std::int64_t> expired;
    for (const auto& [id, lease] : leases_)
      if (lease.expires <= now) expired.push_back(id);
    for (std::int64_t id : expired) {
      std::vector<std::string> attached;
      for (const auto& [key, k] : keys_)
        if (k.lease == id) attached.push_back(key);
      // One write for all of the lease's keys: one revision, none when it has
      // no key (etcd v3.6.14 server/lease/lessor.go:343-361, one txn ended
      // once; mvcc/kvstore_txn.go:182-188 counts a revision only for a txn
      // that changed something; v3.4.23 lease/lessor.go:340-358; found by diff-etcd).
      if (!attached.empty()) ++revision_;
      for (const std::string& key : attached) delete_key(key, "because its lease expired: no keepalive for its TTL", kNoProc);
      leases_.erase(id);
    }
  }
}

// Leases, keys and watches.
void EtcdServer::digest(Digest& d) const {
  CoordinationServer::digest(d);
  d.add(revision_);
  d.add(next_lease_);
  for (const auto& [id, l] : leases_) {
    d.add(id);
    d.add(static_cast<std::uint64_t>(l.client));
    d.add(l.ttl);
    d.add(l.expires);
  }
  for (const auto& [key, k] : keys_) {
    d.add(key);
    d.add(k.create_revision);
    d.add(k.lease);
  }
  for (const auto& [key, watchers] : delete_watches_) {
    d.add(key);
    for (ProcId p : watchers) d.add(static_cast<std::uint64_t>(p));
  }
}

}  // namespace locksim
