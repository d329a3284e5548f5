#include "sim/coordination.hpp"

#include <algorithm>
#include <cstdio>

namespace locksim {

using coord::Op;
using coord::Reply;
using coord::Request;

namespace {
// Answer a coord::Request with `handle`, and record the command.
template <typename Server, typename Handle>
bool serve(Server& server, Message& m, Handle handle) {
  const auto* req = std::get_if<Request>(&m.body);
  if (!req) return false;
  Reply r = handle(*req, m.from);
  server.note(Ev::Command, {.peer = m.from, .key = req->path, .detail = describe(*req) + " -> " + describe(r)});
  server.reply(m, std::move(r));
  return true;
}

Reply error(std::string what) {
  Reply r;
  r.ok = false;
  r.error = std::move(what);
  return r;
}
std::string parent_of(const std::string& path) { return path.substr(0, path.rfind('/')); }
}  // namespace

// --- ZooKeeper -------------------------------------------------------------

ZooKeeperServer::ZooKeeperServer(World& world, std::string name, const ClockSpec& clock, Duration tick_time,
                                 std::int64_t first_zxid)
    : Process(world, std::move(name), ProcessRole::LockNode, clock), tick_(tick_time), zxid_(first_zxid - 1) {
  spawn(expire_sessions());
}

void ZooKeeperServer::on_crash() {
  // The ensemble is one service here: a crash of it loses nothing durable but the
  // sessions' connections; ZooKeeper's own recovery is out of scope.
}
void ZooKeeperServer::on_restart() { spawn(expire_sessions()); }

void ZooKeeperServer::on_message(Message& m) {
  if (!serve(*this, m, [this](const Request& r, ProcId from) { return handle(r, from); })) Process::on_message(m);
}

void ZooKeeperServer::touch(Session& s) {
  // ExpiryQueue: the deadline rounded up to the next tick boundary.
  const std::int64_t deadline = (mono_now() + s.timeout).ns();
  const std::int64_t tick = tick_.count_ns();
  s.expires = Instant::from_ns((deadline + tick - 1) / tick * tick);
}

Reply ZooKeeperServer::handle(const Request& req, ProcId from) {
  if (req.op == Op::Connect) {
    // Timeouts are clamped to [2, 20] x tickTime.
    const Duration timeout = max(tick_ * 2, min(req.ttl, tick_ * 20));
    const std::int64_t id = next_session_++;
    Session& s = sessions_[id] = Session{from, timeout, Instant::zero(), {}};
    touch(s);
    Reply r;
    r.id = id;
    r.ttl = timeout;
    return r;
  }
  auto session = sessions_.find(req.id);
  if (session == sessions_.end()) return error("SESSION_EXPIRED");
  touch(session->second);
  Reply r;
  switch (req.op) {
    case Op::Ping:
      break;
    case Op::Create: {
      char suffix[16];
      std::snprintf(suffix, sizeof suffix, "%010lld", static_cast<long long>(sequence_[req.path]++));
      const std::string path = req.path + "/" + req.data + suffix;
      nodes_[path] = Znode{++zxid_, req.id};
      session->second.ephemerals.insert(path);
      r.path = path;
      r.id = zxid_;
      fire(child_watches_, req.path, "children-changed");
      break;
    }
    case Op::GetChildren: {
      const std::string prefix = req.path + "/";
      for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.rfind(prefix, 0) == 0; ++it)
        r.nodes.push_back({it->first, it->second.czxid});
      // Lowest sequence number first (the suffix; the names differ in their GUIDs).
      std::sort(r.nodes.begin(), r.nodes.end(), [](const coord::Node& a, const coord::Node& b) {
        return a.path.substr(a.path.size() - 10) < b.path.substr(b.path.size() - 10);
      });
      if (req.watch) child_watches_[req.path].push_back(from);
      break;
    }
    case Op::Exists: {
      r.ok = nodes_.count(req.path) > 0;
      if (!r.ok) r.error = "NO_NODE";
      else if (req.watch) exists_watches_[req.path].push_back(from);
      break;
    }
    case Op::Delete:
      if (!nodes_.count(req.path)) return error("NO_NODE");
      session->second.ephemerals.erase(req.path);
      delete_node(req.path, "");
      break;
    default:
      return error("UNIMPLEMENTED");
  }
  return r;
}

void ZooKeeperServer::fire(std::map<std::string, std::vector<ProcId>>& watches, const std::string& path,
                           const char* what) {
  auto it = watches.find(path);
  if (it == watches.end()) return;
  const std::vector<ProcId> watchers = std::move(it->second);  // one-shot
  watches.erase(it);
  for (ProcId w : watchers) send(w, coord::Notify{path, what});
}

void ZooKeeperServer::delete_node(const std::string& path, const char* why) {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return;
  if (*why) {
    const auto s = sessions_.find(it->second.session);
    note(Ev::Expired, {.owner = s != sessions_.end() ? s->second.client : kNoProc, .key = path, .detail = why});
  }
  nodes_.erase(it);
  ++zxid_;
  fire(exists_watches_, path, "deleted");
  fire(child_watches_, parent_of(path), "children-changed");
}

Task<void> ZooKeeperServer::expire_sessions() {
  for (;;) {
    // Wake on the next tick boundary of our monotonic clock.
    const std::int64_t tick = tick_.count_ns();
    const std::int64_t next = (mono_now().ns() / tick + 1) * tick;
    co_await sleep(Instant::from_ns(next) - mono_now());
    const Instant now = mono_now();
    std::vector<std::int64_t> expired;
    for (const auto& [id, s] : sessions_)
      if (s.expires <= now) expired.push_back(id);
    for (std::int64_t id : expired) {
      const Session s = sessions_.at(id);
      for (const std::string& path : s.ephemerals)
        delete_node(path, "because its session expired: the server had not heard from it for its timeout, rounded up to the tick");
      sessions_.erase(id);
    }
  }
}

// --- etcd ------------------------------------------------------------------

EtcdServer::EtcdServer(World& world, std::string name, const ClockSpec& clock, std::int64_t first_revision)
    : Process(world, std::move(name), ProcessRole::LockNode, clock), revision_(first_revision - 1) {
  spawn(revoke_expired());
}

void EtcdServer::on_crash() {}
void EtcdServer::on_restart() { spawn(revoke_expired()); }

void EtcdServer::on_message(Message& m) {
  if (!serve(*this, m, [this](const Request& r, ProcId from) { return handle(r, from); })) Process::on_message(m);
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
      if (it == leases_.end()) return error("LEASE_NOT_FOUND");
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
      break;
    }
    case Op::Range:
      for (auto it = keys_.lower_bound(req.path); it != keys_.end() && it->first.rfind(req.path, 0) == 0; ++it)
        r.nodes.push_back({it->first, it->second.create_revision});
      break;
    case Op::WatchDelete:
      if (!keys_.count(req.path)) send(from, coord::Notify{req.path, "deleted"});
      else delete_watches_[req.path].push_back(from);
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
  for (ProcId p : watchers) send(p, coord::Notify{key, "deleted"});
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

}  // namespace locksim
