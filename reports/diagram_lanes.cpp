// Which processes get a lane of their own, and what the lanes say of clocks.
#include <fmt/format.h>

#include <algorithm>

#include "reports/diagram_canvas.hpp"

namespace locksim::diagram {

bool is_client(const Trace& trace, ProcId p) {
  const auto& procs = trace.processes();
  return p < procs.size() && procs[p].role == ProcessRole::Client;
}

namespace {

// The clients in the order they deserve a lane: those in violations, then
// those that held the lock (first to hold first), then the rest.
std::vector<ProcId> by_priority(const RunResult& r, const std::vector<ProcId>& clients) {
  std::vector<ProcId> priority;
  auto take = [&](ProcId p) {
    if (std::find(priority.begin(), priority.end(), p) == priority.end()) priority.push_back(p);
  };
  for (const Violation& v : r.violations)
    for (ProcId p : v.processes) take(p);
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == Ev::Acquired) take(e.process);
  for (ProcId p : clients) take(p);
  return priority;
}

}  // namespace

Lanes select_lanes(const RunResult& r, std::size_t max_client_lanes, Lang lang) {
  const Trace& trace = r.world->trace();
  const auto& procs = trace.processes();
  Lanes l;
  // Which clients get a lane: all of them when they fit; else those in
  // violations, then those that held the lock first; the rest share a lane.
  for (ProcId p = 0; p < procs.size(); ++p)
    if (is_client(trace, p)) l.clients.push_back(p);
  l.shown.assign(procs.size(), true);
  if (l.clients.size() > max_client_lanes) {
    const std::vector<ProcId> priority = by_priority(r, l.clients);
    for (std::size_t i = max_client_lanes; i < priority.size(); ++i) l.shown[priority[i]] = false;
    l.hidden = l.clients.size() - max_client_lanes;
  }
  // Lane order: the processes in trace order, the shared lane after the last client shown.
  l.lane_of.assign(procs.size(), 0);
  const ProcId last_client = l.clients.empty() ? 0 : l.clients.back();
  for (ProcId p = 0; p < procs.size(); ++p) {
    if (l.shown[p]) l.lane_of[p] = static_cast<double>(l.count++);
    if (l.hidden && p == last_client) l.others_lane = static_cast<double>(l.count++);
  }
  for (ProcId p = 0; p < procs.size(); ++p)
    if (!l.shown[p]) l.lane_of[p] = l.others_lane;
  l.others_name = say(lang, W::LabelOtherClients, {{"n", std::to_string(l.hidden)}});
  return l;
}

std::map<std::string, std::string> clock_notes(const Scenario& sc, Lang lang) {
  auto note_of = [lang](const ClockSpec& c) {
    std::string n;
    if (c.drift_ppb != 0)
      n = say(lang, c.drift_ppb > 0 ? W::ClockNoteFast : W::ClockNoteSlow,
              {{"pct", fmt::format("{:g}", static_cast<double>(c.drift_ppb < 0 ? -c.drift_ppb : c.drift_ppb) / 1e7)}});
    if (c.offset != Duration::zero()) {
      const std::string d = std::string(c.offset > Duration::zero() ? "+" : "") + format_duration(c.offset);
      n += say(lang, n.empty() ? W::ClockNoteOff : W::ClockNoteOffMore, {{"d", d}});
    }
    return n;
  };
  std::map<std::string, std::string> notes;
  for (const NodeConfig& n : sc.nodes) notes[n.name] = note_of(n.clock);
  for (const ClientConfig& c : sc.clients) notes[c.name] = note_of(c.clock);
  notes[sc.storage.name] = note_of(sc.storage.clock);
  return notes;
}

}  // namespace locksim::diagram
