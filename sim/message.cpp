#include "sim/message.hpp"

#include "sim/rng.hpp"

namespace locksim {

namespace redis {

std::string describe(const Request& r) {
  if (r.no_reply) {
    Request plain = r;
    plain.no_reply = false;
    return "CLIENT REPLY SKIP; " + describe(plain);
  }
  switch (r.op) {
    case Op::Get: return "GET " + r.key;
    case Op::Set: {
      std::string s = "SET " + r.key + " " + r.value;
      if (r.nx) s += " NX";
      if (!r.px.is_zero()) s += " PX " + std::to_string(r.px.whole_ms());
      if (r.pxat) s += " PXAT " + std::to_string(r.pxat->ns() / 1'000'000);
      return s;
    }
    case Op::SetNx: return "SETNX " + r.key + " " + r.value;
    case Op::Del: return "DEL " + r.key;
    case Op::Incr: return "INCR " + r.key;
    case Op::Exists: return "EXISTS " + r.key;
    case Op::Pttl: return "PTTL " + r.key;
    case Op::CompareAndDelete: return "EVAL compare-and-delete " + r.key + " " + r.value;
    case Op::AcquireWithToken:
      return "EVAL acquire-with-token " + r.key + " " + r.value + " PX " +
             std::to_string(r.px.whole_ms()) + " INCR " + r.token_key;
    case Op::RedissonTryLock:
      return "EVAL redisson-trylock " + r.key + " " + r.value + " " + std::to_string(r.px.whole_ms());
    case Op::RedissonUnlock: return "EVAL redisson-unlock " + r.key + " " + r.value;
    case Op::RedissonTryLockFenced:
      return "EVAL redisson-fenced-trylock " + r.key + " " + r.value + " " + std::to_string(r.px.whole_ms()) +
             " INCR " + r.token_key;
    case Op::Subscribe: return "SUBSCRIBE " + r.key;
    case Op::Ping: return "PING";
    case Op::ReplicaOfNoOne: return "REPLICAOF NO ONE";
    case Op::ReplicaOf: return "REPLICAOF " + r.key;
    case Op::GetMasterAddr: return "SENTINEL get-master-addr-by-name " + r.key;
    case Op::Info: return "INFO";
    case Op::Psync: return "PSYNC " + r.key + " " + std::to_string(r.offset);
    case Op::SentinelIsMasterDown: return "SENTINEL is-master-down-by-addr " + r.key + " " + r.value;
    case Op::Publish: return "PUBLISH " + r.key + " " + r.value;
    case Op::Wait: return "WAIT " + std::to_string(r.offset) + " " + std::to_string(r.px.whole_ms());
    case Op::ReplconfGetack: return "REPLCONF GETACK *";
    case Op::ReplconfAck: return "REPLCONF ACK " + std::to_string(r.offset);
    case Op::Pexpire: return "PEXPIRE " + r.key + " " + std::to_string(r.px.whole_ms());
    case Op::CompareAndPexpire:
      return "EVAL compare-and-pexpire " + r.key + " " + r.value + " " + std::to_string(r.px.whole_ms());
  }
  return "?";
}

std::string describe(const Reply& r) {
  switch (r.kind) {
    case Reply::Kind::Nil: return "(nil)";
    case Reply::Kind::Ok: return r.integer ? "OK " + std::to_string(r.integer) : "OK";
    case Reply::Kind::Int: return "(integer) " + std::to_string(r.integer);
    case Reply::Kind::Str: return "\"" + r.str + "\"";
    case Reply::Kind::Err: return "(error) " + r.str;
  }
  return "?";
}

}  // namespace redis

namespace storage {

std::string describe(const Request& r) {
  if (r.op == Request::Op::Read) return r.token >= 0 ? "READ counter token=" + std::to_string(r.token) : "READ counter";
  if (r.op == Request::Op::Claim) return "CLAIM owner=" + r.owner;
  std::string s = "WRITE counter=" + std::to_string(r.value);
  if (r.token >= 0) s += " token=" + std::to_string(r.token);
  if (!r.owner.empty()) s += " if owner=" + r.owner;
  return s;
}

std::string describe(const Reply& r) {
  if (!r.accepted) return "REJECTED (" + r.reason + ")";
  return "OK counter=" + std::to_string(r.value);
}

}  // namespace storage

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

std::string describe(const Payload& p) {
  return std::visit([](const auto& x) { return describe(x); }, p);
}


std::uint64_t fingerprint(const redis::Request& r) {
  std::uint64_t h = hash_mix(1, static_cast<std::uint64_t>(r.op) | std::uint64_t{r.nx} << 8 |
                               std::uint64_t{r.replicated} << 9 | std::uint64_t{r.no_reply} << 10);
  h = hash_mix(h, r.key);
  h = r.value.mix_into(h);  // its words, not its hex
  h = hash_mix(h, static_cast<std::uint64_t>(r.px.count_ns()));
  if (r.pxat) h = hash_mix(h, static_cast<std::uint64_t>(r.pxat->ns()));
  if (!r.token_key.empty()) h = hash_mix(h, r.token_key);
  if (r.offset != 0) h = hash_mix(h, static_cast<std::uint64_t>(r.offset));
  if (r.holds != 0) h = hash_mix(h, static_cast<std::uint64_t>(r.holds));
  return hash_mix(h, r.setter);
}

std::uint64_t fingerprint(const redis::Reply& r) {
  std::uint64_t h = hash_mix(2, static_cast<std::uint64_t>(r.kind));
  h = hash_mix(h, static_cast<std::uint64_t>(r.integer));
  return r.str.empty() ? h : hash_mix(h, r.str);
}

// The storage's messages come in every run of a scenario with a counter:
// their fields, not their description (every field describe() shows).
std::uint64_t fingerprint(const storage::Request& r) {
  std::uint64_t h = hash_mix(3, static_cast<std::uint64_t>(r.op));
  h = hash_mix(h, static_cast<std::uint64_t>(r.value));
  h = hash_mix(h, static_cast<std::uint64_t>(r.token));
  return r.owner.empty() ? h : hash_mix(h, r.owner);
}

std::uint64_t fingerprint(const storage::Reply& r) {
  std::uint64_t h = hash_mix(4, static_cast<std::uint64_t>(r.accepted));
  h = hash_mix(h, static_cast<std::uint64_t>(r.value));
  return r.reason.empty() ? h : hash_mix(h, r.reason);
}

std::uint64_t fingerprint(const Payload& p) {
  if (const auto* r = std::get_if<redis::Request>(&p)) return fingerprint(*r);
  if (const auto* r = std::get_if<redis::Reply>(&p)) return fingerprint(*r);
  if (const auto* r = std::get_if<storage::Request>(&p)) return fingerprint(*r);
  if (const auto* r = std::get_if<storage::Reply>(&p)) return fingerprint(*r);
  // The rest are rare (coordination services): their description will do.
  return hash_mix(fnv1a64(describe(p)), p.index());
}

}  // namespace locksim
