// Every event of a trace as JSON Lines, for other tools (`run --trace PATH`).
#pragma once

#include <ostream>

#include "sim/trace.hpp"

namespace locksim {

void write_trace_jsonl(const Trace& trace, std::ostream& out);
// One event, one line: for writing the trace as the run goes.
void write_event_jsonl(const Trace& trace, const TraceEvent& e, std::ostream& out);

}  // namespace locksim
