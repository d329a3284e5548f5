// Redisson's locks (redisson.cpp): RLock with its watchdog (watchdog),
// RFencedLock (fenced-lock), MultiLock (multilock) and RedLock (redlock's
// redisson flavour), and their options.
#pragma once

#include <memory>
#include <optional>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"

namespace locksim {

// How a lock's write waits for the replicas (CommandAsyncService.syncedEval):
//   check: WAIT after the script, and the lock fails (and is unlocked) if no
//          replica acknowledged it (checkLockSyncedSlaves, default true since
//          redisson 3.17.0, 2022);
//   wait:  WAIT after the script, its count ignored (3.12.5 to 3.16.x, or
//          checkLockSyncedSlaves = false);
//   none:  the script alone (before 3.12.5, 2020).
enum class ReplicationGuard : std::uint8_t { Check, Wait, None };
// Which RLock's watchdog: 4.7.0's (unlock cancels the renewal first, a failed
// renewal is retried at the next period) or 2.11's, until 2.13.1 (a renewal
// is cancelled only by an unlock that released the lock, redisson#1602; a
// failed renewal stops the watchdog).
enum class RLockVersion : std::uint8_t { V4_7, V2_11 };

struct RedissonOptions : AlgorithmOptions {
  Duration watchdog_timeout = Duration::s(30);  // the watchdog's lease; renewed every third of it
  std::optional<Duration> lease_time;      // a fixed lease: no watchdog
  std::optional<Duration> wait_time;       // how long tryLock waits; unset: lock() waits forever
  Duration request_timeout = Duration::s(3);  // BaseConfig timeout
  std::int64_t first_token = 1;            // RFencedLock's first token
  ReplicationGuard replication_guard = ReplicationGuard::Check;
  Duration slaves_sync_timeout = Duration::s(1);  // Config.slavesSyncTimeout: WAIT's timeout
  RLockVersion version = RLockVersion::V4_7;      // the watchdog RLock's version (key "version")
  Duration lease() const override { return watchdog_timeout; }
  ServerSetup server() const override { return {.first_token = first_token}; }
};

void read_redisson(OptionReader& r, RedissonOptions& o);
std::shared_ptr<const AlgorithmOptions> parse_redisson(OptionReader& r, const LockConfig& common);

std::unique_ptr<Lock> make_redisson(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                    const RedissonOptions& options);
std::unique_ptr<Lock> make_redisson_fenced(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                           const RedissonOptions& options);
std::unique_ptr<Lock> make_redisson_multilock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                              const RedissonOptions& options);
// RedissonRedLock: `options.lease_time` is redLock.lock(leaseTime)'s (the redlock ttl).
std::unique_ptr<Lock> make_redisson_redlock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                            const RedissonOptions& options);

}  // namespace locksim
