// The explorer's runner: the runs of an exploration (or of a shard of it) on
// worker threads, their outcomes gathered by index; and --matrix, the same
// runs for each variant. Drawing a run's schedule is explore_schedule.cpp;
// the summary's text, JSON and merging are explore_output.cpp.
#include "harness/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "harness/explore_reference.hpp"
#include "harness/explore_schedule.hpp"
#include "lockalgos/registry.hpp"
#include "judge/words.hpp"
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
    for (const std::string& a : std::set<std::string>(r.notes.anchors.begin(), r.notes.anchors.end())) ++anchors[k][a];
    for (const std::string& l : std::set<std::string>(r.notes.lengths.begin(), r.notes.lengths.end()))
      if (!l.empty()) ++lengths[k][l];
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
  violating += !r.verdict.empty();
  for (ViolationKind k : r.verdict) {
    ++by_kind[k];
    auto it = first.find(k);
    if (it == first.end() || r.index < it->second.index) first[k] = r;
  }
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
  std::vector<std::uint64_t> indices;
  for (std::uint64_t i = 0; i < o.runs; ++i)
    if (i % o.shard_count == o.shard_index) indices.push_back(i);
  std::vector<RunOutcome> outcomes(indices.size());
  std::atomic<std::size_t> next{0}, done{0}, violating{0};
  std::mutex progress_mutex;
  const Reference reference = reference_run(base, o);
  const Duration window = liveness_window_of(base, o);
  const int jobs = std::max(1, o.jobs);
  std::vector<ExploreSummary> notes(static_cast<std::size_t>(jobs));

  // Each worker runs whole simulations, each single-threaded; results land by
  // index, so the summary does not depend on the number of jobs.
  std::vector<char> ran(indices.size(), 0);  // a stop leaves the runs after it out
  std::atomic<bool> stopped{false};
  auto worker = [&](ExploreSummary& my_notes) {
    Worker w(base, o, reference);
    for (std::size_t slot = next++; slot < indices.size(); slot = next++) {
      if (stopped || (o.stop && o.stop())) {
        stopped = true;
        break;
      }
      RunOutcome& out = outcomes[slot];
      out.index = indices[slot];
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
      ran[slot] = 1;
      my_notes.add_notes(out);  // kept as sums: a million runs' notes would not fit
      out.notes = {};
      violating += !out.verdict.empty();
      const std::size_t d = ++done;
      if (progress) {
        std::lock_guard lock(progress_mutex);
        progress(d, indices.size(), violating);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker, std::ref(notes[static_cast<std::size_t>(j)]));
  worker(notes[0]);
  for (std::thread& t : threads) t.join();

  ExploreSummary summary;
  summary.planned = indices.size();
  summary.partial = stopped;
  for (std::size_t slot = 0; slot < outcomes.size(); ++slot)
    if (ran[slot]) summary.add(outcomes[slot]);
  for (const ExploreSummary& n : notes) summary.add_notes(n);
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
  changes.push_back({"algorithm", "\"" + std::string(a.name) + "\""});
  if (!flavour.empty()) changes.push_back({"flavour", "\"" + flavour + "\""});
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
    if (!a) throw ScenarioError("--matrix: \"" + algorithm + "\" is not an algorithm (see locksim list)");
    if (!flavour.empty() &&
        std::none_of(a->flavours.begin(), a->flavours.end(), [&](const OptionInfo& f) { return f.key == flavour; }))
      throw ScenarioError("--matrix: \"" + flavour + "\" is not a flavour of " + algorithm);
    if (a->needs_ttl && !base.lock.ttl)
      throw ScenarioError("--matrix: " + algorithm + " needs a ttl, and " + base.path + " sets none");
    if (base.lock.fencing == Fencing::Token && !a->monotonic_token)
      throw ScenarioError("--matrix: " + algorithm + " offers no monotonic fencing token, which " + base.path + " asks for");
    rows.push_back({v, explore(with_algorithm(base, *a, flavour), same)});
  }
  return rows;
}

std::string matrix_text(const Scenario& base, const ExploreOptions& o, const std::vector<MatrixRow>& rows) {
  std::string out = fmt::format("{} — {} from seed {} for each, the same fault schedules for all\n\n", base.path,
                                counted(rows.empty() ? 0 : rows.front().summary.runs, "run"), o.seed);
  out += fmt::format("  {:<28}", "algorithm");
  for (ViolationKind k : kAllViolationKinds) out += fmt::format(" {:>16}", violation_name(k));
  out += "\n";
  for (const MatrixRow& r : rows) {
    out += fmt::format("  {:<28}", r.variant);
    for (ViolationKind k : kAllViolationKinds) {
      const std::uint64_t n = r.summary.by_kind.count(k) ? r.summary.by_kind.at(k) : 0;
      out += fmt::format(" {:>15.2f}%", r.summary.runs ? 100.0 * static_cast<double>(n) / static_cast<double>(r.summary.runs) : 0.0);
    }
    out += "\n";
  }
  out += "\n  (the share of runs with each violation; `explore` on one variant gives intervals and first seeds)\n";
  return out;
}

}  // namespace locksim
