// A client's connection to one Redis node: a command with the lock's request
// timeout, and the reply (nullopt when the node did not answer in time).
#pragma once

#include "lockalgos/lock.hpp"

namespace locksim {

// Defaults of the single-node recipes (redis-single, setnx, ...).
inline const DurationRange kDefaultRetryDelay = DurationRange::fixed(Duration::ms(100));
inline constexpr Duration kDefaultRequestTimeout = Duration::s(2);  // Jedis's socket timeout

class RedisConnection {
 public:
  RedisConnection(Process& self, ProcId node, const LockConfig& config)
      : RedisConnection(self, node, config.request_timeout.value_or(kDefaultRequestTimeout)) {}
  RedisConnection(Process& self, ProcId node, Duration timeout) : self_(self), node_(node), timeout_(timeout) {}

  // The commands the lock algorithms send, by name.
  Task<std::optional<redis::Reply>> get(std::string key) { return call(cmd(redis::Op::Get, std::move(key))); }
  Task<std::optional<redis::Reply>> del(std::string key) { return call(cmd(redis::Op::Del, std::move(key))); }
  Task<std::optional<redis::Reply>> set(std::string key, std::string value) {
    return call(cmd(redis::Op::Set, std::move(key), std::move(value)));
  }
  Task<std::optional<redis::Reply>> setnx(std::string key, std::string value) {
    return call(cmd(redis::Op::SetNx, std::move(key), std::move(value)));
  }
  Task<std::optional<redis::Reply>> set_nx_px(std::string key, std::string value, Duration ttl) {
    redis::Request r = cmd(redis::Op::Set, std::move(key), std::move(value), ttl);
    r.nx = true;
    return call(std::move(r));
  }
  // The fencing variant: SET NX PX and, on success, INCR token_key, in one script.
  Task<std::optional<redis::Reply>> acquire_with_token(std::string key, std::string value, Duration ttl,
                                                       std::string token_key) {
    redis::Request r = cmd(redis::Op::AcquireWithToken, std::move(key), std::move(value), ttl);
    r.token_key = std::move(token_key);
    return call(std::move(r));
  }
  Task<std::optional<redis::Reply>> compare_and_delete(std::string key, std::string value) {
    return call(cmd(redis::Op::CompareAndDelete, std::move(key), std::move(value)));
  }
  Task<std::optional<redis::Reply>> compare_and_pexpire(std::string key, std::string value, Duration ttl) {
    return call(cmd(redis::Op::CompareAndPexpire, std::move(key), std::move(value), ttl));
  }

  Task<std::optional<redis::Reply>> redisson_trylock(std::string key, std::string value, Duration lease) {
    return call(cmd(redis::Op::RedissonTryLock, std::move(key), std::move(value), lease));
  }
  Task<std::optional<redis::Reply>> redisson_unlock(std::string key, std::string value) {
    return call(cmd(redis::Op::RedissonUnlock, std::move(key), std::move(value)));
  }
  Task<std::optional<redis::Reply>> subscribe(std::string channel) {
    return call(cmd(redis::Op::Subscribe, std::move(channel)));
  }

  Task<std::optional<redis::Reply>> call(redis::Request req) {
    auto reply = co_await self_.call(node_, std::move(req), timeout_);
    if (!reply) co_return std::nullopt;
    co_return std::get<redis::Reply>(std::move(*reply));
  }
  ProcId id() const { return node_; }
  static bool is_one(const std::optional<redis::Reply>& r) {
    return r && r->kind == redis::Reply::Kind::Int && r->integer == 1;
  }
  static bool is_one_or_ok(const std::optional<redis::Reply>& r) { return is_one(r) || (r && r->is_ok()); }
  const std::string& name() const { return self_.world().trace().name(node_); }

 private:
  static redis::Request cmd(redis::Op op, std::string key, std::string value = {}, Duration px = Duration::zero()) {
    redis::Request r;
    r.op = op;
    r.key = std::move(key);
    r.value = std::move(value);
    r.px = px;
    return r;
  }

  Process& self_;
  ProcId node_;
  Duration timeout_;
};

std::unique_ptr<Lock> make_redis_single(LockEnv env);
std::unique_ptr<Lock> make_setnx(LockEnv env);
std::unique_ptr<Lock> make_redlock(LockEnv env);
std::unique_ptr<Lock> make_getset(LockEnv env);
std::unique_ptr<Lock> make_redisson(LockEnv env);
std::unique_ptr<Lock> make_setnx_timestamp(LockEnv env);

}  // namespace locksim
