// The judges (product.md, "Properties every run is judged by"). Every checker
// reads only the trace, in its recorded order (true time, ties in the order the
// simulator produced them), and looks at client events by the role each process
// has in Trace::processes(). The kinds and their checkers are the table
// judge/violation_kinds.inc; each checker is a file of judge/checks/.
#include "judge/checkers.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "judge/checks/common.hpp"
#include "judge/checks/foreign_release.hpp"
#include "judge/checks/lost_update.hpp"
#include "judge/checks/overlap.hpp"
#include "judge/checks/stale_write.hpp"
#include "judge/checks/stuck.hpp"

namespace locksim {

using namespace checks;

namespace {

struct KindRow {
  std::string_view name;
  char mark;
};
constexpr KindRow kKinds[] = {
#define LOCKSIM_VIOLATION(Id, name, Checker, mark) {name, mark},
#include "judge/violation_kinds.inc"
#undef LOCKSIM_VIOLATION
};
static_assert(std::size(kKinds) == std::size(kAllViolationKinds));

// Every checker of the table, in its order, as one tuple type.
using Checkers = decltype(std::tuple_cat(
#define LOCKSIM_VIOLATION(Id, name, Checker, mark) std::declval<std::tuple<Checker>>(),
#include "judge/violation_kinds.inc"
#undef LOCKSIM_VIOLATION
    std::tuple<>()));

// Every kind some checker reads.
template <std::size_t... I>
constexpr EvSet reads_of(std::index_sequence<I...>) {
  return (EvSet{} | ... | std::tuple_element_t<I, Checkers>::kReads);
}
constexpr EvSet kCheckersRead = reads_of(std::make_index_sequence<std::tuple_size_v<Checkers>>());

}  // namespace

std::string_view violation_name(ViolationKind k) { return kKinds[static_cast<std::size_t>(k)].name; }

char violation_mark(ViolationKind k) { return kKinds[static_cast<std::size_t>(k)].mark; }

std::optional<ViolationKind> parse_violation(std::string_view name) {
  for (ViolationKind k : kAllViolationKinds)
    if (violation_name(k) == name) return k;
  return std::nullopt;
}

namespace {

// One checker alone; the service's events go to the grant truth first.
template <typename Checker>
std::vector<Violation> run_one(const Trace& trace, const CheckOptions& o) {
  GrantTruth truth(trace);
  Checker c(trace, o, truth);
  for (const TraceEvent& e : trace.events()) {
    truth.observe(e);
    c.observe(e);
  }
  return c.finish(o);
}

// Each checker of the table made with the same arguments.
template <typename Tuple, std::size_t... I>
Tuple make_checkers(const Trace& t, const CheckOptions& o, const GrantTruth& truth, std::index_sequence<I...>) {
  return Tuple(std::tuple_element_t<I, Tuple>(t, o, truth)...);
}

}  // namespace

std::vector<Belief> beliefs_not_grants(const Trace& trace) {
  GrantTruth truth(trace);
  std::vector<Belief> out;
  for (const TraceEvent& e : trace.events()) {
    truth.observe(e);
    if (e.kind == Ev::Acquired && is_client(trace, e.process) && truth.belief_only(e))
      out.push_back({e.seq, e.process, e.at, truth.held(e)});
  }
  return out;
}

struct Judge::Impl {
  Impl(const Trace& t, const CheckOptions& o)
      : truth(t), checkers(make_checkers<Checkers>(t, o, truth, std::make_index_sequence<std::tuple_size_v<Checkers>>())),
        harm(t) {}
  GrantTruth truth;  // first: the checkers refer to it
  Checkers checkers;
  HarmMeter harm;    // not a checker: the measure beside the verdict
};

Judge::Judge(const Trace& trace, const CheckOptions& o) : impl_(std::make_unique<Impl>(trace, o)) {}

void Judge::restart(const Trace& trace, const CheckOptions& o) {
  Impl& j = *impl_;
  j.truth.restart(trace);
  std::apply([&](auto&... c) { (c.restart(trace, o), ...); }, j.checkers);
  j.harm.restart(trace);
}
Judge::~Judge() = default;

void Judge::observe(const TraceEvent& e) {
  // Each checker sees the kinds it reads (its kReads), the truth first: the
  // network's chatter and the failed tries concern none of them.
  static_assert(Judge::kReads == (GrantTruth::kReads | kCheckersRead | HarmMeter::kReads),
                "Judge::kReads is every kind some checker (or the harm meter) reads");
  static_assert((Judge::kOwnedOnly & kCheckersRead) == EvSet{} && (Judge::kOwnedOnly & GrantTruth::kReads) == Judge::kOwnedOnly,
                "the owned-only kinds are the service holdings' commands: no other checker reads them");
  Impl& j = *impl_;
  if (GrantTruth::kReads.has(e.kind)) j.truth.observe(e);
  std::apply([&](auto&... c) { ((std::remove_reference_t<decltype(c)>::kReads.has(e.kind) ? c.observe(e) : void()), ...); },
             j.checkers);
  if (HarmMeter::kReads.has(e.kind)) j.harm.observe(e);
}

Harm Judge::harm() const { return impl_->harm.finish(); }

std::vector<Violation> Judge::finish(Instant run_end) {
  CheckOptions o;
  o.run_end = run_end;
  std::vector<Violation> all;
  std::apply(
      [&](auto&... c) {
        auto add = [&](std::vector<Violation> found) {
          all.insert(all.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
        };
        (add(c.finish(o)), ...);
      },
      impl_->checkers);
  std::stable_sort(all.begin(), all.end(), [](const Violation& a, const Violation& b) {
    return a.at != b.at ? a.at < b.at : a.kind < b.kind;
  });
  return all;
}

std::vector<Violation> check_overlap(const Trace& t, const CheckOptions& o) {
  return run_one<OverlapChecker>(t, o);
}
std::vector<Violation> check_stale_write(const Trace& t, const CheckOptions& o) {
  return run_one<StaleWriteChecker>(t, o);
}
std::vector<Violation> check_lost_update(const Trace& t, const CheckOptions& o) {
  return run_one<LostUpdateChecker>(t, o);
}
std::vector<Violation> check_foreign_release(const Trace& t, const CheckOptions& o) {
  return run_one<ForeignReleaseChecker>(t, o);
}
std::vector<Violation> check_stuck(const Trace& t, const CheckOptions& o) { return run_one<StuckChecker>(t, o); }

std::vector<Violation> check_trace(const Trace& trace, const CheckOptions& o) {
  Judge judge(trace, o);
  for (const TraceEvent& e : trace.events()) judge.observe(e);
  return judge.finish(o.run_end);
}

}  // namespace locksim
