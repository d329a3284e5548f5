// Coordination services, each modelled as one linearizable server process
// (the ensemble's consensus is out of scope; sessions and leases are not).
//
// ZooKeeperServer (algorithms.md §5): sessions whose expiry the *server*
// decides — a session not heard from for its timeout expires at the next
// tickTime boundary at or after that (ExpiryQueue, on the server's monotonic
// clock) — ephemeral-sequential znodes with a global zxid, one-shot watches.
//
// EtcdServer (§6): leases with a TTL kept by the leader on its monotonic
// clock and revoked by a periodic check, keys with a global revision and a
// lease, Txn put-if-absent, and delete watches.
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
  };

  coord::Reply handle(const coord::Request& req, ProcId from);
  void touch(Session& s);
  Task<void> expire_sessions();  // once per tick, like SessionTrackerImpl
  void delete_node(const std::string& path, const char* why);
  void fire(std::map<std::string, std::vector<ProcId>>& watches, const std::string& path, const char* what);

  Duration tick_;
  std::int64_t zxid_;
  std::int64_t next_session_ = 1;
  std::map<std::int64_t, Session> sessions_;
  std::map<std::string, Znode> nodes_;
  std::map<std::string, std::int64_t> sequence_;  // per parent
  std::map<std::string, std::vector<ProcId>> exists_watches_;  // path -> watchers
  std::map<std::string, std::vector<ProcId>> child_watches_;   // parent -> watchers
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
  Task<void> revoke_expired();  // every 500 ms, like the lessor's revokeExpiredLeases loop
  void delete_key(const std::string& key, const char* why, ProcId requester);

  std::int64_t revision_;
  std::int64_t next_lease_ = 0x694d;  // lease ids look like etcd's
  std::map<std::int64_t, Lease> leases_;
  std::map<std::string, Key> keys_;
  std::map<std::string, std::vector<ProcId>> delete_watches_;
};

}  // namespace locksim
