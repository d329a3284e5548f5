// [[node]]: one lock-service node as the scenario file describes it.
#pragma once

#include <string>

#include "sim/clock.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace locksim {

// appendonly no, or appendonly yes with appendfsync always or everysec
// (sim/servers/redis/node.hpp RedisConfig says what a crash loses with each).
enum class Persistence : std::uint8_t { None, AofAlways, AofEverysec };

struct NodeConfig {
  std::string name;
  ClockSpec clock;
  Persistence persistence = Persistence::None;
  Duration restart_delay = Duration::zero();  // a restart fault takes effect this much later
  std::string replica_of;                  // Redis: this node replicates that master ("": a master)
  DurationRange replication_lag = DurationRange::fixed(Duration::ms(1));  // master -> replica, per write
  // How its master sends it an expiry: PXAT <master wall ms> from Redis 7.0
  // (#8474, t_string.c:115-121); 6.0 and 6.2 send the relative PX (false).
  bool expiry_as_pxat = true;
  int replica_priority = 100;              // replica-priority: Sentinel promotes the lowest first; 0: never
  int line = 0;
};

}  // namespace locksim
