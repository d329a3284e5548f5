#include "reports/checkers.hpp"

#include <algorithm>
#include <map>

namespace locksim {

std::string_view violation_name(ViolationKind k) {
  switch (k) {
    case ViolationKind::Overlap: return "overlap";
    case ViolationKind::StaleWrite: return "stale-write";
    case ViolationKind::LostUpdate: return "lost-update";
    case ViolationKind::ForeignRelease: return "foreign-release";
    case ViolationKind::Stuck: return "stuck";
  }
  return "?";
}

std::optional<ViolationKind> parse_violation(std::string_view name) {
  for (ViolationKind k : kAllViolationKinds)
    if (violation_name(k) == name) return k;
  return std::nullopt;
}

std::string_view violation_help(ViolationKind k) {
  switch (k) {
    case ViolationKind::Overlap:
      return "two clients' critical sections overlapped in true time: mutual exclusion failed";
    case ViolationKind::StaleWrite:
      return "storage accepted a write from a client whose lock had since been granted to another";
    case ViolationKind::LostUpdate:
      return "the counter does not account for every accepted read-modify-write";
    case ViolationKind::ForeignRelease:
      return "a client's release removed a lock entry another client held";
    case ViolationKind::Stuck:
      return "longer than the liveness window, a client waited while nobody held the lock";
  }
  return "";
}

namespace {

bool is_client(const Trace& t, ProcId p) {
  return p < t.processes().size() && t.processes()[p].role == ProcessRole::Client;
}

struct Interval {
  ProcId client;
  Instant start, end;
};

// Each client's critical sections: from Acquired to Releasing, Lost or Crashed.
std::vector<Interval> critical_sections(const Trace& trace, Instant run_end) {
  std::vector<Interval> out;
  std::map<ProcId, Instant> open;
  for (const TraceEvent& e : trace.events()) {
    if (!is_client(trace, e.process)) continue;
    if (e.kind == Ev::Acquired) {
      open[e.process] = e.at;
    } else if (e.kind == Ev::Releasing || e.kind == Ev::Lost || e.kind == Ev::Crashed) {
      auto it = open.find(e.process);
      if (it == open.end()) continue;
      out.push_back({e.process, it->second, e.at});
      open.erase(it);
    }
  }
  for (const auto& [client, start] : open) out.push_back({client, start, run_end});
  std::sort(out.begin(), out.end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.client < b.client;
  });
  return out;
}

}  // namespace

std::vector<Violation> check_overlap(const Trace& trace, const CheckOptions& o) {
  std::vector<Violation> out;
  const std::vector<Interval> cs = critical_sections(trace, o.run_end);
  std::vector<Interval> active;  // sweep by start: compare only with sections still open
  for (const Interval& next : cs) {
    std::erase_if(active, [&](const Interval& a) { return a.end <= next.start; });
    for (const Interval& a : active) {
      if (a.client == next.client || !(next.start < a.end)) continue;
      const Instant until = min(a.end, next.end);
      out.push_back({ViolationKind::Overlap, next.start, until, {a.client, next.client},
                     trace.name(a.client) + " and " + trace.name(next.client) + " both held the lock from " +
                         format_instant(next.start) + " to " + format_instant(until)});
    }
    active.push_back(next);
  }
  return out;
}

std::vector<Violation> check_stale_write(const Trace& trace, const CheckOptions&) {
  std::vector<Violation> out;
  std::map<ProcId, Instant> last_acquired;
  ProcId latest = kNoProc;  // the most recent acquirer of all
  for (const TraceEvent& e : trace.events()) {
    if (e.kind == Ev::Acquired && is_client(trace, e.process)) {
      last_acquired[e.process] = e.at;
      latest = e.process;
      continue;
    }
    if (e.kind != Ev::StorageWrite) continue;
    const auto mine = last_acquired.find(e.peer);
    if (mine == last_acquired.end() || latest == kNoProc || latest == e.peer) continue;
    // Someone was granted the lock after the writer's own grant.
    const Instant theirs = last_acquired[latest];
    if (!(mine->second < theirs)) continue;
    std::string token = e.token >= 0 ? " (token " + std::to_string(e.token) + ")" : "";
    out.push_back({ViolationKind::StaleWrite, e.at, e.at, {e.peer, latest},
                   "storage accepted " + trace.name(e.peer) + "'s write" + token + " at " + format_instant(e.at) +
                       ", but " + trace.name(latest) + " was granted the lock at " + format_instant(theirs) +
                       ", after " + trace.name(e.peer) + " (" + format_instant(mine->second) + ")"});
  }
  return out;
}

std::vector<Violation> check_lost_update(const Trace& trace, const CheckOptions&) {
  std::int64_t initial = 0;
  for (const TraceEvent& e : trace.events())
    if (e.kind == Ev::Started && e.process < trace.processes().size() &&
        trace.processes()[e.process].role == ProcessRole::Storage) {
      initial = e.value;
      break;
    }
  std::int64_t current = initial, accepted = 0;
  ProcId current_writer = kNoProc;
  const TraceEvent* first_bad = nullptr;
  ProcId overwritten = kNoProc;
  for (const TraceEvent& e : trace.events()) {
    if (e.kind != Ev::StorageWrite) continue;
    ++accepted;
    if (e.value != current + 1 && !first_bad) {
      first_bad = &e;
      overwritten = current_writer;
    }
    current = e.value;
    current_writer = e.peer;
  }
  if (!first_bad && current == initial + accepted) return {};
  std::string detail = "counter is " + std::to_string(current) + " after " + std::to_string(accepted) +
                       " accepted increment" + (accepted == 1 ? "" : "s") + " from " + std::to_string(initial);
  std::vector<ProcId> who;
  Instant at = first_bad ? first_bad->at : Instant::zero();
  if (first_bad) {
    detail += ": " + trace.name(first_bad->peer) + "'s write of " + std::to_string(first_bad->value) + " at " +
              format_instant(first_bad->at);
    who.push_back(first_bad->peer);
    if (overwritten != kNoProc) {
      detail += " overwrote " + trace.name(overwritten) + "'s update";
      if (overwritten != first_bad->peer) who.push_back(overwritten);
    }
  }
  return {{ViolationKind::LostUpdate, at, at, who, detail}};
}

std::vector<Violation> check_foreign_release(const Trace& trace, const CheckOptions&) {
  std::vector<Violation> out;
  std::map<ProcId, bool> releasing;
  for (const TraceEvent& e : trace.events()) {
    if (is_client(trace, e.process)) {
      if (e.kind == Ev::Releasing) releasing[e.process] = true;
      else if (e.kind == Ev::Released || e.kind == Ev::ReleaseFailed || e.kind == Ev::Crashed ||
               e.kind == Ev::Acquiring)
        releasing[e.process] = false;
      continue;
    }
    if (e.kind != Ev::KeyDeleted || e.owner == kNoProc || e.owner == e.peer) continue;
    if (!releasing[e.peer]) continue;
    out.push_back({ViolationKind::ForeignRelease, e.at, e.at, {e.peer, e.owner},
                   trace.name(e.peer) + "'s release deleted '" + e.key + "' on " + trace.name(e.process) +
                       ", which held " + trace.name(e.owner) + "'s lock"});
  }
  return out;
}

std::vector<Violation> check_stuck(const Trace& trace, const CheckOptions& o) {
  std::optional<Duration> window = o.liveness_window;
  if (!window && o.ttl) window = *o.ttl * 2;
  std::map<ProcId, bool> waiting, holding;
  auto count = [](const std::map<ProcId, bool>& m) {
    int n = 0;
    for (const auto& [p, on] : m) n += on;
    return n;
  };
  std::vector<Violation> out;
  std::optional<Instant> stretch_start;
  std::vector<ProcId> stretch_waiters;
  auto close = [&](Instant end, bool at_run_end) {
    if (!stretch_start) return;
    const Duration length = end - *stretch_start;
    const bool counts = window ? length > *window
                               : at_run_end && length > (o.run_end - Instant::zero()) / 2;
    if (counts) {
      std::string who;
      for (ProcId p : stretch_waiters) who += (who.empty() ? "" : ", ") + trace.name(p);
      std::string limit = window ? "liveness window " + format_duration(*window)
                                 : "no TTL: it lasted to the end of the run";
      out.push_back({ViolationKind::Stuck, *stretch_start, end, stretch_waiters,
                     who + " waited " + format_duration(length) + " to acquire while nobody held the lock (" + limit +
                         ")"});
    }
    stretch_start.reset();
    stretch_waiters.clear();
  };
  for (const TraceEvent& e : trace.events()) {
    if (!is_client(trace, e.process)) continue;
    switch (e.kind) {
      case Ev::Acquiring: waiting[e.process] = true; break;
      case Ev::Acquired: waiting[e.process] = false; holding[e.process] = true; break;
      case Ev::AcquireFailed: waiting[e.process] = false; break;
      case Ev::Releasing:
      case Ev::Lost: holding[e.process] = false; break;
      case Ev::Crashed: waiting[e.process] = false; holding[e.process] = false; break;
      default: continue;
    }
    const bool stuck_now = count(waiting) > 0 && count(holding) == 0;
    if (stuck_now && !stretch_start) stretch_start = e.at;
    if (stuck_now)
      for (const auto& [p, on] : waiting)
        if (on && std::find(stretch_waiters.begin(), stretch_waiters.end(), p) == stretch_waiters.end())
          stretch_waiters.push_back(p);
    if (!stuck_now) close(e.at, false);
  }
  close(o.run_end, true);
  for (Violation& v : out) std::sort(v.processes.begin(), v.processes.end());
  return out;
}

std::vector<Violation> check_trace(const Trace& trace, const CheckOptions& o) {
  std::vector<Violation> all;
  for (auto* checker : {check_overlap, check_stale_write, check_lost_update, check_foreign_release, check_stuck}) {
    auto found = checker(trace, o);
    all.insert(all.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  }
  std::stable_sort(all.begin(), all.end(), [](const Violation& a, const Violation& b) {
    return a.at != b.at ? a.at < b.at : a.kind < b.kind;
  });
  return all;
}

}  // namespace locksim
