// Coordination services, each modelled as one linearizable server process
// (the ensemble's consensus is out of scope; sessions and leases are not).
//
// ZooKeeperServer (algorithms.md §5): sessions whose expiry the *server*
// decides — a session not heard from for its timeout expires at the first
// tickTime boundary strictly after that (ExpiryQueue.roundToNextInterval, on
// the server's monotonic clock: a deadline on a boundary gets one tick of
// grace) — ephemeral-sequential znodes with a global zxid, one-shot watches
// that belong to a session and die with it.
//
// EtcdServer (§6): leases with a TTL kept by the leader on its monotonic
// clock and revoked by a periodic check, keys with a global revision and a
// lease, Txn put-if-absent (+ the first-created key under the prefix), and
// delete watches.
//
// A restart is a new leader: it renews every session (ZooKeeper) and every
// lease (etcd's Promote) for a whole timeout from now.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace locksim {

class ZooKeeperServer : public Process {
 public:
  ZooKeeperServer(World& world, std::string name, const ClockSpec& clock, Duration tick_time,
                  std::int64_t first_zxid);

 protected:
  void on_message(Message& m) override;
  void on_crash() override;
  void on_restart() override;

 private:
  struct Session {
    ProcId client;
    Duration timeout;
    Instant expires;  // on our monotonic clock, a multiple of tick_time
    std::set<std::string> ephemerals;
  };
  struct Znode {
    std::int64_t czxid;
    std::int64_t session;
    ProcId owner;  // the session's client (a trace annotation)
  };
  struct Watch {
    ProcId client;
    std::int64_t session;
    bool operator==(const Watch&) const = default;
  };
  using Watches = std::map<std::string, std::vector<Watch>>;

  coord::Reply handle(const coord::Request& req, ProcId from);
  void notify(ProcId to, const std::string& path, const char* what);
  void touch(Session& s);
  Task<void> expire_sessions();  // once per tick, like SessionTrackerImpl
  void delete_node(const std::string& path, const char* why, ProcId requester);
  void fire(Watches& watches, const std::string& path, const char* what);

  Duration tick_;
  std::int64_t zxid_;
  std::int64_t next_session_ = 1;
  std::map<std::int64_t, Session> sessions_;
  std::map<std::string, Znode> nodes_;
  std::map<std::string, std::int64_t> sequence_;  // per parent
  Watches exists_watches_;  // path -> watchers
  Watches child_watches_;   // parent -> watchers
  std::map<ProcId, std::uint64_t> stream_;  // messages sent to each client: coord::Notify::seq
};

class EtcdServer : public Process {
 public:
  EtcdServer(World& world, std::string name, const ClockSpec& clock, std::int64_t first_revision);

 protected:
  void on_message(Message& m) override;
  void on_crash() override;
  void on_restart() override;

 private:
  struct Lease {
    ProcId client;
    Duration ttl;
    Instant expires;  // on our monotonic clock
  };
  struct Key {
    std::int64_t create_revision;
    std::int64_t lease;
    ProcId owner;  // trace annotation
  };

  coord::Reply handle(const coord::Request& req, ProcId from);
  void notify(ProcId to, const std::string& key);
  Task<void> revoke_expired();  // every 500 ms, like the lessor's revokeExpiredLeases loop
  void delete_key(const std::string& key, const char* why, ProcId requester);

  std::int64_t revision_;
  std::int64_t next_lease_ = 0x694d;  // lease ids look like etcd's
  std::map<std::int64_t, Lease> leases_;
  std::map<std::string, Key> keys_;
  std::map<std::string, std::vector<ProcId>> delete_watches_;
  std::map<ProcId, std::uint64_t> stream_;  // messages sent to each client: coord::Notify::seq
};

}  // namespace locksim
