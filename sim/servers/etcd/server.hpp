// EtcdServer (algorithms.md §6): leases with a TTL kept by the leader on its
// monotonic clock and revoked by a periodic check, keys with a global
// revision and a lease, Txn put-if-absent (+ the first-created key under the
// prefix), and delete watches. A grant shorter than the minimum TTL is
// raised to it silently; a restart is a new leader (etcd's Promote): every
// lease gets the election timeout plus its whole TTL.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/servers/coordination_server.hpp"

namespace locksim {

class EtcdServer : public CoordinationServer {
 public:
  EtcdServer(World& world, std::string name, const ClockSpec& clock, std::int64_t first_revision,
             Duration election_timeout);

  // The shortest lease the server grants: ceil(floor(3 x election ticks / 2)
  // x heartbeat) in whole seconds, with the default 100 ms heartbeat — 2 s for
  // the default 1 s election timeout (etcd v3.6.14 server/etcdserver/server.go:353-358).
  static Duration min_lease_ttl(Duration election_timeout);
  // The store's revision now: etcd's ResponseHeader.revision for an answer given now.
  std::int64_t revision() const { return revision_; }
  void digest(Digest& d) const override;

 protected:
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

  coord::Reply handle(const coord::Request& req, ProcId from) override;
  Task<void> revoke_expired();  // every 500 ms, like the lessor's revokeExpiredLeases loop
  // Deletes `key` (if there) at the current revision: the caller moves it, once per write.
  void delete_key(const std::string& key, const char* why, ProcId requester);
  // States in the trace (Ev::Holder) who holds each lock prefix over `key` when that changed.
  void note_holders(const std::string& key);

  Duration election_timeout_;
  std::int64_t revision_;
  std::int64_t next_lease_ = 0x694d;  // lease ids look like etcd's
  std::map<std::int64_t, Lease> leases_;
  std::map<std::string, Key> keys_;
  std::map<std::string, std::vector<ProcId>> delete_watches_;
  std::map<std::string, ProcId> holder_;  // lock prefix -> the client last stated to hold it (a trace annotation)
};

}  // namespace locksim
