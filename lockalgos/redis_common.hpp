// A client's connection to one Redis node: a command with the lock's request
// timeout, and the reply (nullopt when the node did not answer in time).
#pragma once

#include "lockalgos/lock.hpp"

namespace locksim {

// Defaults of the single-node recipes (redis-single, setnx, ...).
inline const DurationRange kDefaultRetryDelay = DurationRange::fixed(Duration::ms(100));
inline constexpr Duration kDefaultRequestTimeout = Duration::s(2);  // Jedis's socket timeout

// The single-node recipes' retry loop: try, and while retries are left, sleep
// retry_delay and try again.
class Retries {
 public:
  explicit Retries(const LockEnv& env)
      : self_(env.self),
        count_(env.config.retry_count.value_or(kForever)),
        delay_(env.config.retry_delay.value_or(kDefaultRetryDelay)) {}
  // After try number `attempt` (from 0) failed: is that the last one?
  bool spent(int attempt) const { return count_ != kForever && attempt >= count_; }
  auto pause() { return self_.sleep(delay_.draw(self_.rng())); }

 private:
  Process& self_;
  int count_;
  DurationRange delay_;
};

class RedisConnection {
 public:
  RedisConnection(const LockEnv& env, ProcId node)
      : RedisConnection(env, node, env.config.request_timeout.value_or(kDefaultRequestTimeout)) {}
  RedisConnection(const LockEnv& env, ProcId node, Duration timeout)
      : self_(env.self), node_(node), group_(node), sentinel_(env.sentinel), timeout_(timeout) {}

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
  // The same, after CLIENT REPLY SKIP: sent, and not waited for.
  void compare_and_delete_no_reply(std::string key, std::string value) {
    redis::Request r = cmd(redis::Op::CompareAndDelete, std::move(key), std::move(value));
    r.no_reply = true;
    self_.send(node_, std::move(r));
  }
  Task<std::optional<redis::Reply>> compare_and_pexpire(std::string key, std::string value, Duration ttl) {
    return call(cmd(redis::Op::CompareAndPexpire, std::move(key), std::move(value), ttl));
  }

  Task<std::optional<redis::Reply>> redisson_trylock(std::string key, std::string value, Duration lease) {
    return call(cmd(redis::Op::RedissonTryLock, std::move(key), std::move(value), lease));
  }
  Task<std::optional<redis::Reply>> redisson_fenced_trylock(std::string key, std::string value, Duration lease,
                                                            std::string token_key) {
    redis::Request r = cmd(redis::Op::RedissonTryLockFenced, std::move(key), std::move(value), lease);
    r.token_key = std::move(token_key);
    return call(std::move(r));
  }
  Task<std::optional<redis::Reply>> redisson_unlock(std::string key, std::string value) {
    return call(cmd(redis::Op::RedissonUnlock, std::move(key), std::move(value)));
  }
  Task<std::optional<redis::Reply>> subscribe(std::string channel) {
    return call(cmd(redis::Op::Subscribe, std::move(channel)));
  }

  // One command. If it fails (no answer, refused, or READONLY from a demoted
  // master) and a sentinel watches this group, ask it for the current master:
  // the next command goes there (redis-py's and Jedis's sentinel pools).
  Task<std::optional<redis::Reply>> call(redis::Request req) {
    auto reply = co_await self_.call(node_, std::move(req), timeout_);
    std::optional<redis::Reply> r;
    if (reply) r = std::get<redis::Reply>(std::move(*reply));
    const bool failed = !r || (r->kind == redis::Reply::Kind::Err && r->str.rfind("READONLY", 0) == 0);
    if (failed && sentinel_ != kNoProc) co_await rediscover();
    co_return r;
  }
  ProcId id() const { return node_; }
  static bool is_one(const std::optional<redis::Reply>& r) {
    return r && r->kind == redis::Reply::Kind::Int && r->integer == 1;
  }
  static bool is_one_or_ok(const std::optional<redis::Reply>& r) { return is_one(r) || (r && r->is_ok()); }
  const std::string& name() const { return self_.world().trace().name(node_); }

 private:
  Task<void> rediscover() {
    redis::Request ask;
    ask.op = redis::Op::GetMasterAddr;
    ask.key = self_.world().trace().name(group_);
    const auto answer = co_await self_.call(sentinel_, std::move(ask), timeout_);
    if (!answer) co_return;
    const auto* name = std::get_if<redis::Reply>(&*answer);
    if (!name || name->kind != redis::Reply::Kind::Str) co_return;
    if (const auto id = self_.world().find(name->str)) node_ = *id;
  }

  static redis::Request cmd(redis::Op op, std::string key, std::string value = {}, Duration px = Duration::zero()) {
    redis::Request r;
    r.op = op;
    r.key = std::move(key);
    r.value = std::move(value);
    r.px = px;
    return r;
  }

  Process& self_;
  ProcId node_;       // where commands go now
  ProcId group_;      // the master this connection was set up for (the sentinel's group name)
  ProcId sentinel_;
  Duration timeout_;
};

std::unique_ptr<Lock> make_redis_single(LockEnv env);
std::unique_ptr<Lock> make_setnx(LockEnv env);
std::unique_ptr<Lock> make_redlock(LockEnv env);
std::unique_ptr<Lock> make_getset(LockEnv env);
std::unique_ptr<Lock> make_redisson(LockEnv env);
std::unique_ptr<Lock> make_redisson_fenced(LockEnv env);
std::unique_ptr<Lock> make_redisson_multilock(LockEnv env);
std::unique_ptr<Lock> make_redisson_redlock(LockEnv env);
std::unique_ptr<Lock> make_setnx_timestamp(LockEnv env);

}  // namespace locksim
