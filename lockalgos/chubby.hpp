// A Chubby client holding one lock (chubby.cpp), and its options.
#pragma once

#include <memory>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"

namespace locksim {

struct ChubbyOptions : AlgorithmOptions {
  Duration lock_delay = Duration::s(60);  // Open()'s lock-delay; the paper bounds it at one minute and names no default
  Duration grace = Duration::s(45);       // §2.8: the grace period after the local lease ends
  std::int64_t first_token = 1;           // the first generation number
  Duration lease() const override { return Duration::s(12); }
  // A KeepAlive the master holds and answers just before the lease ends
  // extends it once more (Burrows 2006, §2.8 p. 341), and the lock-delay
  // follows (§2.4 p. 339; at most one minute, which parse_chubby enforces).
  // tests/coordination_fidelity_test.cpp "handover()" pins it.
  Duration handover() const override { return lease() * 2 + lock_delay; }
  ServerSetup server() const override { return {.first_token = first_token}; }
};

std::shared_ptr<const AlgorithmOptions> parse_chubby(OptionReader& r, const LockConfig& common);
std::unique_ptr<Lock> make_chubby(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                  const ChubbyOptions& options);

}  // namespace locksim
