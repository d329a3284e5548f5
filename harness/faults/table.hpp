// The fault kinds: the table. Each kind is one file here (pause.cpp defines
// kPauseFault, a FaultKindInfo: kind.hpp) and one X(...) line below; the
// loader, the fault engine, the writer, explore, the shrinker and `locksim
// list` read everything else from the table.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

// X(Name): FaultKind::Name, described by kNameFault. The order is the order
// `locksim list` prints them in and the order explore's swarm considers them
// in: reordering changes what every explore seed draws, and so does a new
// kind explore draws (for explorations without --faults).
#define LOCKSIM_FAULT_KINDS(X) \
  X(Pause)                     \
  X(Crash)                     \
  X(Restart)                   \
  X(ClockJump)                 \
  X(ClockDrift)                \
  X(Partition)                 \
  X(Heal)                      \
  X(Delay)                     \
  X(Drop)                      \
  X(Failover)                  \
  /* a new kind: one line above this one */

namespace locksim {

enum class FaultKind : std::uint8_t {
#define LOCKSIM_FAULT_ENUMERATOR(Name) Name,
  LOCKSIM_FAULT_KINDS(LOCKSIM_FAULT_ENUMERATOR)
#undef LOCKSIM_FAULT_ENUMERATOR
};

// As written in a file: kind = "clock-jump".
std::string_view fault_kind_name(FaultKind k);
std::optional<FaultKind> find_fault_kind(std::string_view name);

}  // namespace locksim
