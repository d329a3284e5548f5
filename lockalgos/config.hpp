// [lock]: the algorithm and its options, as the scenario file gives them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace locksim {

enum class Fencing : std::uint8_t { None, Token, LockValue };
std::string_view fencing_name(Fencing f);

inline constexpr int kForever = -1;  // for counts: retry_count, repeat

// [lock]: the algorithm and its options. Which keys an algorithm accepts is
// declared in its registry entry (lockalgos/registry.hpp); the loader rejects
// the others.
struct LockConfig {
  std::string algorithm;                   // "redis-single", "setnx", ...
  std::string flavour;                     // empty: the algorithm's default
  std::optional<Duration> ttl;             // none: no expiry (setnx)
  Fencing fencing = Fencing::None;
  std::string key = "lock";
  std::string release = "compare-and-delete";  // redis-single: | "del" | "get-then-del"
  // Unset: the algorithm's (or its flavour's) default.
  std::optional<DurationRange> retry_delay;
  std::optional<int> retry_count;          // retries after the first try; kForever
  std::optional<Duration> request_timeout;
  std::int64_t first_token = 1;            // the first fencing token the service issues
  // Redlock.
  std::optional<double> drift_factor;      // clock drift allowance, as a fraction of the ttl
  std::optional<Duration> auto_extend;     // redsync, node-redlock: extend when this much validity is left
  std::string fanout;                      // "sequential" | "parallel"; empty: the flavour's
  std::string collect;                     // parallel: "quorum" | "all"; empty: the flavour's
  std::string unlock = "wait";             // | "no-wait": CLIENT REPLY SKIP, and go on
  // Redisson.
  Duration watchdog_timeout = Duration::s(30);  // the watchdog's lease; renewed every third of it
  std::optional<Duration> lease_time;      // a fixed lease: no watchdog
  std::optional<Duration> wait_time;       // how long tryLock waits; unset: lock() waits forever
  // ZooKeeper.
  Duration session_timeout = Duration::s(10);
  Duration tick_time = Duration::s(2);
  std::string on_suspended = "continue";   // | "stop"
  std::string watch = "predecessor";       // | "parent" (the herd)
  // etcd.
  Duration lease_ttl = Duration::s(10);
  std::string version = "3.5";             // | "3.4"
  int line = 0;                            // where [lock] is, for errors found later
};

}  // namespace locksim
