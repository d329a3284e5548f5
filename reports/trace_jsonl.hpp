// Every event of a trace as JSON Lines, for other tools (`run --trace PATH`).
#pragma once

#include <ostream>

#include "sim/trace.hpp"

namespace locksim {

void write_trace_jsonl(const Trace& trace, std::ostream& out);

}  // namespace locksim
