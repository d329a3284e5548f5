// What every lock algorithm offers a client: acquire and release, as
// coroutines over the client's own process (its clocks, its random stream, its
// network calls). An algorithm never sees true time and never decides faults.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockalgos/config.hpp"
#include "sim/node_config.hpp"
#include "sim/task.hpp"
#include "sim/world.hpp"

namespace locksim {

// A lock as the client believes it holds it.
struct Grant {
  std::string value;                     // the random value that marks our entry
  std::int64_t token = -1;               // fencing token, -1: none issued
  std::optional<Instant> valid_until;    // on the client's monotonic clock; none: no expiry
  std::string where;                     // "redis1", "redis1,redis2,redis4": for the narrative
};

struct LockEnv {
  Process& self;                 // the client process the lock runs in
  std::vector<ProcId> nodes;     // lock-service nodes (Redis: the masters), in scenario order
  const LockConfig& config;
  ProcId sentinel = kNoProc;     // Redis with failover: whom to ask for a group's current master
};

class Lock {
 public:
  virtual ~Lock() = default;
  // Try (and retry, as the algorithm does) to take the lock.
  virtual Task<std::optional<Grant>> acquire() = 0;
  // Give it back. True if the service confirmed our entry was removed.
  virtual Task<bool> release(const Grant& grant) = 0;
  // A message the service pushed to this client unasked (a pub/sub message, a
  // watch notification). True if the lock took it.
  virtual bool on_push(Message&) { return false; }
  // Whether the client still believes it holds the lock. An algorithm that
  // learns of a loss (a ZooKeeper client's SUSPENDED or LOST state) records
  // Ev::Lost itself and answers false; the job then skips its write.
  virtual bool still_held() const { return true; }
};

}  // namespace locksim
