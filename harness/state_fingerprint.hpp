// A fingerprint of a run's state at an instant, for explore --exhaustive's
// set of states seen (TLC's fingerprints): the world's (sim/world.hpp
// World::digest: time, processes, pending events, messages in flight,
// partitions, link rules, and each server model's keys, sessions, counter),
// the faults still to come, and each client's place in its lock's life as
// its last trace events tell it (the client's coroutine frame is not
// visible).
#pragma once

#include <cstdint>
#include <vector>

#include "harness/faults.hpp"
#include "sim/world.hpp"

namespace locksim {

class StateFingerprint {
 public:
  // Every event, as it is recorded (a trace listener).
  void observe(const TraceEvent& e);
  std::uint64_t value(const World& world, const FaultEngine& faults) const;

 private:
  struct Phase {
    Ev last = Ev::Started;      // the last event of the lock's life
    std::int64_t token = -1;    // the last grant's
    std::int64_t valid_until = -1;
    std::string value;          // the last grant's lock value
    std::int64_t read = 0;      // the last counter read
  };
  std::vector<Phase> clients_;  // by process id; non-clients stay default
};

}  // namespace locksim
