// What the Redis recipes share: the commands they send, a connection to one
// node (with Sentinel rediscovery), the single-node retry loop.
#pragma once

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"
#include "lockalgos/when_all.hpp"
#include "sim/coroutine.hpp"

namespace locksim {

// Defaults of the single-node recipes (redis-single, setnx, ...).
inline const DurationRange kDefaultRetryDelay = DurationRange::fixed(Duration::ms(100));
inline constexpr Duration kDefaultRequestTimeout = Duration::s(2);  // Jedis's socket timeout

// The single-node recipes' options (setnx, getset, setnx-timestamp; redis-single adds its own).
struct SingleNodeOptions : AlgorithmOptions {
  std::optional<Duration> ttl;  // the common part's
  DurationRange retry_delay = kDefaultRetryDelay;
  int retry_count = kForever;   // retries after the first try
  Duration request_timeout = kDefaultRequestTimeout;
  // Without an expiry (setnx, getset) explore draws against 30 s, Redisson's watchdog lease.
  Duration lease() const override { return ttl.value_or(Duration::s(30)); }
};

inline void read_single_node(OptionReader& r, const LockConfig& common, SingleNodeOptions& o) {
  o.ttl = common.ttl;
  if (auto v = r.range("retry_delay")) o.retry_delay = *v;
  if (auto v = r.count("retry_count", 0)) o.retry_count = *v;
  if (auto v = r.duration("request_timeout", Sign::Positive)) o.request_timeout = *v;
}

// redis-single: how it releases (the catalogue's broken variants), and the
// fencing counter's first token.
enum class Release : std::uint8_t { CompareAndDelete, Del, GetThenDel };
// Whose single-instance lock: the redis.io page's, or redis-py 4.3.4's Lock.
enum class SingleFlavour : std::uint8_t { RedisIo, RedisPy };
struct RedisSingleOptions : SingleNodeOptions {
  SingleFlavour flavour = SingleFlavour::RedisIo;
  Release release = Release::CompareAndDelete;
  std::int64_t first_token = 1;
  ServerSetup server() const override { return {.first_token = first_token}; }
};

// The single-node recipes' retry loop: try, and while retries are left, sleep
// retry_delay and try again.
class Retries {
 public:
  Retries(ClientEnv& env, const SingleNodeOptions& o) : env_(env), count_(o.retry_count), delay_(o.retry_delay) {}
  // After try number `attempt` (from 0) failed: is that the last one?
  bool spent(int attempt) const { return count_ != kForever && attempt >= count_; }
  // The wait before the next try, noted (Ev::Retrying: the story tells the
  // tries that did not get the lock, `node` the one tried) and slept.
  auto pause(ProcId node) {
    const Duration wait = delay_.draw(env_.rng());
    env_.note(Ev::Retrying, {.peer = node, .value = wait.count_ns()});
    return env_.sleep(wait);
  }

 private:
  ClientEnv& env_;
  int count_;
  DurationRange delay_;
};

// The commands the lock algorithms send, by name.
namespace redis_cmd {
inline redis::Request make(redis::Op op, std::string key, LockValue value = {}, Duration px = Duration::zero()) {
  redis::Request r;
  r.op = op;
  r.key = std::move(key);
  r.value = std::move(value);
  r.px = px;
  return r;
}
// SET key value NX PX ttl written into a fresh request where it will leave
// (ClientEnv::stage): set_nx_px's request, not built and moved there.
inline void write_set_nx_px(redis::Request& r, const std::string& key, const LockValue& value, Duration ttl) {
  r.op = redis::Op::Set;
  r.key = key;
  r.value = value;
  r.px = ttl;
  r.nx = true;
}
inline redis::Request set_nx_px(std::string key, LockValue value, Duration ttl) {
  redis::Request r = make(redis::Op::Set, std::move(key), std::move(value), ttl);
  r.nx = true;
  return r;
}
// The fencing variant: SET NX PX and, on success, INCR token_key, in one script.
inline redis::Request acquire_with_token(std::string key, LockValue value, Duration ttl, std::string token_key) {
  redis::Request r = make(redis::Op::AcquireWithToken, std::move(key), std::move(value), ttl);
  r.token_key = std::move(token_key);
  return r;
}
inline redis::Request compare_and_delete(std::string key, LockValue value) {
  return make(redis::Op::CompareAndDelete, std::move(key), std::move(value));
}
inline redis::Request compare_and_pexpire(std::string key, LockValue value, Duration ttl) {
  return make(redis::Op::CompareAndPexpire, std::move(key), std::move(value), ttl);
}
inline redis::Request redisson_fenced_trylock(std::string key, LockValue value, Duration lease, std::string token_key) {
  redis::Request r = make(redis::Op::RedissonTryLockFenced, std::move(key), std::move(value), lease);
  r.token_key = std::move(token_key);
  return r;
}
}  // namespace redis_cmd

// One Redis command's reply, awaited (RedisConnection's commands return it).
// Without a Sentinel nothing follows the reply, so the command is the call
// itself, awaited directly: no coroutine frame of its own and no copy of the
// request into one; with a Sentinel it is the task that asks the
// Sentinel again after a failure. The same messages at the same instants
// either way: the task also sends at once and resumes its caller inside the
// reply's event.
class RedisCall {
 public:
  RedisCall(ClientEnv& env, ProcId to, redis::Request&& request, Duration timeout)
      : direct_(std::in_place, env, to, std::in_place_type<redis::Request>, std::move(request), timeout) {}
  // The request filled in its place (`fill(redis::Request&)`), not moved in.
  template <typename Fill>
  RedisCall(ClientEnv& env, ProcId to, Fill& fill, Duration timeout)
      : direct_(std::in_place, env, to, std::in_place_type<redis::Request>, fill, timeout) {}
  explicit RedisCall(Task<std::optional<redis::Reply>>&& task) : task_(std::move(task)) {}
  RedisCall(const RedisCall&) = delete;
  RedisCall& operator=(const RedisCall&) = delete;

  bool await_ready() const noexcept { return false; }
  coroutine_handle<> await_suspend(coroutine_handle<> h) {
    if (direct_) {
      direct_->await_suspend(h);
      return noop_coroutine();
    }
    task_.handle().promise().continuation = h;
    return task_.handle();  // start the task (symmetric transfer, as co_await on a Task does)
  }
  std::optional<redis::Reply> await_resume() { return direct_ ? direct_->await_resume() : task_.result(); }

 private:
  std::optional<CallAwaiter<redis::Reply>> direct_;  // destroyed waiting (a crash): the call is cancelled
  Task<std::optional<redis::Reply>> task_;
};

// A client's connection to one Redis node: a command with the lock's request
// timeout, and the reply (nullopt when the node did not answer in time).
class RedisConnection {
 public:
  RedisConnection(ClientEnv& env, ProcId node, ProcId sentinel, Duration timeout)
      : env_(env), node_(node), group_(node), sentinel_(sentinel), timeout_(timeout) {}

  RedisCall get(std::string key) { return call(redis_cmd::make(redis::Op::Get, std::move(key))); }
  RedisCall del(std::string key) { return call(redis_cmd::make(redis::Op::Del, std::move(key))); }
  RedisCall set(std::string key, LockValue value) {
    return call(redis_cmd::make(redis::Op::Set, std::move(key), std::move(value)));
  }
  RedisCall setnx(std::string key, LockValue value) {
    return call(redis_cmd::make(redis::Op::SetNx, std::move(key), std::move(value)));
  }
  // The single-node recipes' try, sent once per retry: its request is
  // written in its place in the call, not built and moved there.
  RedisCall set_nx_px(const std::string& key, const LockValue& value, Duration ttl) {
    if (sentinel_ != kNoProc) return call(redis_cmd::set_nx_px(key, value, ttl));
    auto fill = [&](redis::Request& r) { redis_cmd::write_set_nx_px(r, key, value, ttl); };
    return RedisCall(env_, node_, fill, timeout_);
  }
  RedisCall acquire_with_token(std::string key, LockValue value, Duration ttl, std::string token_key) {
    return call(redis_cmd::acquire_with_token(std::move(key), std::move(value), ttl, std::move(token_key)));
  }
  RedisCall compare_and_delete(std::string key, LockValue value) {
    return call(redis_cmd::compare_and_delete(std::move(key), std::move(value)));
  }
  // The same, after CLIENT REPLY SKIP: sent, and not waited for. Written
  // where it leaves (ClientEnv::stage), as set_nx_px's request is: Redlock
  // sends one to every node after each try, a third of the benchmark's messages.
  void compare_and_delete_no_reply(const std::string& key, const LockValue& value) {
    StageId id = 0;
    redis::Request& r = emplace_default<redis::Request>(env_.stage(id));
    r.op = redis::Op::CompareAndDelete;
    r.key = key;
    r.value = value;
    r.no_reply = true;
    env_.send_staged(node_, id);
  }
  RedisCall compare_and_pexpire(std::string key, LockValue value, Duration ttl) {
    return call(redis_cmd::compare_and_pexpire(std::move(key), std::move(value), ttl));
  }

  RedisCall redisson_trylock(std::string key, LockValue value, Duration lease) {
    return call(redis_cmd::make(redis::Op::RedissonTryLock, std::move(key), std::move(value), lease));
  }
  RedisCall redisson_fenced_trylock(std::string key, LockValue value, Duration lease, std::string token_key) {
    return call(redis_cmd::redisson_fenced_trylock(std::move(key), std::move(value), lease, std::move(token_key)));
  }
  RedisCall redisson_unlock(std::string key, LockValue value) {
    return call(redis_cmd::make(redis::Op::RedissonUnlock, std::move(key), std::move(value)));
  }
  RedisCall subscribe(std::string channel) {
    return call(redis_cmd::make(redis::Op::Subscribe, std::move(channel)));
  }

  // One command. If it fails (no answer, refused, or READONLY from a demoted
  // master) and a sentinel watches this group, ask it for the current master:
  // the next command goes there (redis-py's and Jedis's sentinel pools).
  RedisCall call(redis::Request req) {
    if (sentinel_ == kNoProc) return RedisCall(env_, node_, std::move(req), timeout_);  // needs_rediscovery: never
    return RedisCall(call_with_rediscovery(std::move(req)));
  }
  // call() where a Sentinel watches the group: the reply, then a rediscovery if it failed.
  Task<std::optional<redis::Reply>> call_with_rediscovery(redis::Request req) {
    auto r = co_await env_.call_redis(node_, std::move(req), timeout_);
    if (needs_rediscovery(r)) co_await rediscover();
    co_return r;
  }
  // The same command as one call of a fan-out (lockalgos/when_all.hpp); after
  // the round, after_round() does what call() does after its reply.
  Call request(redis::Request req) const { return Call(node_, Payload(std::move(req)), timeout_); }
  // The same, built in its place at the end of `calls`.
  void add_request(std::vector<Call>& calls, redis::Request&& req) const { calls.emplace_back(node_, std::move(req), timeout_); }
  // The same, written by `fill` where it will leave (ClientEnv::stage): not
  // built and moved twice on its way.
  template <typename Fill>
  void add_staged_request(std::vector<Call>& calls, Fill&& fill) const {
    StageId id = 0;
    fill(emplace_default<redis::Request>(env_.stage(id)));
    calls.emplace_back(node_, id, timeout_);
  }
  Task<void> after_round(const std::optional<redis::Reply>& r) {
    if (needs_rediscovery(r)) co_await rediscover();
  }

  ProcId id() const { return node_; }
  static bool is_one(const std::optional<redis::Reply>& r) {
    return r && r->kind == redis::Reply::Kind::Int && r->integer == 1;
  }
  static bool is_one_or_ok(const std::optional<redis::Reply>& r) { return is_one(r) || (r && r->is_ok()); }
  const std::string& name() const { return env_.name_of(node_); }

 private:
  bool needs_rediscovery(const std::optional<redis::Reply>& r) const {
    const bool failed = !r || (r->kind == redis::Reply::Kind::Err && r->str.rfind("READONLY", 0) == 0);
    return failed && sentinel_ != kNoProc;
  }

  Task<void> rediscover() {
    redis::Request ask;
    ask.op = redis::Op::GetMasterAddr;
    ask.key = env_.name_of(group_);
    const auto name = co_await env_.call_redis(sentinel_, std::move(ask), timeout_);
    if (!name || name->kind != redis::Reply::Kind::Str) co_return;
    if (const auto id = env_.find(name->str)) node_ = *id;
  }

  ClientEnv& env_;
  ProcId node_;       // where commands go now
  ProcId group_;      // the master this connection was set up for (the sentinel's group name)
  ProcId sentinel_;
  Duration timeout_;
};

// A single-node recipe's connection to its node.
inline RedisConnection single_node(ClientEnv& env, const LockTargets& targets, const SingleNodeOptions& o) {
  return RedisConnection(env, targets.nodes.front(), targets.sentinel, o.request_timeout);
}

std::shared_ptr<const AlgorithmOptions> parse_single_node(OptionReader& r, const LockConfig& common);
std::shared_ptr<const AlgorithmOptions> parse_redis_single(OptionReader& r, const LockConfig& common);

std::unique_ptr<Lock> make_redis_single(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                        const RedisSingleOptions& options);
std::unique_ptr<Lock> make_setnx(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                 const SingleNodeOptions& options);
std::unique_ptr<Lock> make_getset(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                  const SingleNodeOptions& options);
std::unique_ptr<Lock> make_setnx_timestamp(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                           const SingleNodeOptions& options);

}  // namespace locksim
