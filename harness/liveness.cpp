#include "harness/liveness.hpp"

#include "sim/word_ids.hpp"

namespace locksim {

namespace {
void set(std::vector<std::uint8_t>& v, std::size_t& count, ProcId p, bool on) {
  if (v.size() <= p) v.resize(p + 1, 0);
  if (v[p] == on) return;
  v[p] = on;
  if (on) ++count;
  else --count;
}
}  // namespace

void LivenessWatch::observe(const TraceEvent& e) {
  if (!kReads.has(e.kind)) return;
  if (e.process == kNoProc || trace_.processes()[e.process].role != ProcessRole::Client) return;
  // As the stuck checker counts them (judge/checkers.cpp, StuckChecker).
  switch (e.kind) {
    case Ev::Acquiring: set(waiting_, waiters_, e.process, true); break;
    case Ev::Acquired:
      set(waiting_, waiters_, e.process, false);
      set(holding_, holders_, e.process, true);
      if (healed_at_ && !reacquired_) reacquired_ = e.at;
      break;
    case Ev::AcquireFailed: set(waiting_, waiters_, e.process, false); break;
    case Ev::Releasing:
    case Ev::Lost: set(holding_, holders_, e.process, false); break;
    case Ev::Crashed:
      set(waiting_, waiters_, e.process, false);
      set(holding_, holders_, e.process, false);
      break;
    default: return;
  }
  update(e.at);
}

void LivenessWatch::update(Instant at) {
  if (!healed_at_) return;
  const bool stuck_now = waiters_ > 0 && holders_ == 0;
  if (stuck_now && !stretch_start_) stretch_start_ = at;
  if (!stuck_now && stretch_start_) {
    longest_ = max(longest_, at - *stretch_start_);
    stretch_start_.reset();
  }
}

void LivenessWatch::healed(Instant at, Duration window) {
  healed_at_ = at;
  window_ = window;
  update(at);
}

LivenessVerdict LivenessWatch::finish(Instant run_end) {
  LivenessVerdict v;
  v.healed_at = healed_at_.value_or(run_end);
  v.window = window_;
  if (stretch_start_) longest_ = max(longest_, run_end - *stretch_start_);
  v.longest_wait = longest_;
  v.reacquired = reacquired_;
  v.stuck = longest_ > window_;
  if (v.stuck)
    v.detail = Phrase(W::LivenessStuck).instant("t", v.healed_at).duration("d", longest_).duration("window", window_);
  else if (reacquired_)
    v.detail = Phrase(W::LivenessAgain).instant("t", *reacquired_).duration("d", *reacquired_ - v.healed_at);
  else
    v.detail = Phrase(W::LivenessNobody);
  return v;
}

std::string probe_name(const Trace& trace) {
  std::string name = "probe";
  for (int n = 2; trace.find(name); ++n) name = "probe" + std::to_string(n);
  return name;
}

}  // namespace locksim
