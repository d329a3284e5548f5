// Stuck: clients waited while nobody held the lock, past the liveness window.
// One kind's checker (judge/violation_kinds.inc): it reads the trace's
// events as they are recorded (observe), only the kinds of its kReads, and
// tells what it found when the run ends (finish). Every checker is made with
// the same arguments and restarted as if made anew, so that the judge holds
// them all alike.
#pragma once

#include <optional>
#include <vector>

#include "judge/checks/common.hpp"
#include "sim/word_ids.hpp"

namespace locksim::checks {

// Stuck: clients waited to acquire while nobody held the lock, for longer than
// the liveness window.
class StuckChecker {
 public:
  static constexpr EvSet kReads{Ev::Acquiring, Ev::Acquired, Ev::AcquireFailed, Ev::Releasing, Ev::Lost,
                                         Ev::Crashed, Ev::Paused, Ev::Resumed};
  StuckChecker(const Trace& t, const CheckOptions& o, const GrantTruth&) : trace_(&t), window_(window_of(o)) {}
  void restart(const Trace& t, const CheckOptions& o) {
    trace_ = &t;
    window_ = window_of(o);
    clients_.clear();
    waiters_ = holders_ = 0;
    seq_ = 0;
    stretch_start_.reset();
    stretch_start_seq_ = 0;
    out_.clear();
  }

  void observe(const TraceEvent& e) {
    if (!is_client(*trace_, e.process)) return;
    seq_ = e.seq + 1;  // 0 is "never"
    switch (e.kind) {
      case Ev::Acquiring: set_waiting(e.process, true); break;
      case Ev::Acquired: set_waiting(e.process, false); set_holding(e.process, true); break;
      case Ev::AcquireFailed: set_waiting(e.process, false); break;
      case Ev::Releasing:
      case Ev::Lost: set_holding(e.process, false); break;
      case Ev::Crashed: set_waiting(e.process, false); set_holding(e.process, false); break;
      // A client frozen by a stop-the-world pause is not waiting on the lock:
      // nothing of it runs, so no lock could serve it (one paused inside its
      // acquire until after the run ended was called stuck).
      case Ev::Paused: set_frozen(e.process, true); break;
      case Ev::Resumed: set_frozen(e.process, false); break;
      default: return;
    }
    const bool stuck_now = waiters_ > 0 && holders_ == 0;
    if (!stuck_now) {
      close(e.at, false);
      return;
    }
    if (!stretch_start_) {
      stretch_start_ = e.at;
      stretch_start_seq_ = seq_;
    }
  }

  std::vector<Violation> finish(const CheckOptions& o) {
    close(o.run_end, true, o.run_end);
    return std::move(out_);
  }

 private:
  static std::optional<Duration> window_of(const CheckOptions& o) {
    return o.liveness_window ? o.liveness_window : o.ttl ? std::optional(*o.ttl * 2) : std::nullopt;
  }
  void close(Instant end, bool open_at_run_end, Instant run_end = Instant::never()) {
    if (!stretch_start_) return;
    const Duration length = end - *stretch_start_;
    const bool counts = window_ ? length > *window_ : open_at_run_end && length > (run_end - Instant::zero()) / 2;
    if (counts) {
      // Everyone who waited during the stretch: waiting now, or stopped after it began.
      std::vector<ProcId> who;
      for (ProcId p = 0; p < clients_.size(); ++p)
        if (counted(p) || clients_[p].wait_ended > stretch_start_seq_) who.push_back(p);
      Phrase detail(window_ ? W::ViolationStuckWindow : W::ViolationStuckNoTtl);
      detail.names("who", names_of(*trace_, who)).duration("d", length);
      if (window_) detail.duration("window", *window_);
      else detail.instant("end", run_end);
      out_.push_back({ViolationKind::Stuck, *stretch_start_, end, std::move(who), std::move(detail)});
    }
    stretch_start_.reset();
  }

  // Counted as a waiter: asking for the lock and not frozen by a pause.
  bool counted(ProcId p) const { return p < clients_.size() && clients_[p].counted(); }
  void recount(ProcId p, bool before) {
    const bool now = counted(p);
    if (now == before) return;
    if (now) {
      ++waiters_;
    } else {
      --waiters_;
      clients_[p].wait_ended = seq_;
    }
  }
  void set_waiting(ProcId p, bool on) {
    const bool before = counted(p);
    slot(clients_, p, *trace_).waiting = on;
    recount(p, before);
  }
  void set_frozen(ProcId p, bool on) {
    const bool before = counted(p);
    slot(clients_, p, *trace_).frozen = on;
    recount(p, before);
  }
  void set_holding(ProcId p, bool on) {
    bool& h = slot(clients_, p, *trace_).holding;
    if (h == on) return;
    h = on;
    if (on) ++holders_;
    else --holders_;
  }

  // One client's state, in one vector (one allocation per run).
  struct ClientState {
    bool waiting = false, holding = false, frozen = false;
    std::uint64_t wait_ended = 0;  // 1 + seq of the event that ended its last wait
    bool counted() const { return waiting && !frozen; }
  };
  const Trace* trace_;
  std::optional<Duration> window_;
  std::vector<ClientState> clients_;       // by process
  std::size_t waiters_ = 0, holders_ = 0;  // clients waiting, holding now
  std::uint64_t seq_ = 0;                  // 1 + seq of the event being judged
  std::optional<Instant> stretch_start_;
  std::uint64_t stretch_start_seq_ = 0;    // 1 + seq of the event that began it
  std::vector<Violation> out_;
};

}  // namespace locksim::checks
