#include "sim/protocol/redis.hpp"

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

}  // namespace locksim
