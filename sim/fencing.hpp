// How the storage checks a write, and what a scenario's `[lock] fencing` names:
// one enum for both, so the simulated storage and the live run's read it alike.
#pragma once

#include <cstdint>

namespace locksim {

// Token: rejects a token lower than the highest seen (Kleppmann).
// LockValue: a client claims the resource with its lock value, and a write is
// accepted only while that value is still the owner (antirez's check-and-set).
enum class Fencing : std::uint8_t { None, Token, LockValue };

}  // namespace locksim
