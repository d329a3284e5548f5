// One live run of a scenario: its Redis nodes (and sentinels) as real
// processes, its clients running the same algorithm and job code as the
// simulator over LiveClientEnv, its faults applied to the real things, and the
// trace judged by the same checkers. The result is a RunResult, so every
// report reads it as it reads a simulated run.
//
// Time scale K: the scenario plays K times faster in real time (every
// duration divided by K on its way out, every real reading multiplied by K on
// its way in: live/client_env.hpp). The trace is in scenario time, measured.
// What does not scale: Redis's active-expiry cycle (100 ms real, so up to
// K x 100 ms of scenario time before an expired key is reclaimed unasked),
// Sentinel's own periods (its 1 s pings and INFO), loopback latency (tens of
// microseconds real, times K) and the time to start, stop and restart a server.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "harness/scenario.hpp"
#include "live/common.hpp"

namespace locksim::live {

struct LiveOptions {
  std::int64_t time_scale = 1;        // K: the scenario runs K times faster than written
  std::filesystem::path keep;         // --keep DIR: the servers' directories stay there
  std::uint64_t keep_events = ~std::uint64_t{0};
  bool details = false;
  std::function<void(const Trace&, const TraceEvent&)> listener;
};

// Why the scenario cannot run live (a ZooKeeper or etcd lock, a fault with
// no live counterpart yet), or nullopt when it can.
std::optional<std::string> live_unsupported(const Scenario& s);

// What the scenario runs against live: "real redis-server", "a real ZooKeeper server".
std::string live_servers(const Scenario& s);

// Where the scenario's margins are thin at scale K: one line each.
std::vector<std::string> live_warnings(const Scenario& s, std::int64_t time_scale);

// The time scale, at most `k`, at which the scenario's thinnest margin still
// lasts kMinRealMargin of real time: its faults' times, durations and delays,
// its replication lag, how far a client's work is from the TTL, and how long
// each violation of its simulated run lasted (a race the simulator won by 10 ms is lost to jitter at 1 ms).
inline constexpr Duration kMinRealMargin = Duration::ms(5);
std::int64_t live_scale_for(const Scenario& s, const std::vector<Violation>& simulated, std::int64_t k);

// SIGINT or SIGTERM ended a live run early; its servers are stopped.
class Interrupted : public Error {
 public:
  using Error::Error;
};

// Runs the scenario live. Throws ScenarioError when it cannot run live,
// live::Error when a server will not start, Interrupted on SIGINT/SIGTERM. Every process it starts is gone
// when it returns or throws.
RunResult run_live(const Scenario& s, const LiveOptions& options);

}  // namespace locksim::live
