// A client's connection to one Redis node: a command with the lock's request
// timeout, and the reply (nullopt when the node did not answer in time).
#pragma once

#include "lockalgos/lock.hpp"

namespace locksim {

class RedisConnection {
 public:
  RedisConnection(Process& self, ProcId node, const LockConfig& config)
      : self_(self), node_(node), timeout_(config.request_timeout) {}

  Task<std::optional<redis::Reply>> call(redis::Request req) {
    auto reply = co_await self_.call(node_, std::move(req), timeout_);
    if (!reply) co_return std::nullopt;
    co_return std::get<redis::Reply>(std::move(*reply));
  }
  ProcId id() const { return node_; }
  const std::string& name() const { return self_.world().trace().name(node_); }

 private:
  Process& self_;
  ProcId node_;
  Duration timeout_;
};

std::unique_ptr<Lock> make_redis_single(LockEnv env);
std::unique_ptr<Lock> make_setnx(LockEnv env);

}  // namespace locksim
