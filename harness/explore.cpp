#include "harness/explore.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness/faults/kind.hpp"
#include "lockalgos/registry.hpp"
#include "judge/words.hpp"
#include "sim/rng.hpp"

namespace locksim {

std::uint64_t run_seed(std::uint64_t base_seed, std::uint64_t index) {
  std::uint64_t s = base_seed ^ (index * 0x9e3779b97f4a7c15ULL);
  return splitmix64(s) >> 1;  // fits a TOML integer
}

namespace {

struct Bounds {
  Duration pause, jump, outage, horizon;
};

Bounds bounds_of(const Scenario& s, const ExploreOptions& o) {
  // What breaks a lock is measured against its lease: draw magnitudes up to twice it.
  Duration lease = s.lock.ttl.value_or(Duration::zero());
  if (lease.is_zero()) {
    if (s.lock.algorithm == "zookeeper") lease = s.lock.session_timeout;
    else if (s.lock.algorithm == "etcd") lease = s.lock.lease_ttl;
    else lease = s.lock.watchdog_timeout;
  }
  return {o.max_pause.value_or(lease * 2), o.max_jump.value_or(lease * 2), o.max_outage.value_or(lease * 2),
          s.duration * 4 / 5};
}

}  // namespace

Scenario with_random_faults(const Scenario& base, std::uint64_t seed, const ExploreOptions& o) {
  Scenario s = base;
  s.seed = seed;
  // What the base file expects was about its own faults, not these.
  const auto window = s.expect.liveness_window;
  s.expect = Expectation{};
  s.expect.liveness_window = window;
  if (!o.keep_faults) s.faults.clear();
  Rng rng = Rng(seed).fork("explore/schedule");
  const Bounds b = bounds_of(base, o);

  FaultDraw d{.rng = rng, .base = base, .max_pause = b.pause, .max_jump = b.jump, .max_outage = b.outage,
              .max_drift_ppm = o.max_drift_ppm};
  for (const ClientConfig& c : base.clients) d.clients.push_back(c.name);
  for (const NodeConfig& n : base.nodes) {
    d.nodes.push_back(n.name);
    if (!n.replica_of.empty()) d.masters_with_replicas.push_back(n.replica_of);
  }
  d.everyone = d.clients;
  d.everyone.insert(d.everyone.end(), d.nodes.begin(), d.nodes.end());
  d.everyone.push_back(base.storage.name);

  // Swarm: each kind on offer is enabled with probability 1/2 (at least one).
  std::vector<FaultKind> allowed = o.kinds.empty() ? drawn_kinds(base) : o.kinds;
  std::erase_if(allowed, [&](FaultKind k) { return fault_kind(k).offered && !fault_kind(k).offered(base); });
  std::vector<FaultKind> enabled;
  for (FaultKind k : allowed)
    if (rng.chance(0.5)) enabled.push_back(k);
  if (enabled.empty() && !allowed.empty()) enabled.push_back(pick(rng, allowed));
  if (enabled.empty()) return s;

  const int count = static_cast<int>(rng.between(std::int64_t{1}, std::int64_t{o.max_faults}));
  for (int i = 0; i < count; ++i) {
    FaultSpec f;
    f.kind = pick(rng, enabled);
    f.at = rng.between(Duration::zero(), b.horizon);
    // A kind explore does not draw on its own (named in o.kinds all the same) draws nothing.
    if (const auto draw = fault_kind(f.kind).draw) draw(d, f, s.faults);
  }
  // The fault engine schedules by time; keep the file readable in the same order.
  sort_faults(s.faults);
  return s;
}

void ExploreSummary::add(const RunOutcome& r) {
  ++runs;
  budget_exhausted += r.budget_exhausted;
  violating += !r.verdict.empty();
  for (ViolationKind k : r.verdict) {
    ++by_kind[k];
    auto it = first.find(k);
    if (it == first.end() || r.index < it->second.index) first[k] = r;
  }
}

std::pair<double, double> wilson95(std::uint64_t k, std::uint64_t n) {
  if (n == 0) return {0.0, 1.0};
  const double z = 1.959963984540054, nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
  const double denom = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

ExploreSummary explore(const Scenario& base, const ExploreOptions& o, const Progress& progress) {
  std::vector<std::uint64_t> indices;
  for (std::uint64_t i = 0; i < o.runs; ++i)
    if (i % o.shard_count == o.shard_index) indices.push_back(i);
  std::vector<RunOutcome> outcomes(indices.size());
  std::atomic<std::size_t> next{0}, done{0}, violating{0};
  std::mutex progress_mutex;

  // Each worker runs whole simulations, each single-threaded; results land by
  // index, so the summary does not depend on the number of jobs.
  auto worker = [&] {
    for (std::size_t slot = next++; slot < indices.size(); slot = next++) {
      RunOutcome& out = outcomes[slot];
      out.index = indices[slot];
      out.seed = run_seed(o.seed, out.index);
      Scenario s = with_random_faults(base, out.seed, o);
      out.faults = s.faults.size();
      RunOptions ro;
      ro.max_events = o.max_events;
      ro.keep_events = 0;
      const RunResult r = run_scenario(std::move(s), ro);
      out.verdict = r.verdict;
      out.budget_exhausted = r.budget_exhausted;
      violating += !out.verdict.empty();
      const std::size_t d = ++done;
      if (progress) {
        std::lock_guard lock(progress_mutex);
        progress(d, indices.size(), violating);
      }
    }
  };
  const int jobs = std::max(1, o.jobs);
  std::vector<std::thread> threads;
  for (int j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();

  ExploreSummary summary;
  for (const RunOutcome& r : outcomes) summary.add(r);
  return summary;
}

namespace {
// "pause,clock-jump": as --faults takes them.
std::string kinds_list(const std::vector<FaultKind>& kinds) {
  std::string s;
  for (FaultKind k : kinds) s += (s.empty() ? "" : ",") + std::string(fault_kind_name(k));
  return s;
}
// Everything that shapes a run's schedule, so the command replays exactly that run.
std::string replay(const Scenario& base, const ExploreOptions& o, std::uint64_t seed) {
  std::string cmd = fmt::format("locksim explore {} --replay {}", base.path, seed);
  if (!o.kinds.empty()) cmd += " --faults " + kinds_list(o.kinds);
  if (o.max_faults != ExploreOptions{}.max_faults) cmd += fmt::format(" --max-faults {}", o.max_faults);
  if (o.keep_faults) cmd += " --keep-faults";
  if (o.max_events != ExploreOptions{}.max_events) cmd += fmt::format(" --max-events {}", o.max_events);
  if (o.max_pause) cmd += " --max-pause " + format_duration(*o.max_pause);
  if (o.max_jump) cmd += " --max-jump " + format_duration(*o.max_jump);
  if (o.max_outage) cmd += " --max-outage " + format_duration(*o.max_outage);
  if (o.max_drift_ppm != ExploreOptions{}.max_drift_ppm) cmd += fmt::format(" --max-drift-ppm {}", o.max_drift_ppm);
  return cmd;
}
}  // namespace

std::string explore_text(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s) {
  std::string out = fmt::format("{} — {} from seed {}", base.path, counted(s.runs, "run"), o.seed);
  if (o.shard_count > 1) out += fmt::format(" (shard {}/{})", o.shard_index + 1, o.shard_count);
  out += fmt::format("\n  algorithm {}{}, faults drawn from: {} (swarm: each run enables a random subset)\n\n",
                     base.lock.algorithm, base.lock.flavour.empty() ? "" : " (" + base.lock.flavour + ")",
                     kinds_list(o.kinds.empty() ? drawn_kinds(base) : o.kinds));
  out += fmt::format("  {:<16} {:>8} {:>8}   {:<17} {}\n", "violation", "runs", "rate", "95% CI (Wilson)", "first seen");
  for (ViolationKind k : kAllViolationKinds) {
    const std::uint64_t n = s.by_kind.count(k) ? s.by_kind.at(k) : 0;
    const auto [lo, hi] = wilson95(n, s.runs);
    std::string first = "—";
    if (n) first = fmt::format("run {} (seed {}): {}", s.first.at(k).index, s.first.at(k).seed, replay(base, o, s.first.at(k).seed));
    out += fmt::format("  {:<16} {:>8} {:>7.2f}%   [{:.2f}%, {:.2f}%]   {}\n", violation_name(k), n,
                       s.runs ? 100.0 * static_cast<double>(n) / static_cast<double>(s.runs) : 0.0, 100 * lo, 100 * hi, first);
  }
  out += fmt::format("\n  {} of {} violated something; {} the budget ({} or {} simulated)\n", s.violating,
                     counted(s.runs, "run"), s.budget_exhausted == 1 ? "1 hit" : std::to_string(s.budget_exhausted) + " hit",
                     counted(o.max_events, "event"), format_duration(base.duration));
  return out;
}

std::string explore_json(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s) {
  using json = nlohmann::ordered_json;
  json kinds = json::object();
  for (ViolationKind k : kAllViolationKinds) {
    const std::uint64_t n = s.by_kind.count(k) ? s.by_kind.at(k) : 0;
    const auto [lo, hi] = wilson95(n, s.runs);
    json entry = {{"runs", n}, {"ci95", {lo, hi}}};
    if (n) entry["first"] = {{"run", s.first.at(k).index}, {"seed", s.first.at(k).seed}, {"replay", replay(base, o, s.first.at(k).seed)}};
    kinds[std::string(violation_name(k))] = entry;
  }
  json fault_kinds = json::array();
  for (FaultKind k : o.kinds) fault_kinds.push_back(fault_kind_name(k));
  json j = {{"scenario", base.path},
            {"base_seed", o.seed},
            {"runs", s.runs},
            {"shard", {o.shard_index + 1, o.shard_count}},
            // What shapes the runs: shards of one exploration must agree on all of it.
            {"options", {{"runs", o.runs}, {"faults", fault_kinds}, {"max_faults", o.max_faults},
                         {"keep_faults", o.keep_faults}, {"max_events", o.max_events},
                         {"max_pause_ns", o.max_pause ? json(o.max_pause->count_ns()) : json(nullptr)},
                         {"max_jump_ns", o.max_jump ? json(o.max_jump->count_ns()) : json(nullptr)},
                         {"max_outage_ns", o.max_outage ? json(o.max_outage->count_ns()) : json(nullptr)},
                         {"max_drift_ppm", o.max_drift_ppm}}},
            {"violating_runs", s.violating},
            {"budget_exhausted", s.budget_exhausted},
            {"violations", kinds}};
  return j.dump();
}

std::vector<MatrixRow> explore_matrix(const Scenario& base, const ExploreOptions& o,
                                      const std::vector<std::string>& variants) {
  std::vector<MatrixRow> rows;
  for (const std::string& v : variants) {
    Scenario s = base;
    const auto colon = v.find(':');
    s.lock.algorithm = v.substr(0, colon);
    s.lock.flavour = colon == std::string::npos ? "" : v.substr(colon + 1);
    const AlgorithmInfo* a = find_algorithm(s.lock.algorithm);
    if (!a) throw ScenarioError("--matrix: \"" + s.lock.algorithm + "\" is not an algorithm (see locksim list)");
    if (!s.lock.flavour.empty() &&
        std::none_of(a->flavours.begin(), a->flavours.end(), [&](const OptionInfo& f) { return f.key == s.lock.flavour; }))
      throw ScenarioError("--matrix: \"" + s.lock.flavour + "\" is not a flavour of " + s.lock.algorithm);
    if (a->needs_ttl && !s.lock.ttl)
      throw ScenarioError("--matrix: " + s.lock.algorithm + " needs a ttl, and " + base.path + " sets none");
    if (s.lock.fencing == Fencing::Token && !a->monotonic_token)
      throw ScenarioError("--matrix: " + s.lock.algorithm + " offers no monotonic fencing token, which " + base.path + " asks for");
    rows.push_back({v, explore(s, o)});
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

Merged merge_results(const std::vector<std::string>& texts, const std::vector<std::string>& names) {
  using json = nlohmann::json;
  Merged m;
  std::set<std::uint64_t> seen;
  std::uint64_t count = 0;
  json reference;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    json j;
    try {
      j = json::parse(texts[i]);
    } catch (const std::exception& e) {
      throw ScenarioError(names[i] + ": not an explore result (" + e.what() + ")");
    }
    if (!j.contains("options") || !j.contains("shard") || !j.contains("violations"))
      throw ScenarioError(names[i] + ": not an explore result (write one with explore --format json or --result)");
    const json identity = {j["scenario"], j["base_seed"], j["options"], j["shard"][1]};
    if (i == 0) {
      reference = identity;
      m.scenario_path = j["scenario"];
      m.options.seed = j["base_seed"];
      m.options.runs = j["options"]["runs"];
      m.options.max_faults = j["options"]["max_faults"];
      m.options.keep_faults = j["options"]["keep_faults"];
      m.options.max_events = j["options"]["max_events"];
      const json& opts = j["options"];
      auto bound = [&](const char* key) {
        return opts.contains(key) && !opts[key].is_null() ? std::optional<Duration>(Duration::ns(opts[key].get<std::int64_t>()))
                                                          : std::nullopt;
      };
      m.options.max_pause = bound("max_pause_ns");
      m.options.max_jump = bound("max_jump_ns");
      m.options.max_outage = bound("max_outage_ns");
      if (opts.contains("max_drift_ppm")) m.options.max_drift_ppm = opts["max_drift_ppm"];
      for (const auto& k : j["options"]["faults"])
        if (const auto kind = find_fault_kind(k.get<std::string>())) m.options.kinds.push_back(*kind);
      count = j["shard"][1];
    } else if (identity != reference) {
      throw ScenarioError(names[i] + ": a shard of another exploration (scenario, base seed, options or shard count differ from " +
                          names[0] + ")");
    }
    const std::uint64_t shard = j["shard"][0];
    if (!seen.insert(shard).second) throw ScenarioError(names[i] + ": shard " + std::to_string(shard) + " given twice");
    m.summary.runs += j["runs"].get<std::uint64_t>();
    m.summary.violating += j["violating_runs"].get<std::uint64_t>();
    m.summary.budget_exhausted += j["budget_exhausted"].get<std::uint64_t>();
    for (ViolationKind k : kAllViolationKinds) {
      const json& v = j["violations"][std::string(violation_name(k))];
      const std::uint64_t n = v["runs"];
      if (n == 0) continue;
      m.summary.by_kind[k] += n;
      RunOutcome first;
      first.index = v["first"]["run"];
      first.seed = v["first"]["seed"];
      auto it = m.summary.first.find(k);
      if (it == m.summary.first.end() || first.index < it->second.index) m.summary.first[k] = first;
    }
  }
  for (std::uint64_t k = 1; k <= count; ++k)
    if (!seen.count(k)) m.missing_shards.push_back(k);
  return m;
}

}  // namespace locksim
