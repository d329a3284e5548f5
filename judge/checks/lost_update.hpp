// Lost update: the counter does not account for every accepted increment.
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

// Lost update: the storage's counter must end at its initial value plus the
// number of accepted writes, each one the previous value plus one.
class LostUpdateChecker {
 public:
  static constexpr EvSet kReads{Ev::Started, Ev::StorageWrite};
  LostUpdateChecker(const Trace& t, const CheckOptions&, const GrantTruth&) : trace_(&t) {}
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    initial_.reset();
    current_ = accepted_ = 0;
    current_writer_ = kNoProc;
    bad_.reset();
  }

  void observe(const TraceEvent& e) {
    if (e.kind == Ev::Started && has_role(*trace_, e.process, ProcessRole::Storage)) {
      initial_ = current_ = e.value;  // a run has one storage, started once
      return;
    }
    if (e.kind != Ev::StorageWrite) return;
    ++accepted_;
    if (!bad_ && e.value != current_ + 1) bad_ = Bad{e.at, e.peer, e.value, current_, current_writer_};
    current_ = e.value;
    current_writer_ = e.peer;
  }

  std::vector<Violation> finish(const CheckOptions&) {
    // Every write the previous value plus one leaves the counter at its
    // initial value plus the writes: only a bad write can lose an update.
    if (!bad_) return {};
    const std::int64_t initial = initial_.value_or(0);
    const Bad& b = *bad_;
    std::vector<ProcId> who{b.writer};
    if (b.previous_writer != kNoProc && b.previous_writer != b.writer) who.push_back(b.previous_writer);
    const bool initial_value = b.previous_writer == kNoProc;
    Phrase how(b.value <= b.previous ? (initial_value ? W::ViolationOverwroteInitial : W::ViolationOverwrote)
                                     : (initial_value ? W::ViolationSkippedInitial : W::ViolationSkipped));
    how.name("who", trace_->name(b.writer)).number("value", b.value).instant("t", b.at);
    if (!initial_value) how.name("writer", trace_->name(b.previous_writer));
    how.number("previous", b.previous);
    if (b.value > b.previous) how.number("expected", b.previous + 1);
    Phrase detail(initial != 0 ? (accepted_ == 1 ? W::ViolationCounterFromOne : W::ViolationCounterFrom)
                               : (accepted_ == 1 ? W::ViolationCounterOne : W::ViolationCounter));
    detail.number("value", current_).number("n", accepted_);
    if (initial != 0) detail.number("initial", initial);
    detail.part("how", std::move(how));
    return {{ViolationKind::LostUpdate, b.at, b.at, std::move(who), std::move(detail)}};
  }

 private:
  struct Bad {  // the first write that was not the previous value plus one
    Instant at;
    ProcId writer;
    std::int64_t value, previous;
    ProcId previous_writer;
  };
  const Trace* trace_;
  std::optional<std::int64_t> initial_;
  std::int64_t current_ = 0, accepted_ = 0;
  ProcId current_writer_ = kNoProc;  // who wrote `current_` (kNoProc: the initial value)
  std::optional<Bad> bad_;
};

}  // namespace locksim::checks
