// [[node]]: one lock-service node as the scenario file describes it.
#pragma once

#include <string>

#include "sim/clock.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace locksim {

enum class Persistence : std::uint8_t { None, AofAlways };

struct NodeConfig {
  std::string name;
  ClockSpec clock;
  Persistence persistence = Persistence::None;
  Duration restart_delay = Duration::zero();  // a restart fault takes effect this much later
  std::string replica_of;                  // Redis: this node replicates that master ("": a master)
  DurationRange replication_lag = DurationRange::fixed(Duration::ms(1));  // master -> replica, per write
  bool expiry_as_pxat = true;              // Redis >= 6.2 propagates PX as absolute PXAT (false: 6.0's PX)
  int line = 0;
};

}  // namespace locksim
