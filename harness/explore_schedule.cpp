// Drawing one run's fault schedule from its seed: which kinds this run
// enables (the swarm), how many faults, when — at a time, or on an event of
// the reference run ("just after client1's read") — and each fault's own
// draws (harness/faults/), whose lengths are measured against the scenario.
#include "harness/explore_schedule.hpp"

#include <algorithm>
#include <span>

#include "harness/explore_reference.hpp"
#include "harness/faults/kind.hpp"
#include "sim/rng.hpp"

namespace locksim {

namespace {

// When a fault starts: on an anchor before the horizon (half the time, when
// there is one), just after it or a little later; else at a time. Returns
// when that was in the reference run, and sets `anchor` (null: a time).
Duration draw_start(Rng& rng, std::span<const Anchor> anchors, Duration lease, const ScheduleBounds& b, FaultSpec& f,
                    FaultDraw& d, const Anchor*& anchor) {
  const auto end = std::lower_bound(anchors.begin(), anchors.end(), b.horizon,
                                    [](const Anchor& a, Duration t) { return a.at < t; });
  const auto n = static_cast<std::uint64_t>(end - anchors.begin());
  if (n > 0 && rng.chance(0.5)) {
    const Anchor& a = anchors[rng.below(n)];
    anchor = &a;
    f.on_process = a.process;
    f.on_event.assign(event_name(a.event));
    f.on_occurrence = a.occurrence;
    // "Just after the read", or a little later: up to a tenth of the lease, at most a second.
    if (rng.chance(0.5)) f.after = rng.between(Duration::ms(1), max(Duration::ms(1), min(lease / 10, Duration::s(1))));
    d.anchor_process = a.process;
    return a.at + f.after;
  }
  f.at = rng.between(Duration::zero(), b.horizon);
  anchor = nullptr;
  d.anchor_process.clear();
  return *f.at;
}

// Jepsen's nemeses strike one node, a minority, a majority or all of them at
// once (a rack, a zone, a bad deploy). `drawn` (a fault and the restart that
// goes with it) is struck on that many nodes, alike, at the same moment:
// appended to `out` for each node, in the order the nodes are chosen.
// Returns how many nodes (0: the kind names no node, `drawn` is appended as
// is). `pool` is scratch (node indices).
std::size_t strike_together(Rng& rng, const std::vector<std::string>& nodes, std::vector<FaultSpec>& drawn,
                            std::vector<std::size_t>& pool, std::vector<FaultSpec>& out) {
  if (drawn.empty() || drawn.front().target.empty() || drawn.front().kind == FaultKind::Failover) {
    out.insert(out.end(), std::make_move_iterator(drawn.begin()), std::make_move_iterator(drawn.end()));
    return 0;
  }
  const std::size_t n = nodes.size(), majority = n / 2 + 1;
  const std::uint64_t r = rng.below(4);
  const std::size_t how_many = r < 2 ? majority : r == 2 ? n : std::max<std::size_t>(1, n - majority);
  pool.clear();
  for (std::size_t i = 0; i < n; ++i) pool.push_back(i);
  for (std::size_t i = 0; i < how_many; ++i) {
    const std::size_t j = rng.below(pool.size());
    const std::string& node = nodes[pool[j]];
    pool.erase(pool.begin() + static_cast<long>(j));
    for (const FaultSpec& f : drawn) out.emplace_back(f).target = node;
  }
  return how_many;
}

}  // namespace

Scenario with_random_faults(const Scenario& base, std::uint64_t seed, const ExploreOptions& o) {
  return with_random_faults(base, seed, o, reference_run(base, o));
}

Scenario with_random_faults(const Scenario& base, std::uint64_t seed, const ExploreOptions& o, const Reference& ref,
                            DrawNotes* notes) {
  Scenario s = unfaulted(base, o);
  s.seed = seed;
  ScheduleDrawer(base, o, ref).draw(seed, s.faults, notes);
  return s;
}

ScheduleDrawer::ScheduleDrawer(const Scenario& base, const ExploreOptions& o, const Reference& ref)
    : base_(base),
      o_(o),
      ref_(ref),
      bounds_(schedule_bounds(base, o)),
      rng_(0),
      d_{.rng = rng_, .base = base, .max_pause = bounds_.pause, .max_jump = bounds_.jump,
         .max_outage = bounds_.outage, .max_drift_ppm = o.max_drift_ppm} {
  for (const ClientConfig& c : base.clients) d_.clients.push_back(c.name);
  for (const NodeConfig& n : base.nodes) {
    d_.nodes.push_back(n.name);
    if (!n.replica_of.empty()) d_.masters_with_replicas.push_back(n.replica_of);
  }
  d_.everyone = d_.clients;
  d_.everyone.insert(d_.everyone.end(), d_.nodes.begin(), d_.nodes.end());
  d_.everyone.push_back(base.storage.name);
  d_.servers = d_.nodes;
  d_.servers.push_back(base.storage.name);
  allowed_ = o.kinds.empty() ? drawn_kinds(base) : o.kinds;
  std::erase_if(allowed_, [&](FaultKind k) { return fault_kind(k).offered && !fault_kind(k).offered(base); });
}

void ScheduleDrawer::draw(std::uint64_t seed, std::vector<FaultSpec>& faults, DrawNotes* notes) {
  rng_ = Rng(seed).fork("explore/schedule");
  Rng& rng = rng_;
  const ScheduleBounds& b = bounds_;
  FaultDraw& d = d_;
  d.constants = &ref_.constants;
  d.later.clear();  // a run that measures nothing by the reference's events has none
  notes_.clear();
  if (o_.max_faults == 0) {  // --max-faults 0 --keep-faults: the scenario's own schedule, only the seed varies
    if (notes) this->notes(*notes);
    return;
  }

  // Swarm: each kind on offer is enabled with probability 1/2 (at least one).
  enabled_.clear();
  for (FaultKind k : allowed_)
    if (rng.chance(0.5)) enabled_.push_back(k);
  if (enabled_.empty() && !allowed_.empty()) enabled_.push_back(pick(rng, allowed_));
  if (enabled_.empty()) {
    if (notes) this->notes(*notes);
    return;
  }

  // Swarm over the strategies too: a run waits for events, measures its
  // lengths against the scenario, both or neither (the plain random schedule).
  const bool anchors = rng.chance(0.5), measured = rng.chance(0.5);
  if (!measured) d.constants = nullptr;
  // And a quarter of the runs strike several nodes at once with their first fault.
  const bool together = d.nodes.size() >= 2 && rng.chance(0.25);
  const Duration longest = max(b.pause, max(b.jump, b.outage));
  const int count = static_cast<int>(rng.between(std::int64_t{1}, std::int64_t{o_.max_faults}));
  for (int i = 0; i < count; ++i) {
    // Drawn in its place among the run's faults: its kind and time here, the
    // rest by the kind. A strike on several nodes replaces it there.
    const std::size_t first = faults.size();
    FaultSpec& f = faults.emplace_back();
    f.kind = pick(rng, enabled_);
    Note& note = notes_.emplace_back(Note{nullptr, 0, {}});
    const Duration start =
        draw_start(rng, anchors ? ref_.anchors : std::span<const Anchor>{}, ref_.lease, b, f, d, note.anchor);
    if (measured) events_after(ref_, start, longest, d.later);
    d.length_source = {};
    // A kind explore does not draw on its own (named in o.kinds all the same) draws nothing.
    if (const auto draw = fault_kind(f.kind).draw) draw(d, faults);
    else faults.pop_back();
    if (i == 0 && together) {
      drawn_.assign(std::make_move_iterator(faults.begin() + static_cast<std::ptrdiff_t>(first)),
                    std::make_move_iterator(faults.end()));
      faults.resize(first);
      note.struck = strike_together(rng, d.nodes, drawn_, pool_, faults);
    }
    note.length = d.length_source;
  }
  // The fault engine schedules by time; keep the file readable in the same order.
  sort_faults(faults, sort_scratch_);
  if (notes) this->notes(*notes);
}

void ScheduleDrawer::notes(DrawNotes& out) const {
  out.anchors.clear();
  out.lengths.clear();
  for (const Note& n : notes_) {
    FoundLabel anchor;
    if (n.anchor) {
      anchor.kind = FoundLabel::Kind::Event;
      anchor.process = n.anchor->process;
      anchor.event = n.anchor->event;
    }
    anchor.struck = n.struck > 1 ? n.struck : 0;
    out.anchors.push_back(std::move(anchor));
    const FaultDraw::LengthSource& l = n.length;
    if (l.random) {
      out.lengths.push_back({.kind = FoundLabel::Kind::Random});
    } else if (l.constant) {
      out.lengths.push_back({.kind = FoundLabel::Kind::Constant, .process = l.constant->of, .measure = l.constant->measure});
    } else if (l.process) {
      out.lengths.push_back({.kind = FoundLabel::Kind::Until, .process = *l.process, .event = l.event});
    }
  }
}

}  // namespace locksim
