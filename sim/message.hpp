// What travels over the simulated network: requests and replies of the
// simulated servers. One variant, so the trace can describe every message.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "sim/lock_value.hpp"
#include "sim/time.hpp"

namespace locksim {

using ProcId = std::uint32_t;
inline constexpr ProcId kNoProc = ~ProcId{0};

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

namespace storage {

struct Request {
  // Claim: antirez's proposal — mark the resource as ours (owner = our lock value)
  // before working; with fencing = "lock-value" a write must then name the owner.
  enum class Op : std::uint8_t { Read, Write, Claim };
  Op op = Op::Read;
  std::int64_t value = 0;   // for Write: the new counter value
  std::int64_t token = -1;  // fencing token presented, -1: none
  std::string owner;        // Claim, Write: the lock value (fencing = "lock-value")
};

struct Reply {
  bool accepted = true;
  std::int64_t value = 0;  // Read: the counter; Write: the value now stored
  std::string reason;      // why a write was rejected
};

std::string describe(const Request& r);
std::string describe(const Reply& r);

}  // namespace storage

// Coordination services (ZooKeeper, etcd), modelled each as one linearizable
// service: their consensus is out of scope, their sessions and leases are not.
namespace coord {

enum class Op : std::uint8_t {
  // ZooKeeper
  Connect,      // a new session; ttl: the timeout asked for
  Ping,         // a session heartbeat
  Create,       // EPHEMERAL|SEQUENTIAL node under `path` (the parent), name prefix `data`
  GetChildren,  // children of `path`, in sequence order; watch: a one-shot child watch (the herd)
  Exists,       // does `path` exist; watch: a one-shot watch that fires when it is deleted
  Delete,       // delete `path`
  CloseSession, // ZooKeeper.close(): end session `id` now; its ephemeral nodes go with it
  // etcd
  LeaseGrant,   // ttl
  KeepAlive,    // id: the lease
  PutIfAbsent,  // Txn: if CreateRevision(path) == 0, Put(path, lease id); and Get(prefix `data`, FirstCreate).
                // reply: id = path's create revision, nodes = the first-created key under the prefix,
                // with watch: path = the key if this Txn put it (it succeeded), else empty
  Range,        // keys under the prefix `path`, with create revisions; reply: id = the store's revision
  WatchDelete,  // notify when `path` is deleted after revision `id` (a Range's; 0: now): at once if it was
  DeleteKey,    // delete `path`; with id (a lease): only if the key was put with that lease
  // Chubby (and Ping as its KeepAlive, Connect as its session)
  Acquire,      // the lock `path` for session `id`, lock-delay `delay`; answered when granted: id = its generation
  Release,      // the lock `path`, held by session `id`
  // Consul's HTTP API (sim/servers/consul.cpp)
  SessionCreate,   // PUT /v1/session/create: TTL `ttl`, LockDelay `delay`, Behavior `id` (0 release, 1 delete),
                   // watch: the node's serfHealth check; reply: id = the session, ttl
  SessionRenew,    // PUT /v1/session/renew/`id`; reply: ttl, or error SESSION_NOT_FOUND (the 404)
  SessionDestroy,  // PUT /v1/session/destroy/`id`
  KvAcquire,       // PUT /v1/kv/`path`?acquire=`id`; reply: id = 1 locked, 0 not; nodes = {the key}
  KvRelease,       // PUT /v1/kv/`path`?release=`id`; reply: id = 1 released, 0 not
  KvGet,           // GET /v1/kv/`path`?index=`id`&wait=`ttl` (id 0: at once); reply: id = X-Consul-Index,
                   // nodes = {the key} if it exists
};

struct Request {
  Op op = Op::Ping;
  std::string path;
  std::string data;
  std::int64_t id = 0;             // session or lease
  Duration ttl = Duration::zero();
  Duration delay = Duration::zero();  // Chubby, Consul: the lock-delay
  bool watch = false;
};

struct Node {
  std::string path;
  std::int64_t revision = 0;  // ZooKeeper: czxid; etcd: create revision; Consul: ModifyIndex
  std::int64_t lock_index = 0;  // Consul: the key's LockIndex
  std::int64_t session = 0;     // Consul: the session holding the key, 0: none
};

struct Reply {
  bool ok = true;
  std::string error;           // "SESSION_EXPIRED", "NO_NODE", "LEASE_NOT_FOUND", ...
  std::int64_t id = 0;         // session, lease, czxid, create revision
  Duration ttl = Duration::zero();
  std::string path;
  std::vector<Node> nodes;
  std::uint64_t seq = 0;       // the server's count of messages to this client (see Notify)
};

// Pushed by the service: a watch fired.
struct Notify {
  std::string path;
  std::string what;  // "deleted", "children-changed"
  // Numbered with the replies, in sending order: a client that sees a gap
  // lost a message, which over TCP would have broken the connection.
  std::uint64_t seq = 0;
};

}  // namespace coord

using Payload = std::variant<redis::Request, redis::Reply, storage::Request, storage::Reply, coord::Request,
                             coord::Reply, coord::Notify>;

// body.emplace<Body>() of a default Body, to fill in, without the zero-fill
// first: emplace<Body>() value-initializes, and for an aggregate such as
// redis::Request (184 bytes) g++ 12 clears it with `rep stos`, whose start-up
// costs more than writing the fields (issue 15: a tenth of Redlock's try in
// a profile). Default-initialized instead, then moved into place.
template <typename Body>
Body& emplace_default(Payload& body) {
  struct Default {
    operator Body() const {
      Body b;
      return b;
    }
  };
  return body.emplace<Body>(Default{});
}

namespace coord {
std::string describe(const Request& r);
std::string describe(const Reply& r);
std::string describe(const Notify& n);
}  // namespace coord

std::string describe(const Payload& p);

// A 64-bit fingerprint of a message's content, for the trace hash: cheap, and
// it changes whenever describe() would.
std::uint64_t fingerprint(const Payload& p);
std::uint64_t fingerprint(const redis::Request& r);
std::uint64_t fingerprint(const redis::Reply& r);

// Where the outcome of a call arrives: the reply, or null (it timed out on
// the caller's monotonic clock, or its destination refused it). The reply is
// the message's own body, valid during the call and the sink's to move from:
// it is not copied on its way (issue 15). A sink is called at most once per
// call, never from inside the call that started it, and not at all once the
// call is cancelled. `tag` is the caller's own (a fan-out's index, say).
// Owned by the caller: it must outlive its pending calls.
class ReplySink {
 public:
  virtual void on_reply(std::uint32_t tag, Payload* reply) = 0;

 protected:
  ~ReplySink() = default;
};

struct Message {
  std::uint64_t id = 0;
  std::uint64_t reply_to = 0;  // the request's id, for replies; 0 for requests
  ProcId from = kNoProc;
  ProcId to = kNoProc;
  Payload body;
  std::uint64_t content = 0;  // fingerprint(body), taken once when it is sent
};

}  // namespace locksim
