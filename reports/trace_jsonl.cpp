#include <nlohmann/json.hpp>

#include "reports/trace_jsonl.hpp"

namespace locksim {

void write_trace_jsonl(const Trace& trace, std::ostream& out) {
  for (const TraceEvent& e : trace.events()) write_event_jsonl(trace, e, out);
}

void write_event_jsonl(const Trace& trace, const TraceEvent& e, std::ostream& out) {
  using json = nlohmann::ordered_json;
  {
    json j;
    j["seq"] = e.seq;
    j["at_ns"] = e.at.ns();
    j["process"] = trace.name(e.process);
    j["event"] = event_name(e.kind);
    if (e.peer != kNoProc) j["peer"] = trace.name(e.peer);
    if (e.owner != kNoProc) j["owner"] = trace.name(e.owner);
    if (e.value != 0) j["value"] = e.value;
    if (e.token >= 0) j["token"] = e.token;
    if (e.process != kNoProc) {
      j["wall_ns"] = e.wall.ns();
      j["mono_ns"] = e.mono.ns();
    }
    if (!e.key.empty()) j["key"] = e.key;
    if (!e.detail.empty()) j["detail"] = e.detail;
    out << j.dump() << '\n';
  }
}

}  // namespace locksim
