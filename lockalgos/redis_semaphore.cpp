// redis-semaphore 5.8.0 (npm redis-semaphore@5.8.0, lib/): its Mutex and
// RedlockMutex, read from the shipped JavaScript. Not a flavour of
// redis-single or of redlock: its lock lives by a refresh timer
// (setInterval) and a local flag, isAcquired, which only that timer or
// release() clears; neither of the others has them, and its RedlockMutex
// counts no drift and no validity at all.
//
//   acquire (mutex/acquire.js:10-29; redlockMutex/acquire.js:12-37):
//     end = Date.now() + acquireTimeout; while Date.now() < end and
//     ++attempt <= acquireAttemptsLimit:
//       Mutex:  SET key id PX lockTimeout NX; 'OK' -> acquired
//       Redlock: the same on every node at once (Promise.all: every reply,
//                an error counts 0); >= round((n+1)/2) -> acquired; else
//                delIfEqual on every node, awaited
//       else sleep retryInterval (setTimeout)
//   then (Lock.js:129-143): _acquired = true; setInterval(_processRefresh,
//     refreshInterval = round(lockTimeout * 0.8)) (Lock.js:45,48,112-115)
//   refresh (Lock.js:52-75; mutex/refresh.js:11-31; redlockMutex/refresh.js:12-46):
//     skipped while one is in flight (_refreshing); Mutex: if GET == id then
//     PEXPIRE lockTimeout; RedlockMutex: the same on every node, >= quorum
//     -> refreshed (and SET NX PX on the nodes that failed), else delIfEqual
//     everywhere. Not refreshed and still _acquired: _acquired = false, the
//     interval cleared, onLockLost(LostLockError)
//   release (Lock.js:144-154; mutex/release.js:11-25): clear the interval;
//     if _acquired, delIfEqual (its result is ignored); _acquired = false.
//     release() resolves either way: the application is told it succeeded.
//
// Nothing here reads the clock between the acquire and the write: a holder
// paused past lockTimeout writes unless it asks (check = "is-acquired", the
// flag; "on-lock-lost", a handler that aborts the work: the same moment,
// Lock.js:66-69), and the flag is cleared only by the refresh timer — which
// a pause stops too.
//
// The default onLockLost throws (misc.js:11-13) inside the interval's async
// callback: an unhandled rejection, which ends a Node 20 process. The
// simulator notes the callback and lets the client go on (an adapter
// registers its own onLockLost to report it).
#include "lockalgos/redis_semaphore.hpp"

#include <algorithm>

#include "lockalgos/redis_common.hpp"

namespace locksim {
namespace {

class RedisSemaphoreLock final : public Lock {
 public:
  RedisSemaphoreLock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                     const RedisSemaphoreOptions& options)
      : env_(env), config_(config), options_(options) {
    // ioredis sends a command with no timeout of its own.
    // The Mutex talks to one client (the first node); the RedlockMutex to every one.
    const std::size_t n = options_.flavour == SemaphoreFlavour::Mutex ? 1 : targets.nodes.size();
    for (std::size_t i = 0; i < n; ++i) nodes_.emplace_back(env_, targets.nodes[i], targets.sentinel, Duration::zero());
  }

  Task<std::optional<Grant>> acquire() override {
    // A Lock object has one identifier for its life: crypto.randomUUID() (Lock.js:86-89,108-111).
    if (identifier_.empty()) identifier_ = LockValue::random(env_.rng(), 16).text();
    const LockValue value(identifier_);
    const Instant end = env_.wall_now() + options_.acquire_timeout;
    int attempt = 0;
    while (env_.wall_now() < end && (options_.acquire_attempts_limit < 0 || ++attempt <= options_.acquire_attempts_limit)) {
      const std::size_t granted = co_await set_everywhere(value);
      if (granted >= quorum()) {
        acquired_ = true;
        const std::uint64_t generation = ++generation_;
        if (options_.refresh() > Duration::zero()) env_.spawn(refresh_interval(value, generation));
        co_return Grant{identifier_, -1, std::nullopt, where_};
      }
      if (nodes_.size() > 1) {
        env_.note(Ev::AttemptFailed, {.value = static_cast<std::int64_t>(granted)});
        co_await env_.yield();
        co_await del_if_equal_everywhere(value);
      }
      co_await env_.sleep(options_.retry_interval);
    }
    co_return std::nullopt;  // TimeoutError: acquire timeout or attempts limit
  }

  Task<bool> release(const Grant& grant) override {
    ++generation_;  // clearInterval
    if (acquired_) co_await del_if_equal_everywhere(LockValue(grant.value));
    acquired_ = false;
    co_return true;  // release() resolves: the library reports no failure
  }

  Task<bool> check(LibraryCheck, const Grant&) override {
    // isAcquired (Lock.js:105-107), or the handler's abort: the flag the refresh timer clears.
    if (!acquired_) {
      env_.note(Ev::Lost, {.detail = "isAcquired is false: a refresh found the key gone (onLockLost); it abandons the write"});
      co_await env_.yield();
    }
    co_return acquired_;
  }

 private:
  // getQuorum (utils/redlock.js:5-7): Math.round((n + 1) / 2).
  std::size_t quorum() const { return (nodes_.size() + 2) / 2; }

  // SET NX PX on each node at once, every reply awaited: how many said OK.
  Task<std::size_t> set_everywhere(const LockValue& value) {
    std::vector<Call> calls;
    for (const RedisConnection& n : nodes_)
      n.add_request(calls, redis_cmd::set_nx_px(config_.key, value, options_.lock_timeout));
    const Replies<redis::Reply> replies = co_await when_all<redis::Reply>(env_, std::move(calls));
    std::size_t ok = 0;
    where_.clear();
    for (std::size_t i = 0; i < replies.size(); ++i)
      if (replies[i] && replies[i]->is_ok()) {
        ++ok;
        where_ += (where_.empty() ? "" : ",") + nodes_[i].name();
      }
    co_return ok;
  }

  Task<void> del_if_equal_everywhere(const LockValue& value) {
    std::vector<Call> calls;
    for (const RedisConnection& n : nodes_) n.add_request(calls, redis_cmd::compare_and_delete(config_.key, value));
    co_await when_all<redis::Reply>(env_, std::move(calls));
  }

  // setInterval(_processRefresh, refreshInterval): Node runs an interval's
  // callback, then sets it again from that moment; a pause holds it, and it
  // fires once on resume. The callback is not awaited: one still in flight
  // makes the next a no-op (_refreshing, Lock.js:53-56).
  Task<void> refresh_interval(LockValue value, std::uint64_t generation) {
    for (;;) {
      co_await env_.sleep(options_.refresh());
      if (generation != generation_) co_return;
      if (!refreshing_) env_.spawn(process_refresh(value, generation));
    }
  }

  Task<void> process_refresh(LockValue value, std::uint64_t generation) {
    refreshing_ = true;
    const bool refreshed = co_await refresh(value);
    refreshing_ = false;
    if (refreshed) {
      env_.note(Ev::Renewed, {.value = (env_.mono_now() + options_.lock_timeout).ns()});
      co_return;
    }
    if (!acquired_) co_return;  // released on purpose meanwhile (Lock.js:62-64)
    acquired_ = false;  // isAcquired turns false (Lock.js:66)
    if (generation == generation_) ++generation_;  // stopRefresh()
    env_.note(Ev::Notified, {.value = static_cast<std::int64_t>(LibrarySignal::LockLost)});
  }

  Task<bool> refresh(const LockValue& value) {
    std::vector<Call> calls;
    for (const RedisConnection& n : nodes_)
      n.add_request(calls, redis_cmd::compare_and_pexpire(config_.key, value, options_.lock_timeout));
    const Replies<redis::Reply> replies = co_await when_all<redis::Reply>(env_, std::move(calls));
    const auto refreshed = static_cast<std::size_t>(
        std::count_if(replies.begin(), replies.end(), [](const auto& r) { return RedisConnection::is_one(r); }));
    if (nodes_.size() == 1) co_return refreshed == 1;
    if (refreshed >= quorum()) {
      // redlockMutex/refresh.js:23-38: take the key again where it was not refreshed.
      if (refreshed < nodes_.size()) {
        std::vector<Call> retake;
        for (std::size_t i = 0; i < nodes_.size(); ++i)
          if (!RedisConnection::is_one(replies[i]))
            nodes_[i].add_request(retake, redis_cmd::set_nx_px(config_.key, value, options_.lock_timeout));
        co_await when_all<redis::Reply>(env_, std::move(retake));
      }
      co_return true;
    }
    co_await del_if_equal_everywhere(value);
    co_return false;
  }

  ClientEnv& env_;
  const LockConfig& config_;
  const RedisSemaphoreOptions& options_;
  std::vector<RedisConnection> nodes_;
  std::string identifier_;
  std::string where_;
  bool acquired_ = false;    // _acquired: what isAcquired answers
  bool refreshing_ = false;  // _refreshing
  std::uint64_t generation_ = 0;  // the interval in force; a new one, or none, after clearInterval
};

}  // namespace

// [lock] flavour's names (the registry lists the same, with their help).
constexpr std::pair<std::string_view, SemaphoreFlavour> kFlavourNames[] = {
    {"mutex", SemaphoreFlavour::Mutex},
    {"redlock-mutex", SemaphoreFlavour::RedlockMutex},
};

std::shared_ptr<const AlgorithmOptions> parse_redis_semaphore(OptionReader& r, const LockConfig& common) {
  auto o = std::make_shared<RedisSemaphoreOptions>();
  for (const auto& [name, flavour] : kFlavourNames)
    if (name == common.flavour) o->flavour = flavour;
  if (common.ttl) o->lock_timeout = *common.ttl;
  if (auto v = r.duration("acquire_timeout", Sign::Positive)) o->acquire_timeout = *v;
  if (auto v = r.count("acquire_attempts_limit", 1)) o->acquire_attempts_limit = *v;
  if (auto v = r.duration("retry_interval", Sign::NonNegative)) o->retry_interval = *v;
  if (auto v = r.duration("refresh_interval", Sign::NonNegative)) o->refresh_interval = *v;
  return o;
}

std::unique_ptr<Lock> make_redis_semaphore(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                           const RedisSemaphoreOptions& options) {
  return std::make_unique<RedisSemaphoreLock>(env, targets, config, options);
}

}  // namespace locksim
