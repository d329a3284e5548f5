// The judges (product.md, "Properties every run is judged by"). Every checker
// reads only the trace, in its recorded order (true time, ties in the order the
// simulator produced them), and looks at client events by the role each process
// has in Trace::processes().
#include "reports/checkers.hpp"

#include <algorithm>
#include <iterator>
#include <set>

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
      return "storage accepted a write from a client whose lock had since been granted to another: data safety failed";
    case ViolationKind::LostUpdate:
      return "the storage's final counter does not account for every accepted read-modify-write";
    case ViolationKind::ForeignRelease:
      return "a client's release removed a lock entry that another client held";
    case ViolationKind::Stuck:
      return "longer than the liveness window (2 x TTL; without a TTL, the rest of the run) a client waited "
             "while nobody held the lock";
  }
  return "";
}

namespace {

bool has_role(const Trace& t, ProcId p, ProcessRole role) {
  return p < t.processes().size() && t.processes()[p].role == role;
}
bool is_client(const Trace& t, ProcId p) { return has_role(t, p, ProcessRole::Client); }

// "client1", "client1 and client2", "client1, client2 and client3".
std::string name_list(const Trace& trace, const std::vector<ProcId>& ps) {
  std::string out;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (i > 0) out += i + 1 == ps.size() ? " and " : ", ";
    out += trace.name(ps[i]);
  }
  return out;
}

struct Interval {
  ProcId client;
  Instant start, end;
  std::uint64_t seq;  // of the Acquired event: ties at one instant keep the trace's order
};

// Each client's critical sections: from Acquired to the first later Releasing,
// Lost or Crashed of that client, or to run_end. A second Acquired while one is
// open (a re-entrant acquire) does not start a new section: the open one goes on.
std::vector<Interval> critical_sections(const Trace& trace, Instant run_end) {
  const std::size_t n = trace.processes().size();
  std::vector<std::optional<std::size_t>> open(n);  // index into out, end not yet known
  std::vector<Interval> out;                        // in order of start (the trace's order)
  for (const TraceEvent& e : trace.events()) {
    if (!is_client(trace, e.process)) continue;
    auto& mine = open[e.process];
    if (e.kind == Ev::Acquired) {
      if (!mine) {
        mine = out.size();
        out.push_back({e.process, e.at, run_end, e.seq});
      }
    } else if (e.kind == Ev::Releasing || e.kind == Ev::Lost || e.kind == Ev::Crashed) {
      if (mine) out[*mine].end = e.at;
      mine.reset();
    }
  }
  return out;
}

}  // namespace

std::vector<Violation> check_overlap(const Trace& trace, const CheckOptions& o) {
  std::vector<Violation> out;
  // Sweep the sections in order of start, comparing each only with those still
  // open. A client's own sections are disjoint, so every open section but at
  // most one is a real overlap: the cost is O(sections + violations).
  std::vector<Interval> active;  // in order of start
  for (const Interval& next : critical_sections(trace, o.run_end)) {
    std::erase_if(active, [&](const Interval& a) { return a.end <= next.start; });
    for (const Interval& a : active) {
      if (a.client == next.client || !(a.start < next.end && next.start < a.end)) continue;
      const Instant from = max(a.start, next.start), until = min(a.end, next.end);
      out.push_back({ViolationKind::Overlap, from, until, {a.client, next.client},
                     trace.name(a.client) + " and " + trace.name(next.client) + " both held the lock from " +
                         format_instant(from) + " to " + format_instant(until)});
    }
    active.push_back(next);
  }
  return out;
}

std::vector<Violation> check_stale_write(const Trace& trace, const CheckOptions&) {
  std::vector<Violation> out;
  std::vector<std::optional<Instant>> last_acquired(trace.processes().size());
  // The most recent grant of all: if it is not the writer's own, it is the
  // latest grant to another client, and it is no earlier than the writer's.
  ProcId latest = kNoProc;
  for (const TraceEvent& e : trace.events()) {
    if (e.kind == Ev::Acquired && is_client(trace, e.process)) {
      last_acquired[e.process] = e.at;
      latest = e.process;
      continue;
    }
    if (e.kind != Ev::StorageWrite) continue;
    if (e.peer >= last_acquired.size() || !last_acquired[e.peer]) continue;  // never acquired
    if (latest == kNoProc || latest == e.peer) continue;
    const Instant mine = *last_acquired[e.peer], theirs = *last_acquired[latest];
    if (!(mine < theirs)) continue;  // granted at the same instant: not after it
    const std::string token = e.token >= 0 ? " (token " + std::to_string(e.token) + ")" : "";
    out.push_back({ViolationKind::StaleWrite, e.at, e.at, {e.peer, latest},
                   trace.name(e.process) + " accepted " + trace.name(e.peer) + "'s write" + token + " at " +
                       format_instant(e.at) + ", but " + trace.name(latest) + " was granted the lock at " +
                       format_instant(theirs) + ", after " + trace.name(e.peer) + " (" + format_instant(mine) + ")"});
  }
  return out;
}

std::vector<Violation> check_lost_update(const Trace& trace, const CheckOptions& o) {
  std::int64_t initial = 0;
  for (const TraceEvent& e : trace.events())
    if (e.kind == Ev::Started && has_role(trace, e.process, ProcessRole::Storage)) {
      initial = e.value;
      break;
    }
  std::int64_t current = initial, accepted = 0;
  ProcId current_writer = kNoProc;  // who wrote `current` (kNoProc: the initial value)
  const TraceEvent* first_bad = nullptr;
  std::int64_t bad_previous = 0;
  ProcId bad_previous_writer = kNoProc;
  for (const TraceEvent& e : trace.events()) {
    if (e.kind != Ev::StorageWrite) continue;
    ++accepted;
    if (!first_bad && e.value != current + 1) {
      first_bad = &e;
      bad_previous = current;
      bad_previous_writer = current_writer;
    }
    current = e.value;
    current_writer = e.peer;
  }
  if (!first_bad && current == initial + accepted) return {};

  std::string detail = "counter is " + std::to_string(current) + " after " + std::to_string(accepted) +
                       " accepted increment" + (accepted == 1 ? "" : "s");
  if (initial != 0) detail += " from " + std::to_string(initial);
  if (!first_bad) {  // cannot happen when every write is previous + 1; kept as a guard
    detail += ", not " + std::to_string(initial + accepted);
    return {{ViolationKind::LostUpdate, o.run_end, o.run_end, {}, detail}};
  }
  std::vector<ProcId> who{first_bad->peer};
  if (bad_previous_writer != kNoProc && bad_previous_writer != first_bad->peer) who.push_back(bad_previous_writer);
  const std::string previous = bad_previous_writer != kNoProc
                                   ? trace.name(bad_previous_writer) + "'s " + std::to_string(bad_previous)
                                   : "the initial " + std::to_string(bad_previous);
  detail += ": " + trace.name(first_bad->peer) + "'s write of " + std::to_string(first_bad->value) + " at " +
            format_instant(first_bad->at) +
            (first_bad->value <= bad_previous ? " overwrote " + previous
                                              : " skipped from " + previous + " (expected " +
                                                    std::to_string(bad_previous + 1) + ")");
  return {{ViolationKind::LostUpdate, first_bad->at, first_bad->at, std::move(who), std::move(detail)}};
}

std::vector<Violation> check_foreign_release(const Trace& trace, const CheckOptions&) {
  std::vector<Violation> out;
  std::vector<bool> releasing(trace.processes().size(), false);
  for (const TraceEvent& e : trace.events()) {
    if (is_client(trace, e.process)) {
      if (e.kind == Ev::Releasing) releasing[e.process] = true;
      else if (e.kind == Ev::Released || e.kind == Ev::ReleaseFailed || e.kind == Ev::Crashed ||
               e.kind == Ev::Acquiring)
        releasing[e.process] = false;
      continue;
    }
    if (e.kind != Ev::KeyDeleted || e.owner == kNoProc || e.owner == e.peer) continue;
    if (e.peer >= releasing.size() || !releasing[e.peer]) continue;
    out.push_back({ViolationKind::ForeignRelease, e.at, e.at, {e.peer, e.owner},
                   trace.name(e.peer) + "'s release deleted '" + e.key + "' on " + trace.name(e.process) +
                       ", which held " + trace.name(e.owner) + "'s lock"});
  }
  return out;
}

std::vector<Violation> check_stuck(const Trace& trace, const CheckOptions& o) {
  std::optional<Duration> window = o.liveness_window;
  if (!window && o.ttl) window = *o.ttl * 2;

  const std::size_t n = trace.processes().size();
  std::vector<bool> waiting(n, false), holding(n, false);
  std::set<ProcId> waiters;  // clients waiting now
  std::size_t holders = 0;

  std::vector<Violation> out;
  std::optional<Instant> stretch_start;
  std::set<ProcId> stretch_waiters;  // everyone who waited during the stretch
  auto close = [&](Instant end, bool open_at_run_end) {
    if (!stretch_start) return;
    const Duration length = end - *stretch_start;
    const bool counts = window ? length > *window
                               : open_at_run_end && length > (o.run_end - Instant::zero()) / 2;
    if (counts) {
      std::vector<ProcId> who(stretch_waiters.begin(), stretch_waiters.end());
      const std::string limit =
          window ? "liveness window " + format_duration(*window)
                 : "no TTL: still waiting when the run ended at " + format_instant(o.run_end);
      out.push_back({ViolationKind::Stuck, *stretch_start, end, who,
                     name_list(trace, who) + " waited " + format_duration(length) +
                         " to acquire while nobody held the lock (" + limit + ")"});
    }
    stretch_start.reset();
    stretch_waiters.clear();
  };
  auto set_waiting = [&](ProcId p, bool on) {
    if (waiting[p] == on) return;
    waiting[p] = on;
    if (on) waiters.insert(p);
    else waiters.erase(p);
  };
  auto set_holding = [&](ProcId p, bool on) {
    if (holding[p] == on) return;
    holding[p] = on;
    if (on) ++holders;
    else --holders;
  };

  for (const TraceEvent& e : trace.events()) {
    if (!is_client(trace, e.process)) continue;
    switch (e.kind) {
      case Ev::Acquiring: set_waiting(e.process, true); break;
      case Ev::Acquired: set_waiting(e.process, false); set_holding(e.process, true); break;
      case Ev::AcquireFailed: set_waiting(e.process, false); break;
      case Ev::Releasing:
      case Ev::Lost: set_holding(e.process, false); break;
      case Ev::Crashed: set_waiting(e.process, false); set_holding(e.process, false); break;
      default: continue;
    }
    const bool stuck_now = !waiters.empty() && holders == 0;
    if (!stuck_now) {
      close(e.at, false);
      continue;
    }
    if (!stretch_start) {
      stretch_start = e.at;
      stretch_waiters = waiters;
    } else if (e.kind == Ev::Acquiring) {
      stretch_waiters.insert(e.process);
    }
  }
  close(o.run_end, true);
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
