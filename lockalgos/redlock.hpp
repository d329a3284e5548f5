// Redlock (redlock.cpp) and its options: the flavour (the common part's)
// sets the defaults, these keys override them.
#pragma once

#include <memory>
#include <optional>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"
#include "lockalgos/redisson.hpp"

namespace locksim {

enum class Fanout : std::uint8_t { Sequential, Parallel };  // one node after another | all at once
enum class Collect : std::uint8_t { Quorum, All };          // a parallel round goes on at a majority | at every reply
enum class Unlock : std::uint8_t { Wait, NoWait };          // no-wait: CLIENT REPLY SKIP, and go on
// How a holder that checks before writing (check_before_write) asks: its own
// clock against the validity (redsync's Until()), or the nodes (Valid()).
enum class ValidityCheck : std::uint8_t { Until, Valid };
// redlock-py: a RedisError on any node during a try that won a quorum.
enum class RedisErrors : std::uint8_t { Raise, Ignore };  // 1.0.7+: MultipleRedlockException | 1.0.6: a no
// Which library (and version) the model follows: [lock] flavour, parsed once.
enum class RedlockFlavour : std::uint8_t { RedlockRb, RedlockRb2014, RedlockPy, RedlockPy102, Redsync, NodeRedlockV5, Redisson, NodeRedlockV4 };

struct RedlockOptions : AlgorithmOptions {
  Duration ttl;
  RedlockFlavour flavour = RedlockFlavour::RedlockRb;
  // Unset: the flavour's.
  std::optional<DurationRange> retry_delay;
  std::optional<int> retry_count;          // retries after the first try; kForever
  std::optional<Duration> request_timeout;
  std::optional<double> drift_factor;      // clock drift allowance, as a fraction of the ttl
  std::optional<Duration> auto_extend;     // redsync, node-redlock: extend when this much validity is left
  std::optional<Fanout> fanout;
  std::optional<Collect> collect;
  Unlock unlock = Unlock::Wait;
  std::optional<RedisErrors> redis_errors;  // redlock-py only
  ValidityCheck check = ValidityCheck::Until;  // redsync only
  RedissonOptions redisson;                // the redisson flavour's RLocks (lease_time: the ttl)
  Duration lease() const override { return ttl; }
};

std::shared_ptr<const AlgorithmOptions> parse_redlock(OptionReader& r, const LockConfig& common);
std::unique_ptr<Lock> make_redlock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                   const RedlockOptions& options);

}  // namespace locksim
