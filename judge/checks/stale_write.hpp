// Stale write: the storage took a write from a superseded holder.
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

// Stale write: storage accepted a write from a client that was granted the
// lock before the latest grant, which went to another client. Grants are
// judged by what the lock service held (GrantTruth): a client that recorded
// Acquired while the service held none of its entries only believed it held
// the lock (K7). Its own "grant" neither supersedes anyone's nor protects its
// writes; for it, the time it began asking stands for when it was granted.
//
// One write of a superseded holder is not stale: a write in token order
// (its token at least every token the storage has accepted) that lands
// before the storage has accepted any read or write of the latest holder
// since its grant. The storage then orders it wholly before everything that
// holder's critical section does to the data — its first accepted read sees
// the write — so no update can be lost through it; this is what fencing a
// storage on reads as well as writes guarantees (docs/lab.md, "The verdicts";
// docs/explore.md, "With fenced reads").
// Any later write of the superseded holder is judged afresh.
class StaleWriteChecker {
 public:
  static constexpr EvSet kReads{Ev::Acquiring, Ev::Acquired, Ev::StorageWrite, Ev::StorageRead, Ev::StorageReject};
  StaleWriteChecker(const Trace& t, const CheckOptions&, const GrantTruth& truth) : trace_(&t), truth_(truth) {}
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    asking_since_.clear();
    grants_.clear();
    latest_ = kNoProc;
    highest_token_ = -1;
    out_.clear();
  }

  void observe(const TraceEvent& e) {
    if (is_client(*trace_, e.process) && e.kind == Ev::Acquiring) {
      slot(asking_since_, e.process, *trace_) = e.at;
      return;
    }
    if (e.kind == Ev::Acquired && is_client(*trace_, e.process)) {
      Grant& g = slot(grants_, e.process, *trace_);
      if (truth_.belief_only(e)) {
        g.belief = e.at;
        g.belief_held = truth_.held(e);
        g.belief_asked = e.process < asking_since_.size() && asking_since_[e.process] ? *asking_since_[e.process] : e.at;
        g.last_was_belief = true;
        return;
      }
      g.real = e.at;
      g.last_was_belief = false;
      g.touched = false;
      latest_ = e.process;
      return;
    }
    if (e.kind != Ev::StorageWrite && e.kind != Ev::StorageRead && e.kind != Ev::StorageReject) return;
    if (e.kind == Ev::StorageWrite) judge_write(e);
    if (e.kind == Ev::StorageReject) return;  // refused: it changed nothing and showed the storage nothing
    if (e.token > highest_token_) highest_token_ = e.token;
    if (e.peer < grants_.size()) grants_[e.peer].touched = true;
  }

  std::vector<Violation> finish(const CheckOptions&) { return std::move(out_); }

 private:
  void judge_write(const TraceEvent& e) {
    if (e.peer >= grants_.size() || (!grants_[e.peer].real && !grants_[e.peer].belief)) return;  // never acquired
    if (latest_ == kNoProc || latest_ == e.peer) return;
    const Grant& g = grants_[e.peer];
    const Instant theirs = *grants_[latest_].real;
    const Instant mine = g.last_was_belief || !g.real ? std::min(g.belief_asked, g.real.value_or(Instant::never())) : *g.real;
    if (!(mine < theirs)) return;  // granted at the same instant: not after it
    if (e.token >= 0 && e.token >= highest_token_ && !grants_[latest_].touched) return;  // ordered before theirs
    const bool token = e.token >= 0;
    Phrase detail;
    if (g.last_was_belief) {
      const bool too_few = g.belief_held != 0;
      detail = Phrase(too_few ? (token ? W::ViolationStaleBeliefTooFewToken : W::ViolationStaleBeliefTooFew)
                              : (token ? W::ViolationStaleBeliefToken : W::ViolationStaleBelief));
    } else {
      detail = Phrase(token ? W::ViolationStaleToken : W::ViolationStale);
    }
    detail.name("storage", trace_->name(e.process)).name("who", trace_->name(e.peer));
    if (token) detail.number("token", e.token);
    detail.instant("t", e.at).name("latest", trace_->name(latest_)).instant("granted", theirs);
    if (g.last_was_belief) {
      detail.name("believer", trace_->name(e.peer)).instant("acquired", *g.belief);
      if (g.belief_held != 0)
        detail.number("n", static_cast<std::int64_t>(g.belief_held)).number("quorum", static_cast<std::int64_t>(truth_.quorum()));
    } else {
      detail.name("writer", trace_->name(e.peer)).instant("own", mine);
    }
    out_.push_back({ViolationKind::StaleWrite, e.at, e.at, {e.peer, latest_}, std::move(detail)});
  }

  struct Grant {
    std::optional<Instant> real;    // its last grant the service held
    bool touched = false;           // the storage has accepted a read or write of its since that grant
    std::optional<Instant> belief;  // its last Acquired the service did not hold
    Instant belief_asked;           // when it began asking for that one
    std::size_t belief_held = 0;    // on how many nodes the service held its entries then
    bool last_was_belief = false;
  };
  const Trace* trace_;
  const GrantTruth& truth_;
  std::vector<std::optional<Instant>> asking_since_;
  std::vector<Grant> grants_;
  ProcId latest_ = kNoProc;  // the most recent real grant of all
  std::int64_t highest_token_ = -1;  // the highest token the storage has accepted, on a read or a write
  std::vector<Violation> out_;
};

}  // namespace locksim::checks
