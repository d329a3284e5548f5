// Overlap: two clients in their critical sections at once.
// One kind's checker (judge/violation_kinds.inc): it reads the trace's
// events as they are recorded (observe), only the kinds of its kReads, and
// tells what it found when the run ends (finish). Every checker is made with
// the same arguments and restarted as if made anew, so that the judge holds
// them all alike.
#pragma once

#include <set>
#include <optional>
#include <vector>

#include "judge/checks/common.hpp"
#include "sim/word_ids.hpp"

namespace locksim::checks {

// Overlap. Each client's critical sections run from Acquired to its first
// later Releasing, Lost or Crashed, or to the end of the run. A second
// Acquired while one is open (a re-entrant acquire) does not start a new one.
// A section that starts while another client's is open overlaps it; the
// overlap ends when the first of the two closes.
class OverlapChecker {
 public:
  static constexpr EvSet kReads{Ev::Acquired, Ev::Releasing, Ev::Lost, Ev::Crashed};
  OverlapChecker(const Trace& t, const CheckOptions&, const GrantTruth& truth) : trace_(&t), truth_(truth) {}
  // As constructed anew on `t` (capacity kept; the truth restarted by its owner).
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    open_.clear();
    sections_.clear();
    pairs_.clear();
    out_.clear();
    dropped_.clear();
    next_id_ = 0;
  }

  void observe(const TraceEvent& e) {
    if (!is_client(*trace_, e.process)) return;
    auto& mine = slot(open_, e.process, *trace_);
    if (e.kind == Ev::Acquired) {
      if (mine) return;
      const bool belief = truth_.belief_only(e);
      const std::size_t held = truth_.held(e);
      for (const Section& a : sections_) {
        pairs_.push_back({a.id, next_id_, a.start, e.at, out_.size(), a.belief, belief, a.held, held});
        out_.push_back({ViolationKind::Overlap, e.at, e.at, {a.client, e.process}, {}});
      }
      sections_.push_back({next_id_, e.process, e.at, belief, held});
      mine = next_id_++;
    } else if (e.kind == Ev::Releasing || e.kind == Ev::Lost || e.kind == Ev::Crashed) {
      if (!mine) return;
      close(*mine, e.at);
      mine.reset();
    }
  }

  std::vector<Violation> finish(const CheckOptions& o) {
    while (!sections_.empty()) close(sections_.front().id, o.run_end);
    std::vector<Violation> kept;
    for (std::size_t i = 0; i < out_.size(); ++i)
      if (!dropped_.count(i)) kept.push_back(std::move(out_[i]));
    return kept;
  }

 private:
  struct Section {
    std::uint64_t id;
    ProcId client;
    Instant start;
    bool belief;  // the service held too little of its entries when it began (GrantTruth)
    std::size_t held;  // on how many nodes
  };
  struct Pair {
    std::uint64_t earlier, later;  // section ids
    Instant earlier_start, later_start;
    std::size_t violation;
    bool earlier_belief, later_belief;
    std::size_t earlier_held, later_held;
  };

  // "client1 and client2 both held the lock", or, when one only believed it
  // did, says so (and on how few nodes the service held its entries).
  Phrase who_held(const Violation& v, const Pair& p, Instant end) const {
    const std::string a = trace_->name(v.processes[0]), b = trace_->name(v.processes[1]);
    Phrase said;
    if (p.earlier_belief == p.later_belief) {
      said = Phrase(!p.earlier_belief                          ? W::ViolationBothHeld
                    : p.earlier_held + p.later_held == 0 ? W::ViolationBothBelieved
                                                         : W::ViolationBothBelievedTooFew);
      said.name("a", a).name("b", b);
    } else {
      const std::size_t held = p.earlier_belief ? p.earlier_held : p.later_held;
      const std::string& believed = p.earlier_belief ? a : b;
      said = Phrase(held == 0 ? W::ViolationHeldAndBelieved : W::ViolationHeldAndBelievedTooFew);
      said.name("held", p.earlier_belief ? b : a).name("believed", believed).name("none", believed);
      if (held != 0) said.number("n", static_cast<std::int64_t>(held)).number("quorum", static_cast<std::int64_t>(truth_.quorum()));
    }
    said.instant("from", v.at).instant("to", end);
    return said;
  }

  void close(std::uint64_t id, Instant end) {
    std::erase_if(sections_, [&](const Section& s) { return s.id == id; });
    std::erase_if(pairs_, [&](const Pair& p) {
      if (p.earlier != id && p.later != id) return false;
      // A section that ends the instant the other begins does not overlap it.
      if (p.earlier == id && end <= p.later_start) {
        dropped_.insert(p.violation);
        return true;
      }
      Violation& v = out_[p.violation];
      v.until = end;
      v.detail = who_held(v, p, end);
      return true;
    });
  }

  const Trace* trace_;
  const GrantTruth& truth_;
  std::vector<std::optional<std::uint64_t>> open_;  // each client's open section
  std::vector<Section> sections_;                   // open, in order of start
  std::vector<Pair> pairs_;                         // overlaps whose end is not known yet
  std::vector<Violation> out_;
  std::set<std::size_t> dropped_;
  std::uint64_t next_id_ = 0;
};

}  // namespace locksim::checks
