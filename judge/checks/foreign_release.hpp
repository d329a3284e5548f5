// Foreign release: a release deleted another client's entry.
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

// Foreign release: a client's release deleted a lock entry another client set.
class ForeignReleaseChecker {
 public:
  static constexpr EvSet kReads{Ev::Releasing, Ev::Released, Ev::ReleaseFailed, Ev::Crashed, Ev::Acquiring, Ev::KeyDeleted};
  ForeignReleaseChecker(const Trace& t, const CheckOptions&, const GrantTruth&) : trace_(&t) {}
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    releasing_.clear();
    out_.clear();
  }

  void observe(const TraceEvent& e) {
    if (is_client(*trace_, e.process)) {
      if (e.kind == Ev::Releasing) slot(releasing_, e.process, *trace_) = 1;
      else if (e.kind == Ev::Released || e.kind == Ev::ReleaseFailed || e.kind == Ev::Crashed ||
               e.kind == Ev::Acquiring)
        slot(releasing_, e.process, *trace_) = 0;
      return;
    }
    if (e.kind != Ev::KeyDeleted || e.owner == kNoProc || e.owner == e.peer) return;
    if (e.peer >= releasing_.size() || !releasing_[e.peer]) return;
    out_.push_back({ViolationKind::ForeignRelease, e.at, e.at, {e.peer, e.owner},
                    Phrase(W::ViolationForeignRelease)
                        .name("who", trace_->name(e.peer))
                        .name("key", e.key)
                        .name("node", trace_->name(e.process))
                        .name("owner", trace_->name(e.owner))});
  }

  std::vector<Violation> finish(const CheckOptions&) { return std::move(out_); }

 private:
  const Trace* trace_;
  std::vector<std::uint8_t> releasing_;
  std::vector<Violation> out_;
};

}  // namespace locksim::checks
