// What every lock algorithm offers a client: acquire and release, as
// coroutines over the client's environment (lockalgos/client.hpp: its clocks,
// its random stream, its calls). An algorithm never sees true time, other
// processes or faults.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockalgos/client.hpp"
#include "lockalgos/config.hpp"
#include "sim/task.hpp"

namespace locksim {

// A lock as the client believes it holds it.
struct Grant {
  std::string value;                     // the random value that marks our entry
  std::int64_t token = -1;               // fencing token, -1: none issued
  std::optional<Instant> valid_until;    // on the client's monotonic clock; none: no expiry
  std::string where;                     // "redis1", "redis1,redis2,redis4": for the narrative
};

// Where the lock service is, as the scenario names it.
struct LockTargets {
  std::vector<ProcId> nodes;     // lock-service nodes (Redis: the masters), in scenario order
  ProcId sentinel = kNoProc;     // Redis with failover: whom to ask for a group's current master
};

// A lock lives as long as its client's process image: a restarted client makes a new one.
class Lock {
 public:
  virtual ~Lock() = default;
  // Try (and retry, as the algorithm does) to take the lock.
  virtual Task<std::optional<Grant>> acquire() = 0;
  // Give it back. True if the service confirmed our entry was removed.
  virtual Task<bool> release(const Grant& grant) = 0;
  // A message `from` a node pushed to this client unasked (a pub/sub
  // message, a watch notification). True if the lock took it.
  virtual bool on_push(ProcId /*from*/, const Payload& /*push*/) { return false; }
  // Whether the client still believes it holds the lock. An algorithm that
  // learns of a loss (a ZooKeeper client's SUSPENDED or LOST state) records
  // Ev::Lost itself and answers false; the job then skips its write.
  virtual bool still_held() const { return true; }
  // Until when the client believes `grant` lasts, on its monotonic clock: the
  // grant's own validity, or later if the lock has renewed it since (Redisson's
  // watchdog extends the belief it started with).
  virtual std::optional<Instant> believed_until(const Grant& grant) const { return grant.valid_until; }
  // A check a holder that checks before writing asks of the lock service
  // instead of its own clock, where the library offers one and the scenario
  // uses it (redsync's Mutex.Valid()): whether the service said the lock is
  // still ours. nullopt: no such check; the job compares believed_until with
  // its clock.
  virtual Task<std::optional<bool>> confirm(const Grant& /*grant*/) { co_return std::nullopt; }
  // A library scenario: how this client's application uses the library (its
  // [[client]] keys), told once, before the first acquire.
  virtual void use(const LibraryUse& /*use*/) {}
  // The application's check before its write, as the library answers it
  // (a flag, a state, a round trip). True: it goes on and writes. Only the
  // checks the library's table line lists are ever asked.
  virtual Task<bool> check(LibraryCheck /*kind*/, const Grant& /*grant*/) { co_return true; }
};

}  // namespace locksim
