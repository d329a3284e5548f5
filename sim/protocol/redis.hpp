// The Redis protocol: the commands the simulated Redis nodes and sentinels
// take (sim/servers/redis/) and their replies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/lock_value.hpp"
#include "sim/proc_id.hpp"
#include "sim/time.hpp"

namespace locksim {

namespace redis {

enum class Op : std::uint8_t {
  Get,
  Set,                // SET key value [NX] [PX ttl]
  SetNx,              // SETNX key value (no TTL)
  Del,
  Incr,
  Exists,
  Pttl,
  CompareAndDelete,   // EVAL: if GET(key) == value then DEL(key) (returns 1) else 0
  AcquireWithToken,   // EVAL: SET key value NX PX ttl; on OK, INCR token_key and return it
  CompareAndPexpire,  // EVAL: if GET(key) == value then PEXPIRE(key, ttl) (1) else 0
  // Redisson's RLock scripts (RedissonLock.java), the hash reduced to its one field.
  RedissonTryLock,    // absent or ours: set, PEXPIRE px, return nil; else return PTTL
  RedissonUnlock,     // not ours: nil; ours: DEL, PUBLISH the channel, return 1
  RedissonTryLockFenced,  // RFencedLock: as RedissonTryLock, and on success INCR token_key: OK carrying the token
  Subscribe,          // SUBSCRIBE key (the channel): pushes arrive as Str replies
  // Replication and Sentinel.
  Ping,
  ReplicaOfNoOne,     // the sentinel's transaction: SLAVEOF NO ONE (promote), then CLIENT KILL
  ReplicaOf,          // the same with SLAVEOF key (a node's name): follow it, resyncing; then CLIENT KILL
  GetMasterAddr,      // to a sentinel: SENTINEL get-master-addr-by-name key (the group)
  Info,               // INFO: the reply is its text ("role:master\r\n...")
  Psync,              // replica -> master: PSYNC key (replication id, "?": none) offset
  SentinelIsMasterDown,  // SENTINEL is-master-down-by-addr key (the master) value ("<epoch> <runid|*>")
  Publish,            // PUBLISH key (the channel) value (the message), e.g. a sentinel's hello
  // WAIT numreplicas timeout (redis 7.0.15 replication.c:3461-3498): offset
  // is numreplicas, px the timeout (zero: block until enough). The reply:
  // how many replicas acknowledged this client's last write.
  Wait,
  ReplconfGetack,     // master -> replica, in the replication stream: REPLCONF GETACK * (replication.c:1208-1213)
  ReplconfAck,        // replica -> master: REPLCONF ACK <offset> (replication.c:3216); no reply
  Pexpire,            // PEXPIRE key px: 1 if the key exists (its expiry set), else 0
  // (live/resp.cpp's table assumes Pexpire is the last op.)
};

struct Request {
  Op op = Op::Get;
  std::string key;
  LockValue value;  // random words on the hot path, text where the command carries other text
  bool nx = false;
  Duration px = Duration::zero();  // zero: no expiry
  std::optional<Instant> pxat;     // an absolute expiry (SET ... PXAT, on the master's wall clock)
  std::string token_key;           // for AcquireWithToken
  bool replicated = false;         // part of a master's replication stream, not a client's command
  ProcId setter = kNoProc;         // replication only: who wrote the value (a trace annotation)
  bool no_reply = false;           // preceded by CLIENT REPLY SKIP: the node sends no reply
  // Replication: the master's offset after this change (replicated), or the
  // first offset the replica wants (PSYNC).
  std::int64_t offset = 0;
  // Replication only: the count in a Redisson lock's hash (its one field's
  // HINCRBY count; 0: a plain string).
  std::int64_t holds = 0;
};

struct Reply {
  enum class Kind : std::uint8_t { Nil, Ok, Int, Str, Err };
  Kind kind = Kind::Nil;
  std::int64_t integer = 0;
  std::string str;

  static Reply nil() { return {}; }
  static Reply ok() { return {Kind::Ok, 0, {}}; }
  static Reply of(std::int64_t n) { return {Kind::Int, n, {}}; }
  static Reply of(std::string s) { return {Kind::Str, 0, std::move(s)}; }
  static Reply error(std::string s) { return {Kind::Err, 0, std::move(s)}; }
  bool is_ok() const { return kind == Kind::Ok; }
  bool is_nil() const { return kind == Kind::Nil; }
};

std::string describe(const Request& r);
std::string describe(const Reply& r);

}  // namespace redis

}  // namespace locksim
