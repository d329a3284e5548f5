// The bounded exhaustive search: running the schedules (this file) and
// reporting them (reports/exhaustive_output.cpp).
#include "harness/explore_exhaustive.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>

#include "harness/explore_reference.hpp"
#include "harness/faults/kind.hpp"

namespace locksim {

bool before(const std::vector<Placement>& a, const std::vector<Placement>& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

std::uint64_t ExhaustiveSummary::total() const {
  std::uint64_t n = 0;
  for (std::uint64_t s : schedules) n += s;
  return n;
}

std::vector<Duration> exhaustive_lengths(const Scenario& base, const ExploreOptions& o) {
  const Reference ref = reference_run(base, o);
  const Duration little = Duration::ms(1);
  std::vector<Duration> out;
  for (const NamedDuration& c : ref.constants) {
    out.push_back(c.value + little);
    // Just short of the lease, or of what a grant said it was worth.
    if ((c.measure == Measure::Lease || c.measure == Measure::Validity) && c.value > little) out.push_back(c.value - little);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

NextFaults next_faults(Placement last, std::size_t anchors, std::size_t window) {
  NextFaults out;
  out.first_choice = last.choice + 1;  // each pair on one anchor once
  for (std::size_t q = last.anchor + 1; q < anchors; ++q) {
    if (window > 0 && q > last.anchor + window) break;
    out.anchors.push_back(static_cast<std::uint32_t>(q));
  }
  return out;
}

bool claim_state(Visited& visited, std::uint64_t fingerprint, int budget) {
  auto [it, fresh] = visited.try_emplace(fingerprint, budget);
  if (fresh) return true;
  if (it->second >= budget) return false;  // explored with as many faults left, or more
  it->second = budget;
  return true;
}

namespace {

// An anchor of one run, as a fault names it, and the state there.
struct Seen {
  ProcId process = kNoProc;
  Ev event = Ev::Started;
  int occurrence = 1;
  std::uint64_t fingerprint = 0;  // 0: not taken
};

struct Outcome {
  std::set<ViolationKind> verdict;
  bool budget_exhausted = false;
  std::vector<Seen> anchors;
  std::vector<std::string> names;  // the processes', by id
};


// A schedule: faults placed on anchors, in the order they were placed.
struct Node {
  std::vector<Placement> path;
  std::vector<FaultSpec> faults;
};

// What one shard's share of the search found, merged in a fixed order.
struct Tally {
  std::vector<std::uint64_t> schedules;
  std::uint64_t states = 0, skipped = 0, budget_exhausted = 0, violating = 0;
  std::map<ViolationKind, std::uint64_t> by_kind;
  std::map<ViolationKind, ExhaustiveFinding> first;

  void count(const Node& n, const Outcome& r) {
    if (schedules.size() < n.path.size()) schedules.resize(n.path.size(), 0);
    ++schedules[n.path.size() - 1];
    budget_exhausted += r.budget_exhausted;
    violating += !r.verdict.empty();
    for (ViolationKind k : r.verdict) {
      ++by_kind[k];
      auto it = first.find(k);
      if (it == first.end() || before(n.path, it->second.path)) first[k] = {n.path, n.faults, {}};
    }
  }
  std::uint64_t runs() const {
    std::uint64_t n = 0;
    for (std::uint64_t s : schedules) n += s;
    return n;
  }
  void add(const Tally& t) {
    if (schedules.size() < t.schedules.size()) schedules.resize(t.schedules.size(), 0);
    for (std::size_t i = 0; i < t.schedules.size(); ++i) schedules[i] += t.schedules[i];
    states += t.states;
    skipped += t.skipped;
    budget_exhausted += t.budget_exhausted;
    violating += t.violating;
    for (const auto& [k, n] : t.by_kind) by_kind[k] += n;
    for (const auto& [k, f] : t.first)
      if (!first.count(k) || before(f.path, first.at(k).path)) first[k] = f;
  }
};

class Search {
 public:
  Search(const Scenario& base, const ExploreOptions& o, const ExhaustiveOptions& x)
      : o_(o), x_(x), start_(unfaulted(base, o)), window_(liveness_window_of(base, o)) {
    FaultChoices c;
    for (const ClientConfig& cl : base.clients) c.clients.push_back(cl.name);
    for (const NodeConfig& n : base.nodes) {
      c.nodes.push_back(n.name);
      if (!n.replica_of.empty() &&
          std::find(c.masters_with_replicas.begin(), c.masters_with_replicas.end(), n.replica_of) == c.masters_with_replicas.end())
        c.masters_with_replicas.push_back(n.replica_of);
    }
    c.storage = base.storage.name;
    c.everyone = c.clients;
    c.everyone.insert(c.everyone.end(), c.nodes.begin(), c.nodes.end());
    c.everyone.push_back(c.storage);
    c.lengths = x.lengths;
    c.max_drift_ppm = o.max_drift_ppm;
    for (FaultKind k : x.kinds) {
      const FaultKindInfo& info = fault_kind(k);
      if (info.choices && (!info.offered || info.offered(base))) info.choices(c, choices_);
    }
  }

  std::size_t choices() const { return choices_.size(); }

  // The fault-free run, fingerprinted at every anchor; it names the processes.
  Outcome root() {
    Outcome r = run({}, 0);
    names_ = std::move(r.names);
    return r;
  }

  // Runs `n`, taking fingerprints at the anchors from position `from` on (none: nullopt).
  Outcome run(const Node& n, std::optional<std::size_t> from) const {
    Scenario s = start_;
    s.faults.insert(s.faults.end(), n.faults.begin(), n.faults.end());
    Outcome out;
    std::map<std::pair<ProcId, Ev>, int> seen;
    RunOptions ro;
    ro.max_events = o_.max_events;
    ro.keep_events = 0;
    if (o_.liveness) ro.liveness = window_;
    ro.at_anchor = [&](const Trace& t, const TraceEvent& e, const std::function<std::uint64_t()>& fingerprint) {
      Seen a{e.process, e.kind, ++seen[{e.process, e.kind}], 0};
      if (from && out.anchors.size() >= *from) a.fingerprint = fingerprint();
      out.anchors.push_back(a);
      if (out.names.size() < t.processes().size()) {
        out.names.clear();
        for (const ProcessInfo& p : t.processes()) out.names.push_back(p.name);
      }
    };
    const RunResult r = run_scenario(std::move(s), ro);
    out.verdict = r.verdict;
    if (r.liveness && r.liveness->stuck) out.verdict.insert(ViolationKind::Stuck);
    out.budget_exhausted = r.budget_exhausted;
    return out;
  }

  // `parent` with choice `c` on anchor `a` (at position `at` of the parent's run).
  Node child(const Node& parent, const Seen& a, std::uint32_t at, std::uint32_t c) const {
    Node n = parent;
    n.path.push_back({at, c});
    for (FaultSpec f : choices_[c]) {
      f.on_process = names_[a.process];
      f.on_event = std::string(event_name(a.event));
      f.on_occurrence = a.occurrence;
      n.faults.push_back(std::move(f));
    }
    return n;
  }


  // Below node `n` (its run `r`): every schedule with up to `left` more
  // faults, depth first. `visited` holds the states explored and how many
  // faults could still be placed there; `claimed`, when given, are the
  // anchors of `r` already claimed for this subtree.
  void below(const Node& n, const Outcome& r, int left, Visited& visited, Tally& t,
             const std::vector<std::uint32_t>* claimed = nullptr) const {
    if (left <= 0) return;
    const Placement last = n.path.back();
    const Seen& here = r.anchors[last.anchor];
    const NextFaults next = next_faults(last, r.anchors.size(), x_.window);
    for (std::uint32_t c = next.first_choice; c < choices_.size(); ++c)
      visit(child(n, here, last.anchor, c), last.anchor, left, visited, t);
    std::vector<std::uint32_t> mine;
    if (!claimed) {
      for (std::uint32_t q : next.anchors)
        if (claim(r.anchors[q].fingerprint, left, visited, t)) mine.push_back(q);
      claimed = &mine;
    }
    for (std::uint32_t q : *claimed)
      for (std::uint32_t c = 0; c < choices_.size(); ++c) visit(child(n, r.anchors[q], q, c), q, left, visited, t);
  }

  // Whether the state is new at this budget (then it is explored here).
  bool claim(std::uint64_t fp, int budget, Visited& visited, Tally& t) const {
    if (x_.prune && !claim_state(visited, fp, budget)) {
      ++t.skipped;
      return false;
    }
    ++t.states;
    return true;
  }

 private:
  // Runs `n` (its last fault on anchor `at`; `left` faults could be placed
  // from its parent's state) and goes on below it.
  void visit(const Node& n, std::uint32_t at, int left, Visited& visited, Tally& t) const {
    const bool deeper = left > 1;
    const Outcome r = run(n, deeper ? std::optional<std::size_t>(at + 1) : std::nullopt);
    t.count(n, r);
    if (deeper) below(n, r, left - 1, visited, t);
  }

  const ExploreOptions& o_;
  const ExhaustiveOptions& x_;
  Scenario start_;
  Duration window_;
  std::vector<FaultChoice> choices_;
  std::vector<std::string> names_;  // the processes', by id (the same in every run)
};

// Runs f(i) for i in [0, n) on `jobs` threads.
template <typename F>
void in_parallel(std::size_t n, int jobs, F f) {
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) f(i);
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::max(1, jobs); ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& th : threads) th.join();
}

}  // namespace

ExhaustiveSummary explore_exhaustive(const Scenario& base, const ExploreOptions& o, const ExhaustiveOptions& given,
                                     const Progress& progress) {
  ExhaustiveOptions x = given;
  if (x.kinds.empty()) x.kinds = {FaultKind::Pause, FaultKind::Crash};
  if (x.lengths.empty()) x.lengths = exhaustive_lengths(base, o);
  Search search(base, o, x);
  const std::size_t C = search.choices();
  const bool mine0 = o.shard_index == 0;

  // The fault-free run: the first fault's anchors, and the states explored with every fault left.
  const Outcome root = search.root();
  Visited visited;
  Tally total;
  for (const Seen& a : root.anchors)
    if (!x.prune || visited.emplace(a.fingerprint, x.depth).second) total.states += mine0;
  ExhaustiveSummary s;
  s.anchors = root.anchors.size();
  s.choices = C;
  s.lengths = x.lengths;
  s.kinds = x.kinds;

  // Level 1: one fault. Every shard runs them all when there is a level 2:
  // their states decide, the same in every shard, which subtree explores each.
  const std::size_t level1 = root.anchors.size() * C;
  auto mine = [&](std::size_t j) { return j % o.shard_count == o.shard_index; };
  std::vector<Node> nodes(level1);
  std::vector<Outcome> outcomes(level1);
  std::atomic<std::uint64_t> done{0}, violating{0}, known{level1};
  std::mutex progress_mutex;
  auto tick = [&](const Outcome& r) {
    ++done;
    violating += !r.verdict.empty();
    if (!progress) return;
    std::lock_guard lock(progress_mutex);
    progress(done, known, violating);
  };
  in_parallel(level1, o.jobs, [&](std::size_t j) {
    const auto at = static_cast<std::uint32_t>(j / C);
    nodes[j] = search.child({}, root.anchors[at], at, static_cast<std::uint32_t>(j % C));
    if (x.depth < 2 && !mine(j)) return;
    outcomes[j] = search.run(nodes[j], x.depth >= 2 ? std::optional<std::size_t>(at + 1) : std::nullopt);
    tick(outcomes[j]);
  });
  std::vector<Tally> tallies(level1);
  for (std::size_t j = 0; j < level1; ++j)
    if (mine(j)) tallies[j].count(nodes[j], outcomes[j]);

  if (x.depth >= 2) {
    // Which subtree explores each state a level-1 run reaches: the first to
    // reach it, in the search's order. Below that, each subtree on its own.
    std::vector<std::vector<std::uint32_t>> claimed(level1);
    Tally elsewhere;  // another shard's claims
    for (std::size_t j = 0; j < level1; ++j)
      for (std::uint32_t q : next_faults(nodes[j].path.back(), outcomes[j].anchors.size(), x.window).anchors)
        if (search.claim(outcomes[j].anchors[q].fingerprint, x.depth - 1, visited, mine(j) ? tallies[j] : elsewhere))
          claimed[j].push_back(q);
    for (std::size_t j = 0; j < level1; ++j)
      if (mine(j)) known += (claimed[j].size() + 1) * C;  // about: the pairs on one anchor are fewer
    in_parallel(level1, o.jobs, [&](std::size_t j) {
      if (!mine(j)) return;
      Visited local;
      if (x.depth >= 3) local = visited;  // only level 3 and below claim states of their own
      Tally below;
      search.below(nodes[j], outcomes[j], x.depth - 1, local, below, &claimed[j]);
      tallies[j].add(below);
      done += below.runs();
      violating += below.violating;
      if (!progress) return;
      std::lock_guard lock(progress_mutex);
      progress(done, known, violating);
    });
  }
  for (const Tally& t : tallies) total.add(t);
  s.schedules = total.schedules;
  s.states = total.states;
  s.skipped = total.skipped;
  s.budget_exhausted = total.budget_exhausted;
  s.by_kind = total.by_kind;
  s.first = total.first;
  return s;
}

bool exhaustive_as_expected(const Scenario& base, const ExhaustiveSummary& s) {
  std::set<ViolationKind> found;
  for (const auto& [k, n] : s.by_kind)
    if (n) found.insert(k);
  if (!base.expect.present) return found.empty();
  return std::includes(base.expect.violations.begin(), base.expect.violations.end(), found.begin(), found.end());
}

}  // namespace locksim
