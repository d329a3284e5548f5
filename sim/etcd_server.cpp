#include "sim/etcd_server.hpp"

namespace locksim {

using coord::Op;
using coord::Reply;
using coord::Request;

EtcdServer::EtcdServer(World& world, std::string name, const ClockSpec& clock, std::int64_t first_revision)
    : CoordinationServer(world, std::move(name), clock), revision_(first_revision - 1) {
  spawn(revoke_expired());
}

void EtcdServer::on_crash() {}
// A new leader's Promote: every lease gets its whole TTL again.
void EtcdServer::on_restart() {
  for (auto& [id, lease] : leases_) lease.expires = mono_now() + lease.ttl;
  spawn(revoke_expired());
}

Reply EtcdServer::handle(const Request& req, ProcId from) {
  Reply r;
  switch (req.op) {
    case Op::LeaseGrant: {
      const std::int64_t id = next_lease_++;
      leases_[id] = Lease{from, req.ttl, mono_now() + req.ttl};
      r.id = id;
      r.ttl = req.ttl;
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
      if (!leases_.count(req.id)) return error("LEASE_NOT_FOUND");
      auto it = keys_.find(req.path);
      if (it == keys_.end()) it = keys_.emplace(req.path, Key{++revision_, req.id, from}).first;
      r.id = it->second.create_revision;
      // The Txn's second op: Get(prefix `data`, FirstCreate) — the owner.
      for (auto k = keys_.lower_bound(req.data); k != keys_.end() && k->first.rfind(req.data, 0) == 0; ++k)
        if (r.nodes.empty() || k->second.create_revision < r.nodes[0].revision)
          r.nodes.assign(1, {k->first, k->second.create_revision});
      break;
    }
    case Op::Range:
      for (auto it = keys_.lower_bound(req.path); it != keys_.end() && it->first.rfind(req.path, 0) == 0; ++it)
        r.nodes.push_back({it->first, it->second.create_revision});
      break;
    case Op::WatchDelete:
      if (!keys_.count(req.path)) notify(from, req.path, "deleted");
      else watch(delete_watches_[req.path], from);
      break;
    case Op::DeleteKey:
      r.id = keys_.count(req.path) ? 1 : 0;  // etcd answers Deleted: 0 for a missing key
      delete_key(req.path, "", from);
      break;
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
  ++revision_;
  auto w = delete_watches_.find(key);
  if (w == delete_watches_.end()) return;
  const std::vector<ProcId> watchers = std::move(w->second);
  delete_watches_.erase(w);
  for (ProcId p : watchers) notify(p, key, "deleted");
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
