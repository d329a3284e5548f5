// A client's line to a coordination service: one request, its reply, or
// nullopt when the service did not answer in time.
#pragma once

#include "lockalgos/lock.hpp"

namespace locksim {

inline Task<std::optional<coord::Reply>> coord_call(Process& self, ProcId service, coord::Request req, Duration timeout) {
  auto reply = co_await self.call(service, std::move(req), timeout);
  if (!reply) co_return std::nullopt;
  co_return std::get<coord::Reply>(std::move(*reply));
}

// The messages a coordination server sends a client are numbered (Notify::seq).
// A gap means one was lost, which over TCP would have broken the connection:
// the client then re-reads what it waits on and sets its watch again, as a
// ZooKeeper client does on reconnecting (setWatches) and an etcd watch does
// resuming from its revision. A reply that came after its call timed out is
// discarded unseen and looks like a gap too: the re-read is harmless.
class ServerStream {
 public:
  // True if messages before `seq` went missing.
  bool gap(std::uint64_t seq) {
    const bool missing = last_ != 0 && seq > last_ + 1;
    if (seq > last_) last_ = seq;
    return missing;
  }
  void reset() { last_ = 0; }

 private:
  std::uint64_t last_ = 0;
};

inline coord::Request coord_request(coord::Op op, std::string path = {}, std::int64_t id = 0) {
  coord::Request r;
  r.op = op;
  r.path = std::move(path);
  r.id = id;
  return r;
}

std::unique_ptr<Lock> make_zookeeper(LockEnv env);
std::unique_ptr<Lock> make_etcd(LockEnv env);
Process& make_zookeeper_node(World& world, const NodeConfig& node, const LockConfig& lock);
Process& make_etcd_node(World& world, const NodeConfig& node, const LockConfig& lock);

}  // namespace locksim
