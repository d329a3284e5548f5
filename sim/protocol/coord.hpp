// The coordination services' protocol: the requests of ZooKeeper, etcd,
// Chubby and Consul (sim/servers/), their replies, and the watches they push.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/time.hpp"

namespace locksim {

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
  // Consul's HTTP API (sim/servers/consul/model.cpp)
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

std::string describe(const Request& r);
std::string describe(const Reply& r);
std::string describe(const Notify& n);

}  // namespace coord

}  // namespace locksim
