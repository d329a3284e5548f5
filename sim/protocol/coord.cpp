#include "sim/protocol/coord.hpp"

namespace locksim {

namespace coord {

std::string describe(const Request& r) {
  switch (r.op) {
    case Op::Connect: return "CONNECT timeout=" + format_duration(r.ttl) + (r.id ? " session=" + std::to_string(r.id) : "");
    case Op::Ping: return "PING session=" + std::to_string(r.id);
    case Op::Create: return "CREATE " + r.path + "/" + r.data + " EPHEMERAL_SEQUENTIAL";
    case Op::GetChildren: return std::string("GETCHILDREN ") + r.path + (r.watch ? " watch" : "");
    case Op::Exists: return std::string("EXISTS ") + r.path + (r.watch ? " watch" : "");
    case Op::Delete: return "DELETE " + r.path;
    case Op::CloseSession: return "CLOSESESSION session=" + std::to_string(r.id);
    case Op::LeaseGrant: return "LEASE GRANT ttl=" + format_duration(r.ttl);
    case Op::KeepAlive: return "LEASE KEEPALIVE " + std::to_string(r.id);
    case Op::PutIfAbsent:
      return "TXN if create_revision(" + r.path + ")==0 then PUT " + r.path + " lease=" + std::to_string(r.id) +
             "; GET " + r.data + "* first-created";
    case Op::Range: return "RANGE " + r.path + "*";
    case Op::WatchDelete: return "WATCH delete " + r.path;
    case Op::DeleteKey: return "DELETE " + r.path;
    case Op::Acquire: return "ACQUIRE " + r.path + " session=" + std::to_string(r.id) + " lock-delay=" + format_duration(r.delay);
    case Op::Release: return "RELEASE " + r.path + " session=" + std::to_string(r.id);
    case Op::SessionCreate:
      return "PUT /v1/session/create TTL=" + format_duration(r.ttl) + " LockDelay=" + format_duration(r.delay) +
             " Behavior=" + (r.id == 1 ? "delete" : "release") + (r.watch ? " Checks=serfHealth" : " Checks=none");
    case Op::SessionRenew: return "PUT /v1/session/renew/" + std::to_string(r.id);
    case Op::SessionDestroy: return "PUT /v1/session/destroy/" + std::to_string(r.id);
    case Op::KvAcquire: return "PUT /v1/kv/" + r.path + "?acquire=" + std::to_string(r.id);
    case Op::KvRelease: return "PUT /v1/kv/" + r.path + "?release=" + std::to_string(r.id);
    case Op::KvGet:
      return "GET /v1/kv/" + r.path + (r.id ? "?index=" + std::to_string(r.id) + "&wait=" + format_duration(r.ttl) : "");
  }
  return "?";
}

std::string describe(const Reply& r) {
  if (!r.ok) return "ERROR " + r.error;
  std::string s = "OK";
  if (r.id) s += " " + std::to_string(r.id);
  if (!r.path.empty()) s += " " + r.path;
  if (r.nodes.size() == 1 && r.nodes[0].lock_index > 0) {  // a Consul key
    const Node& k = r.nodes[0];
    s += " " + k.path + " LockIndex=" + std::to_string(k.lock_index) + " ModifyIndex=" + std::to_string(k.revision) +
         " Session=" + (k.session ? std::to_string(k.session) : "none");
  } else if (!r.nodes.empty()) {
    s += " (" + std::to_string(r.nodes.size()) + " nodes)";
  }
  return s;
}

std::string describe(const Notify& n) { return "NOTIFY " + n.what + " " + n.path; }

}  // namespace coord

}  // namespace locksim
