// What the scenario-level tests share: the catalogue's files, and looking
// things up in a run's trace.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "harness/run.hpp"
#include "reports/words.hpp"

namespace locksim::testing {

// A fact as an English reader gets it (a test of what a judge says asks this
// or the Phrase itself).
inline std::string english(const Phrase& p) { return say(Lang::En, p); }

inline Scenario catalogue(const std::string& relative) {
  return load_scenario((std::filesystem::path(LOCKSIM_SOURCE_DIR) / relative).string());
}

// Events of one kind, at one process if named.
inline std::vector<const TraceEvent*> events_of(const RunResult& r, Ev kind, const std::string& process = "") {
  std::vector<const TraceEvent*> out;
  const auto id = process.empty() ? std::nullopt : r.world->find(process);
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == kind && (!id || e.process == *id)) out.push_back(&e);
  return out;
}

// The scenario's first fault of this kind (the one a threshold test moves).
inline FaultSpec& first_fault(Scenario& s, FaultKind kind) {
  for (FaultSpec& f : s.faults)
    if (f.kind == kind) return f;
  FAIL("the scenario has no " << fault_kind_name(kind) << " fault");
  throw;
}

// Whether a node's trace has a command whose text contains `text`.
inline bool has_command(const RunResult& r, const std::string& node, const std::string& text) {
  for (const TraceEvent* e : events_of(r, Ev::Command, node))
    if (e->detail.find(text) != std::string::npos) return true;
  return false;
}

// One hand-built event for judge tests, at `ms` milliseconds of true time.
inline void record_event(Trace& t, std::int64_t ms, ProcId p, Ev kind, ProcId peer, ProcId owner, std::int64_t value,
                         std::int64_t token, std::string key) {
  TraceEvent e;
  e.at = Instant::zero() + Duration::ms(ms);
  e.process = p;
  e.kind = kind;
  e.peer = peer;
  e.owner = owner;
  e.value = value;
  e.token = token;
  e.key = std::move(key);
  t.record(std::move(e));
}

// A recorder of hand-built events: ev(ms, process, kind, peer, owner,
// value, token) appends one event on `key` to `t`.
inline auto hand_events(Trace& t, std::string key = "") {
  return [&t, key = std::move(key)](std::int64_t ms, ProcId p, Ev kind, ProcId peer = kNoProc,
                                    ProcId owner = kNoProc, std::int64_t value = 0, std::int64_t token = -1) {
    record_event(t, ms, p, kind, peer, owner, value, token, key);
  };
}

}  // namespace locksim::testing
