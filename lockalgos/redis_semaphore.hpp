// redis-semaphore's Mutex and RedlockMutex (redis_semaphore.cpp), and their options.
#pragma once

#include <memory>
#include <optional>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"

namespace locksim {

// Which of the package's locks: Mutex (one Redis) | RedlockMutex (several, a majority).
enum class SemaphoreFlavour : std::uint8_t { Mutex, RedlockMutex };

struct RedisSemaphoreOptions : AlgorithmOptions {
  SemaphoreFlavour flavour = SemaphoreFlavour::Mutex;
  Duration lock_timeout = Duration::s(10);     // lockTimeout: the key's PX (the scenario's ttl)
  Duration acquire_timeout = Duration::s(10);  // acquireTimeout: acquire() gives up after this, on Date.now()
  int acquire_attempts_limit = -1;             // acquireAttemptsLimit; -1: no limit (Infinity)
  Duration retry_interval = Duration::ms(10);  // retryInterval: between tries
  std::optional<Duration> refresh_interval;    // refreshInterval; default round(lockTimeout * 0.8); zero: none
  Duration refresh() const {
    return refresh_interval.value_or(Duration::ms((lock_timeout.whole_ms() * 8 + 5) / 10));
  }
  Duration lease() const override { return lock_timeout; }
};

std::shared_ptr<const AlgorithmOptions> parse_redis_semaphore(OptionReader& r, const LockConfig& common);
std::unique_ptr<Lock> make_redis_semaphore(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                           const RedisSemaphoreOptions& options);

}  // namespace locksim
