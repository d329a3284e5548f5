// The ZooKeeper lock recipe as Curator runs it (zookeeper.cpp), and its options.
#pragma once

#include <memory>
#include <optional>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"

namespace locksim {

enum class OnSuspended : std::uint8_t { Continue, Stop };  // Curator never interrupts a holder | give up at SUSPENDED
enum class Watch : std::uint8_t { Predecessor, Parent };   // parent: every waiter wakes on every change (the herd)
// The ZooKeeper client: 3.9.3 (Curator 5.9.0's) expires its session itself
// once it has heard nothing for 4/3 of the timeout, checked when its send
// loop runs; 3.9.2 and older wait for the server.
enum class ZkClient : std::uint8_t { V3_9_3, V3_9_2 };

// Which client library: Curator 5.9.0's InterProcessMutex | kazoo 2.8.0's Lock.
enum class ZkFlavour : std::uint8_t { Curator, Kazoo };

struct ZooKeeperOptions : AlgorithmOptions {
  ZkFlavour flavour = ZkFlavour::Curator;
  Duration session_timeout = Duration::s(10);  // asked for; the server clamps it to [2, 20] ticks
  Duration tick_time = Duration::s(2);         // the server's
  OnSuspended on_suspended = OnSuspended::Continue;
  Watch watch = Watch::Predecessor;
  ZkClient client = ZkClient::V3_9_3;
  std::int64_t first_token = 1;                // the zxid the ensemble starts from
  // The random sleep before each reconnect (ClientCnxn startConnect's
  // nextLong(1000)): unset, drawn from the client's stream in whole ms in
  // [0, 999]; set, that duration or range.
  std::optional<DurationRange> reconnect_jitter;
  Duration lease() const override { return session_timeout; }
  ServerSetup server() const override { return {.first_token = first_token, .tick_time = tick_time}; }
};

std::shared_ptr<const AlgorithmOptions> parse_zookeeper(OptionReader& r, const LockConfig& common);
std::unique_ptr<Lock> make_zookeeper(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                     const ZooKeeperOptions& options);

}  // namespace locksim
