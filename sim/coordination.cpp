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
  std::string detail = describe(*req) + " -> " + describe(r);
  const std::uint64_t content = fnv1a64(detail);
  server.note(Ev::Command, {.peer = m.from, .key = req->path, .content = content, .detail = std::move(detail)});
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

// A watcher is registered once per path, however often it asks (ZooKeeper's
// WatchManager keeps a set).
template <typename W>
void watch(std::vector<W>& watchers, W w) {
  if (std::find(watchers.begin(), watchers.end(), w) == watchers.end()) watchers.push_back(std::move(w));
}
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
// The sessions are in the snapshot; a new leader gives each a whole timeout.
void ZooKeeperServer::on_restart() {
  for (auto& [id, s] : sessions_) touch(s);
  spawn(expire_sessions());
}

void ZooKeeperServer::on_message(Message& m) {
  const auto answer = [this](const Request& r, ProcId from) {
    Reply out = handle(r, from);
    out.seq = ++stream_[from];
    return out;
  };
  if (!serve(*this, m, answer)) Process::on_message(m);
}

void ZooKeeperServer::notify(ProcId to, const std::string& path, const char* what) {
  coord::Notify n{path, what};
  n.seq = ++stream_[to];
  send(to, std::move(n));
}

void ZooKeeperServer::touch(Session& s) {
  // ExpiryQueue.roundToNextInterval: the first tick boundary *after* the
  // deadline, (t / tick + 1) * tick — on a boundary, one more tick of grace.
  const std::int64_t deadline = (mono_now() + s.timeout).ns();
  const std::int64_t tick = tick_.count_ns();
  s.expires = Instant::from_ns((deadline / tick + 1) * tick);
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
      nodes_[path] = Znode{++zxid_, req.id, session->second.client};
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
      if (req.watch) watch(child_watches_[req.path], {from, req.id});
      break;
    }
    case Op::Exists: {
      r.ok = nodes_.count(req.path) > 0;
      if (!r.ok) r.error = "NO_NODE";
      else if (req.watch) watch(exists_watches_[req.path], {from, req.id});
      break;
    }
    case Op::CloseSession: {
      const std::set<std::string> ephemerals = std::move(session->second.ephemerals);
      sessions_.erase(session);
      for (const std::string& path : ephemerals) delete_node(path, "", from);
      break;
    }
    case Op::Delete:
      if (!nodes_.count(req.path)) return error("NO_NODE");
      delete_node(req.path, "", from);
      break;
    default:
      return error("UNIMPLEMENTED");
  }
  return r;
}

void ZooKeeperServer::fire(Watches& watches, const std::string& path, const char* what) {
  auto it = watches.find(path);
  if (it == watches.end()) return;
  const std::vector<Watch> watchers = std::move(it->second);  // one-shot
  watches.erase(it);
  // A watch lives in its session's connection: an expired session's are gone.
  for (const Watch& w : watchers)
    if (sessions_.count(w.session)) notify(w.client, path, what);
}

// `why` empty: a client's delete request (from `requester`); else the reason
// the server removes the node itself.
void ZooKeeperServer::delete_node(const std::string& path, const char* why, ProcId requester) {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return;
  if (*why) note(Ev::Expired, {.owner = it->second.owner, .key = path, .detail = why});
  else note(Ev::KeyDeleted, {.peer = requester, .owner = it->second.owner, .key = path});
  if (auto s = sessions_.find(it->second.session); s != sessions_.end()) s->second.ephemerals.erase(path);
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
      // closeSession: the session (and its watches) go, then its ephemerals,
      // whose deletion fires the other sessions' watches.
      const std::set<std::string> ephemerals = std::move(sessions_.at(id).ephemerals);
      sessions_.erase(id);
      for (const std::string& path : ephemerals)
        delete_node(path, "because its session expired: the server had not heard from it for its timeout, rounded up to the tick", kNoProc);
    }
  }
}

// --- etcd ------------------------------------------------------------------

EtcdServer::EtcdServer(World& world, std::string name, const ClockSpec& clock, std::int64_t first_revision)
    : Process(world, std::move(name), ProcessRole::LockNode, clock), revision_(first_revision - 1) {
  spawn(revoke_expired());
}

void EtcdServer::on_crash() {}
// A new leader's Promote: every lease gets its whole TTL again.
void EtcdServer::on_restart() {
  for (auto& [id, lease] : leases_) lease.expires = mono_now() + lease.ttl;
  spawn(revoke_expired());
}

void EtcdServer::on_message(Message& m) {
  const auto answer = [this](const Request& r, ProcId from) {
    Reply out = handle(r, from);
    out.seq = ++stream_[from];
    return out;
  };
  if (!serve(*this, m, answer)) Process::on_message(m);
}

void EtcdServer::notify(ProcId to, const std::string& key) {
  coord::Notify n{key, "deleted"};
  n.seq = ++stream_[to];
  send(to, std::move(n));
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
      if (!keys_.count(req.path)) notify(from, req.path);
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
  for (ProcId p : watchers) notify(p, key);
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
