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
