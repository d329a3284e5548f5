// A process's id in a world: the index of its trace entry, and of its links.
#pragma once

#include <cstdint>

namespace locksim {

using ProcId = std::uint32_t;
inline constexpr ProcId kNoProc = ~ProcId{0};

}  // namespace locksim
