// The judges. Each checker reads only the trace — never an algorithm's
// internals — and reports every violation of one property (product.md).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "judge/harm.hpp"
#include "sim/phrase.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace locksim {

// The kinds, from judge/violation_kinds.inc.
enum class ViolationKind : std::uint8_t {
#define LOCKSIM_VIOLATION(Id, name, Checker, mark) Id,
#include "judge/violation_kinds.inc"
#undef LOCKSIM_VIOLATION
};
inline constexpr ViolationKind kAllViolationKinds[] = {
#define LOCKSIM_VIOLATION(Id, name, Checker, mark) ViolationKind::Id,
#include "judge/violation_kinds.inc"
#undef LOCKSIM_VIOLATION
};

std::string_view violation_name(ViolationKind k);  // "overlap", "stale-write", ...
std::optional<ViolationKind> parse_violation(std::string_view name);
char violation_mark(ViolationKind k);              // its letter in a heatmap's cells

struct Violation {
  ViolationKind kind;
  Instant at;                    // true time it began
  Instant until;                 // true time it ended (== at for a point event)
  std::vector<ProcId> processes; // the clients involved
  Phrase detail;                 // what happened, with whom and when (reports/ words it)
};

struct CheckOptions {
  Instant run_end;                         // the true time the run stopped
  std::optional<Duration> ttl;             // the lock's TTL, if it has one
  std::optional<Duration> liveness_window; // overrides the default (2 x TTL; see stuck)
};

// A client's grant that was a belief, not a grant (catalogue K7): when the
// client recorded Acquired, the lock service held its entries on fewer
// nodes than a grant needs (Trace::grant_quorum: one; Redlock a majority of
// its masters) — each had expired or been deleted, or the coordination
// service held the lock for another client or for nobody. Known from what
// the service's nodes state in the trace (a Redis command naming the key's
// owner, a coordination server's Holder); where no node has named a holder
// every grant counts.
// The stale-write judge counts only real grants; the reports tell these.
struct Belief {
  std::uint64_t seq;  // the Acquired event
  ProcId client;
  Instant at;
  std::size_t held = 0;  // on how many nodes the service held the client's entries (fewer than Trace::grant_quorum)
};
std::vector<Belief> beliefs_not_grants(const Trace& trace);

// All violations of all kinds, ordered by (at, kind).
std::vector<Violation> check_trace(const Trace& trace, const CheckOptions& options);

// The same judges, streaming: observe() every event as it is recorded (a
// Trace listener), then finish() when the run stops. Memory grows with the
// number of processes and open critical sections, not with the run's length,
// so a simulated hour is judged without keeping its events. check_trace() is
// a Judge fed a kept trace.
class Judge {
 public:
  // `options.run_end` is not known yet: finish() takes it.
  Judge(const Trace& trace, const CheckOptions& options);
  ~Judge();
  Judge(const Judge&) = delete;
  Judge& operator=(const Judge&) = delete;
  // Judge another run from its start, on `trace`: as a Judge made anew, but
  // its checkers keep their containers' capacity (explore's runs, one after
  // another on a thread, share one judge).
  void restart(const Trace& trace, const CheckOptions& options);
  void observe(const TraceEvent& e);
  // The kinds some checker reads: observe() of any other kind does nothing,
  // so a listener may skip the call (the network's chatter, failed tries).
  static constexpr EvSet kReads{Ev::Started, Ev::Paused, Ev::Resumed, Ev::Crashed, Ev::Acquiring, Ev::Acquired, Ev::AcquireFailed,
               Ev::Lost, Ev::Releasing, Ev::Released, Ev::ReleaseFailed, Ev::Command, Ev::Expired, Ev::KeyDeleted,
               Ev::StorageRead, Ev::StorageWrite, Ev::StorageReject, Ev::Holder, Ev::Wrote};
  static bool reads(Ev kind) { return kReads.has(kind); }
  // Of these kinds it reads only the events that name an owner: a command
  // that leaves nobody holding the key changes nothing the checkers know
  // (ServiceHoldings). A listener for the judge alone may pass this to
  // Trace::add_listener, and a lean world skips the others.
  static constexpr EvSet kOwnedOnly{Ev::Command};
  // All violations, ordered by (at, kind). Call once.
  std::vector<Violation> finish(Instant run_end);
  // The run's harm (harm.hpp), from the events observed so far.
  Harm harm() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One checker each, for tests and for the reports.
std::vector<Violation> check_overlap(const Trace& trace, const CheckOptions& options);
std::vector<Violation> check_stale_write(const Trace& trace, const CheckOptions& options);
std::vector<Violation> check_lost_update(const Trace& trace, const CheckOptions& options);
std::vector<Violation> check_foreign_release(const Trace& trace, const CheckOptions& options);
std::vector<Violation> check_stuck(const Trace& trace, const CheckOptions& options);

}  // namespace locksim
