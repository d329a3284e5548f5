// The explorer's runner: the runs of an exploration (or of a shard of it) on
// worker threads, each folding its runs' outcomes into a summary of its own;
// and --matrix, the same runs for each variant. Drawing a run's schedule is
// explore_schedule.cpp; the summary's text, JSON and merging are
// explore_output.cpp.
#include "harness/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "harness/explore_reference.hpp"
#include "harness/explore_schedule.hpp"
#include "lockalgos/registry.hpp"
#include "sim/rng.hpp"

namespace locksim {

std::uint64_t run_seed(std::uint64_t base_seed, std::uint64_t index) {
  std::uint64_t s = base_seed ^ (index * 0x9e3779b97f4a7c15ULL);
  return splitmix64(s) >> 1;  // fits a TOML integer
}

namespace {

using Bounds = ScheduleBounds;

Bounds bounds_of(const Scenario& s, const ExploreOptions& o) {
  // What breaks a lock is measured against its lease: draw magnitudes up to
  // twice it, or a lease past the handover where the service keeps the lock
  // longer than the lease (Consul's late invalidation, a lock-delay).
  const Duration lease = s.lock.options->lease();
  const Duration most = max(lease * 2, s.lock.options->handover() + lease);
  return {o.max_pause.value_or(most), o.max_jump.value_or(most), o.max_outage.value_or(most), s.duration * 4 / 5};
}

}  // namespace

ScheduleBounds schedule_bounds(const Scenario& s, const ExploreOptions& o) { return bounds_of(s, o); }

void ExploreSummary::add_notes(const RunOutcome& r) {
  for (ViolationKind k : r.verdict) {
    // Once per run and label, however many of its faults share it.
    for (const FoundLabel& a : std::set<FoundLabel>(r.notes.anchors.begin(), r.notes.anchors.end())) ++anchors[k][a];
    for (const FoundLabel& l : std::set<FoundLabel>(r.notes.lengths.begin(), r.notes.lengths.end())) ++lengths[k][l];
  }
}

void ExploreSummary::add_notes(const ExploreSummary& other) {
  for (const auto& [k, m] : other.anchors)
    for (const auto& [label, n] : m) anchors[k][label] += n;
  for (const auto& [k, m] : other.lengths)
    for (const auto& [label, n] : m) lengths[k][label] += n;
}

void ExploreSummary::add(const RunOutcome& r) {
  add_notes(r);
  ++runs;
  if (!r.internal_error.empty()) {
    ++internal_errors;
    if (!first_internal_error || r.index < first_internal_error->index) first_internal_error = r;
    return;
  }
  if (r.stuck_after_heal) {
    ++stuck_after_heal;
    if (!first_stuck_after_heal || r.index < first_stuck_after_heal->index) first_stuck_after_heal = r;
  }
  budget_exhausted += r.budget_exhausted;
  harm.add(r.harm);
  violating += !r.verdict.empty();
  for (ViolationKind k : r.verdict) {
    ++by_kind[k];
    auto it = first.find(k);
    if (it == first.end() || r.index < it->second.index) first[k] = r;
  }
}

void ExploreSummary::merge(const ExploreSummary& other) {
  // The lowest index wins, as in add(): which part saw a run first does not matter.
  auto earliest = [](std::optional<RunOutcome>& mine, const std::optional<RunOutcome>& theirs) {
    if (theirs && (!mine || theirs->index < mine->index)) mine = theirs;
  };
  add_notes(other);
  runs += other.runs;
  budget_exhausted += other.budget_exhausted;
  violating += other.violating;
  harm.merge(other.harm);
  for (const auto& [k, n] : other.by_kind) by_kind[k] += n;
  for (const auto& [k, r] : other.first) {
    const auto [it, fresh] = first.try_emplace(k, r);
    if (!fresh && r.index < it->second.index) it->second = r;
  }
  stuck_after_heal += other.stuck_after_heal;
  earliest(first_stuck_after_heal, other.first_stuck_after_heal);
  internal_errors += other.internal_errors;
  earliest(first_internal_error, other.first_internal_error);
}

Duration liveness_window_of(const Scenario& base, const ExploreOptions& o) {
  if (o.liveness_window) return *o.liveness_window;
  if (base.expect.liveness_window) return *base.expect.liveness_window;
  // Twice the lease, or twice the handover where the service keeps a silent
  // holder's lock longer (Consul, Chubby): a client that waits out a correct
  // lock-delay is not stuck.
  return base.lock.options->handover() * 2;
}

bool explore_as_expected(const Scenario& base, const ExploreSummary& s) {
  std::set<ViolationKind> found;
  for (const auto& [k, n] : s.by_kind)
    if (n > 0) found.insert(k);
  if (s.stuck_after_heal > 0) found.insert(ViolationKind::Stuck);
  if (!base.expect.present) return found.empty();
  return std::includes(base.expect.violations.begin(), base.expect.violations.end(), found.begin(), found.end());
}

namespace {
// What a worker keeps from one run to the next: the scenario its runs share,
// only its seed and faults changed for each (with_random_faults'
// scenario, without a copy per run), its schedule drawer, and what its runs'
// worlds are built from and judged by (RunReuse).
struct Worker {
  Worker(const Scenario& base, const ExploreOptions& o, const Reference& reference)
      : scenario(unfaulted(base, o)), kept(scenario.faults), drawer(base, o, reference) {}
  Scenario scenario;
  std::vector<FaultSpec> kept;  // the base's own faults, under --keep-faults
  ScheduleDrawer drawer;
  RunReuse reuse;  // after `scenario`: it is of that scenario
};

// One random run: its schedule drawn, run, and its outcome filled in.
void run_one(Worker& w, const ExploreOptions& o, Duration window, RunOutcome& out) {
  Scenario& s = w.scenario;
  s.seed = out.seed;
  s.faults.assign(w.kept.begin(), w.kept.end());
  w.drawer.draw(out.seed, s.faults, nullptr);
  out.faults = s.faults.size();
  RunOptions ro;
  ro.max_events = o.max_events;
  ro.keep_events = 0;
  ro.hash = false;  // a run is read for its verdict only
  if (o.liveness) ro.liveness = window;
  ro.reuse = &w.reuse;
  RunResult r = run_scenario_borrowed(s, ro);
  out.verdict = std::move(r.verdict);
  out.harm = r.harm;
  out.budget_exhausted = r.budget_exhausted;
  out.stuck_after_heal = r.liveness && r.liveness->stuck;
  // The summary reads a run's notes for its violations only (ExploreSummary::add_notes).
  if (!out.verdict.empty()) w.drawer.notes(out.notes);
}
}  // namespace

namespace {
// What every run copies from: the scenario without its prose (title, about,
// source: a few hundred bytes per run, which no run reads). Its draws and
// its runs are the base's; made once per exploration.
Scenario without_prose(const Scenario& base) {
  Scenario s = base;
  s.title.clear();
  s.about.clear();
  s.source.clear();
  return s;
}
}  // namespace

ExploreSummary explore(const Scenario& given, const ExploreOptions& o, const Progress& progress) {
  const Scenario base = without_prose(given);
  // This shard's runs are the indices shard_index, shard_index + shard_count, ...
  const std::uint64_t count = o.runs / o.shard_count + (o.shard_index < o.runs % o.shard_count ? 1 : 0);
  std::atomic<std::uint64_t> next{0}, done{0}, violating{0};
  std::mutex progress_mutex;
  const Reference reference = reference_run(base, o);
  const Duration window = liveness_window_of(base, o);
  const int jobs = std::max(1, o.jobs);
  // Each worker folds its runs into a summary of its own as they end, and the
  // summaries are merged at the end: a summary is sums and the lowest index
  // of each kind, so it does not depend on which worker ran which run, nor on
  // the number of jobs. Nothing is kept per run: a run's outcome is gone when
  // the next starts (memory flat in --runs; an outcome per run was 168 bytes,
  // 17 MB at 100,000 runs, every page of it a fault when first touched).
  std::vector<ExploreSummary> parts(static_cast<std::size_t>(jobs));
  std::atomic<bool> stopped{false};
  auto worker = [&](ExploreSummary& mine) {
    Worker w(base, o, reference);
    RunOutcome out;
    for (std::uint64_t slot = next++; slot < count; slot = next++) {
      if (stopped || (o.stop && o.stop())) {
        stopped = true;  // a stop leaves the runs after it out
        break;
      }
      out = RunOutcome{};
      out.index = o.shard_index + slot * o.shard_count;
      out.seed = run_seed(o.seed, out.index);
      // A run that throws is a bug in locksim, not a verdict: it is counted
      // with its seed, and the search goes on (FoundationDB's simulator does so).
      try {
        if (o.before_run_for_test) o.before_run_for_test(out.index);
        run_one(w, o, window, out);
      } catch (const std::exception& e) {
        out = RunOutcome{.index = out.index, .seed = out.seed, .internal_error = e.what()};
      } catch (...) {
        out = RunOutcome{.index = out.index, .seed = out.seed, .internal_error = "an exception that is not a std::exception"};
      }
      mine.add_notes(out);  // kept as sums: a million runs' notes would not fit
      out.notes = {};       // nor kept with the first run of a kind
      mine.add(out);
      violating += !out.verdict.empty();
      const std::uint64_t d = ++done;
      if (progress) {
        std::lock_guard lock(progress_mutex);
        progress(d, count, violating);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker, std::ref(parts[static_cast<std::size_t>(j)]));
  worker(parts[0]);
  for (std::thread& t : threads) t.join();

  ExploreSummary summary;
  for (const ExploreSummary& part : parts) summary.merge(part);
  summary.planned = count;
  summary.partial = stopped;
  return summary;
}

namespace {

// The base scenario with another algorithm (and flavour): the [lock] keys the
// other one does not take are left out, the rest kept as written.
Scenario with_algorithm(const Scenario& base, const AlgorithmInfo& a, const std::string& flavour) {
  std::vector<LockOptionChange> changes;
  for (const LockConfig::Written& w : base.lock.written) {
    const bool common = w.key == "algorithm" || w.key == "fencing" || (w.key == "ttl" && a.takes_ttl);
    const bool listed = std::any_of(a.options.begin(), a.options.end(), [&](const OptionInfo& o) { return o.key == w.key; });
    if (!common && !listed) changes.push_back({w.key, std::nullopt});
  }
  changes.push_back({"algorithm", fmt::format("\"{}\"", a.name)});
  if (!flavour.empty()) changes.push_back({"flavour", fmt::format("\"{}\"", flavour)});
  Scenario s = base;
  try {
    set_lock_options(s, changes);
  } catch (const ScenarioError& e) {
    throw ScenarioError("--matrix " + std::string(a.name) + (flavour.empty() ? "" : ":" + flavour) + ": " + e.what());
  }
  return s;
}

}  // namespace

std::vector<MatrixRow> explore_matrix(const Scenario& base, const ExploreOptions& o,
                                      const std::vector<std::string>& variants) {
  // The same fault schedules for all: magnitudes drawn against the base's
  // lease, not each variant's own.
  ExploreOptions same = o;
  const Bounds b = bounds_of(base, o);
  same.max_pause = b.pause;
  same.max_jump = b.jump;
  same.max_outage = b.outage;
  std::vector<MatrixRow> rows;
  for (const std::string& v : variants) {
    const auto colon = v.find(':');
    const std::string algorithm = v.substr(0, colon);
    const std::string flavour = colon == std::string::npos ? "" : v.substr(colon + 1);
    const AlgorithmInfo* a = find_algorithm(algorithm);
    if (!a) {
      std::vector<std::string> names;
      for (const AlgorithmInfo& x : algorithms()) names.emplace_back(x.name);
      throw ScenarioError("--matrix: \"" + algorithm + "\" is not an algorithm" + did_you_mean(algorithm, names) + " (see locksim list)");
    }
    if (!flavour.empty() &&
        std::none_of(a->flavours.begin(), a->flavours.end(), [&](const OptionInfo& f) { return f.key == flavour; })) {
      std::vector<std::string> flavours;
      for (const OptionInfo& f : a->flavours) flavours.emplace_back(f.key);
      throw ScenarioError("--matrix: \"" + flavour + "\" is not a flavour of " + algorithm + did_you_mean(flavour, flavours));
    }
    if (a->needs_ttl && !base.lock.ttl)
      throw ScenarioError("--matrix: " + algorithm + " needs a ttl, and " + base.path + " sets none");
    if (base.lock.fencing == Fencing::Token && !a->monotonic_token)
      throw ScenarioError("--matrix: " + algorithm + " offers no monotonic fencing token, which " + base.path + " asks for");
    rows.push_back({v, explore(with_algorithm(base, *a, flavour), same)});
  }
  return rows;
}

}  // namespace locksim
