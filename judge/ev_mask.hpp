// A set of event kinds as one word: which kinds a trace listener reads, so
// that it skips the others with one test (the judges' checkers, the fault
// engine's triggers) instead of a call or a loop per event.
#pragma once

#include <cstdint>

#include "sim/trace.hpp"

namespace locksim {

using EvMask = std::uint64_t;
static_assert(static_cast<unsigned>(kLastEvent) < 64, "an event kind's bit must fit EvMask");

constexpr EvMask ev_bit(Ev k) { return EvMask{1} << static_cast<unsigned>(k); }

template <typename... Kinds>
constexpr EvMask ev_kinds(Kinds... k) {
  return (EvMask{0} | ... | ev_bit(k));
}

}  // namespace locksim
