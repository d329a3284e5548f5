// Redisson's RLock (RedissonLock.java, RedissonBaseLock.java) with its lock
// watchdog (algorithms.md §3).
//
//   acquire:  tryLock script: if the key is absent or ours, set it with the
//             lease and return nil; else return its PTTL. Not ours: SUBSCRIBE
//             to the lock's channel and wait min(PTTL, what is left of
//             wait_time) or until an unlock message arrives; try again.
//   lease:    lease_time if given; else watchdog_timeout (30 s), and a
//             watchdog inside the client renews it every third of that
//             (PEXPIRE if the field is still ours; if not, the renewal is
//             silently dropped and the watchdog stops).
//   release:  unlock script: not ours -> nil (IllegalMonitorStateException);
//             ours -> DEL and PUBLISH to the channel.
//
// RFencedLock (2022) is the same lock whose acquire script also INCRs a token
// key on the same master and returns the token: monotonic only as long as
// that one asynchronously replicated master does not fail over.
//
// Assumes: the watchdog keeps running while the lock is held. A stop-the-world
// pause stops it too (it is a timer thread of the same process), and the key
// expires 20-30 s after the last renewal while the holder sleeps.
#include <memory>
#include <optional>

#include "lockalgos/redisson.hpp"

#include "lockalgos/redis_common.hpp"
#include "lockalgos/wakeup.hpp"

namespace locksim {
namespace {

class RedissonLock final : public Lock {
 public:
  RedissonLock(ClientEnv& env, const LockTargets& targets, const LockConfig& config, const RedissonOptions& options,
               bool fenced)
      : env_(env),
        key_(config.key),
        options_(options),
        fenced_(fenced),
        node_(env, targets.nodes.front(), targets.sentinel, options.request_timeout),
        unlocked_(env) {}

  Task<std::optional<Grant>> acquire() override { return try_lock(options_.wait_time); }

  // tryLock(waitTime): nullopt waits forever (lock()).
  Task<std::optional<Grant>> try_lock(std::optional<Duration> wait_time) {
    const RedissonOptions& o = options_;
    // The hash field: the client's UUID and the thread id.
    const std::string value = env_.rng().hex_token(16) + ":1";
    const Duration lease = o.lease_time.value_or(o.watchdog_timeout);
    // tryLock's wait budget is counted on the wall clock (System.currentTimeMillis).
    const std::optional<Instant> give_up =
        wait_time ? std::optional<Instant>(env_.wall_now() + *wait_time) : std::nullopt;
    bool subscribed = false;
    for (;;) {
      const Instant start = env_.mono_now();
      std::optional<redis::Reply> r;
      if (fenced_) r = co_await node_.redisson_fenced_trylock(key_, value, lease, key_ + ":token");
      else r = co_await node_.redisson_trylock(key_, value, lease);
      if (r && (r->is_nil() || r->is_ok())) {
        if (!o.lease_time) start_watchdog(value);
        co_return Grant{value, fenced_ ? r->integer : -1, start + lease, node_.name()};
      }
      Duration wait = r && r->kind == redis::Reply::Kind::Int && r->integer >= 0 ? Duration::ms(r->integer)
                                                                                  : Duration::ms(100);
      if (give_up) {
        const Duration left = *give_up - env_.wall_now();
        if (left <= Duration::zero()) co_return std::nullopt;
        wait = min(wait, left);
      }
      if (!subscribed) {
        subscribed = true;
        co_await node_.subscribe(key_);
        continue;  // try again at once: the lock may have been released meanwhile
      }
      co_await wait_for_unlock(wait);
    }
  }

  Task<bool> release(const Grant& grant) override {
    if (watchdog_) *watchdog_ = false;
    const auto r = co_await node_.redisson_unlock(key_, grant.value);
    co_return RedisConnection::is_one(r);  // nil: IllegalMonitorStateException
  }

  ProcId node() const { return node_.id(); }

  bool on_push(ProcId, const Payload& push) override {
    const auto* message = std::get_if<redis::Reply>(&push);
    if (!message || message->kind != redis::Reply::Kind::Str || message->str.rfind("unlocked ", 0) != 0) return false;
    unlocked_.fire();
    return true;
  }

 private:
  // The semaphore wait of RedissonLock.lock(): an unlock message, or the timeout.
  Task<void> wait_for_unlock(Duration timeout) {
    const std::uint64_t generation = ++wait_generation_;
    env_.spawn(fire_after(timeout, generation));
    co_await unlocked_.wait();
  }
  Task<void> fire_after(Duration d, std::uint64_t generation) {
    co_await env_.sleep(d);
    if (generation == wait_generation_) unlocked_.fire();
  }

  void start_watchdog(const std::string& value) {
    if (watchdog_) *watchdog_ = false;
    watchdog_ = std::make_shared<bool>(true);
    env_.spawn(renew_every_third(value, watchdog_));
  }

  // RenewalTask: every watchdog_timeout / 3, PEXPIRE the key if it is still ours.
  Task<void> renew_every_third(std::string value, std::shared_ptr<bool> active) {
    const Duration timeout = options_.watchdog_timeout;
    const Duration period = timeout / 3;
    while (*active) {
      co_await env_.sleep(period);
      if (!*active) co_return;
      const Instant sent = env_.mono_now();
      const auto r = co_await node_.compare_and_pexpire(key_, value, timeout);
      if (r && r->kind == redis::Reply::Kind::Int && r->integer == 0) co_return;  // not ours any more: stop quietly
      if (RedisConnection::is_one(r)) {
        env_.note(Ev::Renewed, {.value = (sent + timeout).ns(),
                                .detail = "the watchdog sets the key's expiry " + format_duration(timeout) + " ahead"});
        co_await env_.yield();
      }
    }
  }

  ClientEnv& env_;
  const std::string& key_;
  const RedissonOptions& options_;
  bool fenced_;
  RedisConnection node_;
  ClientWakeup unlocked_;
  std::uint64_t wait_generation_ = 0;
  std::shared_ptr<bool> watchdog_;
};

// RedissonMultiLock and RedissonRedLock (deprecated since 2023): one RLock per
// node, taken one after another. MultiLock needs every one; RedLock a
// majority (failedLocksLimit = n - quorum) and gives each lock only
// max(remaining / n, 1 ms) of the wait budget. A failed round releases what
// it took and starts again while budget remains; lock() runs rounds of
// n * 1500 ms forever.
class RedissonMultiLock final : public Lock {
 public:
  RedissonMultiLock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                    const RedissonOptions& options, bool majority)
      : env_(env), majority_(majority), wait_time_(options.wait_time) {
    for (ProcId n : targets.nodes) {
      const LockTargets one{{n}, targets.sentinel};
      locks_.push_back(std::make_unique<RedissonLock>(env_, one, config, options, false));
    }
  }

  Task<std::optional<Grant>> acquire() override {
    const std::size_t n = locks_.size();
    const std::size_t failures_allowed = majority_ ? n - (n / 2 + 1) : 0;
    const std::optional<Duration> wait_time = wait_time_;
    const Duration round = wait_time.value_or(Duration::ms(1500) * static_cast<std::int64_t>(n));
    for (;;) {
      const Instant give_up = env_.wall_now() + round;
      std::vector<std::pair<std::size_t, Grant>> held;
      std::size_t failed = 0;
      bool ok = true;
      for (std::size_t i = 0; i < n; ++i) {
        const Duration remain = give_up - env_.wall_now();
        if (remain <= Duration::zero()) {
          ok = false;
          break;
        }
        const Duration per_lock = majority_ ? max(remain / static_cast<std::int64_t>(n), Duration::ms(1)) : remain;
        auto g = co_await locks_[i]->try_lock(min(per_lock, remain));
        if (g) held.emplace_back(i, std::move(*g));
        else if (++failed > failures_allowed) {
          ok = false;
          break;
        }
      }
      if (ok && held.size() >= n - failures_allowed) {
        Grant all;
        all.valid_until = held.front().second.valid_until;
        for (auto& [i, g] : held) {
          all.value += (all.value.empty() ? "" : ",") + g.value;
          all.where += (all.where.empty() ? "" : ",") + env_.name_of(locks_[i]->node());
          if (g.valid_until && all.valid_until) all.valid_until = min(*all.valid_until, *g.valid_until);
        }
        held_ = std::move(held);
        co_return all;
      }
      env_.note(Ev::AttemptFailed, {.detail = std::to_string(held.size()) + " of " + std::to_string(n) +
                                                   " locks taken (" + (majority_ ? "a majority" : "all") +
                                                   " needed); it releases them"});
      co_await env_.yield();
      for (auto& [i, g] : held) co_await locks_[i]->release(g);
      if (wait_time) co_return std::nullopt;  // tryLock: one budget only
    }
  }

  Task<bool> release(const Grant&) override {
    // Errors are swallowed (RedissonMultiLock.unlockInner): released iff every lock said so.
    bool all = true;
    std::vector<std::pair<std::size_t, Grant>> held = std::move(held_);
    held_.clear();
    for (auto& [i, g] : held) all = co_await locks_[i]->release(g) && all;
    co_return all;
  }

  bool on_push(ProcId from, const Payload& push) override {
    for (auto& l : locks_)
      if (l->node() == from) return l->on_push(from, push);
    return false;
  }

 private:
  ClientEnv& env_;
  bool majority_;
  std::optional<Duration> wait_time_;
  std::vector<std::unique_ptr<RedissonLock>> locks_;
  std::vector<std::pair<std::size_t, Grant>> held_;
};

}  // namespace

void read_redisson(OptionReader& r, RedissonOptions& o) {
  if (auto v = r.duration("request_timeout", Sign::Positive)) o.request_timeout = *v;
  if (auto v = r.integer("first_token", 0, INT64_MAX / 2)) o.first_token = *v;
  if (auto v = r.duration("watchdog_timeout", Sign::Positive)) o.watchdog_timeout = *v;
  o.lease_time = r.duration("lease_time", Sign::Positive);
  o.wait_time = r.duration("wait_time", Sign::NonNegative);
}

std::shared_ptr<const AlgorithmOptions> parse_redisson(OptionReader& r, const LockConfig&) {
  auto o = std::make_shared<RedissonOptions>();
  read_redisson(r, *o);
  return o;
}

std::unique_ptr<Lock> make_redisson_multilock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                              const RedissonOptions& options) {
  return std::make_unique<RedissonMultiLock>(env, targets, config, options, false);
}
std::unique_ptr<Lock> make_redisson_redlock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                            const RedissonOptions& options) {
  return std::make_unique<RedissonMultiLock>(env, targets, config, options, true);
}

std::unique_ptr<Lock> make_redisson(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                    const RedissonOptions& options) {
  return std::make_unique<RedissonLock>(env, targets, config, options, false);
}
std::unique_ptr<Lock> make_redisson_fenced(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                           const RedissonOptions& options) {
  return std::make_unique<RedissonLock>(env, targets, config, options, true);
}

}  // namespace locksim
