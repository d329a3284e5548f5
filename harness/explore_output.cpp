// The explorer's output: a summary as text or JSON, and shards' JSON results
// merged back into one summary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "harness/explore.hpp"
#include "harness/faults/kind.hpp"
#include "judge/words.hpp"

namespace locksim {

std::pair<double, double> wilson95(std::uint64_t k, std::uint64_t n) {
  if (n == 0) return {0.0, 1.0};
  const double z = 1.959963984540054, nn = static_cast<double>(n), p = static_cast<double>(k) / nn;
  const double denom = 1 + z * z / nn;
  const double centre = (p + z * z / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z * z / (4 * nn * nn)) / denom;
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

namespace {
// "pause,clock-jump": as --faults takes them.
std::string kinds_list(const std::vector<FaultKind>& kinds) {
  std::string s;
  for (FaultKind k : kinds) s += (s.empty() ? "" : ",") + std::string(fault_kind_name(k));
  return s;
}
// "client1 read 40, a time 35, ...": the most frequent first, at most `top`.
std::string top_labels(const std::map<std::string, std::uint64_t>& m, std::size_t top = 4) {
  std::vector<std::pair<std::string, std::uint64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < top; ++i) out += fmt::format("{}{} ({})", i ? ", " : "", v[i].first, v[i].second);
  if (v.size() > top) out += ", ...";
  return out;
}

std::string found_by_text(const ExploreSummary& s) {
  std::string out;
  for (ViolationKind k : kAllViolationKinds) {
    if (!s.by_kind.count(k) || (!s.anchors.count(k) && !s.lengths.count(k))) continue;
    if (out.empty()) out = "\n  what found them (runs with a fault on each anchor, and of each length):\n";
    if (s.anchors.count(k)) out += fmt::format("  {:<16} on: {}\n", violation_name(k), top_labels(s.anchors.at(k)));
    if (s.lengths.count(k))
      out += fmt::format("  {:<16} lengths: {}\n", s.anchors.count(k) ? "" : violation_name(k), top_labels(s.lengths.at(k)));
  }
  return out;
}

// "harm: 12 of 340 acknowledged increments lost (3.53%), 95% CI [...]": the
// pooled fraction over the runs and its bootstrap interval (HarmTally); no
// line when no run acknowledged an increment.
std::string harm_text(const HarmTally& h) {
  const auto ci = h.interval95();
  if (!ci) return {};
  return fmt::format("\n  harm: {} of {} acknowledged increments lost ({:.2f}%), 95% CI [{:.2f}%, {:.2f}%]\n"
                     "  (pooled over the runs; the interval a bootstrap over runs, {} resamples)\n",
                     h.lost(), h.acknowledged(), 100 * h.fraction(), 100 * ci->first, 100 * ci->second,
                     HarmTally::kResamples);
}

nlohmann::ordered_json harm_json(const HarmTally& h) {
  using json = nlohmann::ordered_json;
  json runs = json::array();
  for (const auto& [pair, n] : h.runs) runs.push_back({pair.first, pair.second, n});
  const auto ci = h.interval95();
  return {{"lost", h.lost()},
          {"acknowledged", h.acknowledged()},
          {"fraction", h.fraction()},
          {"ci95", ci ? json{ci->first, ci->second} : json(nullptr)},
          {"interval", "bootstrap over runs"},
          {"resamples", HarmTally::kResamples},
          // (lost, acknowledged, runs): what `locksim merge` adds up.
          {"runs", runs}};
}

}  // namespace

// Everything that shapes a run, so the command replays exactly that run.
std::string explore_replay_command(const Scenario& base, const ExploreOptions& o, std::uint64_t seed) {
  std::string cmd = fmt::format("locksim explore {} --replay {}", base.path, seed);
  if (!o.kinds.empty()) cmd += " --faults " + kinds_list(o.kinds);
  if (o.max_faults != ExploreOptions{}.max_faults) cmd += fmt::format(" --max-faults {}", o.max_faults);
  if (o.keep_faults) cmd += " --keep-faults";
  if (o.max_events != ExploreOptions{}.max_events) cmd += fmt::format(" --max-events {}", o.max_events);
  if (o.max_pause) cmd += " --max-pause " + format_duration(*o.max_pause);
  if (o.max_jump) cmd += " --max-jump " + format_duration(*o.max_jump);
  if (o.max_outage) cmd += " --max-outage " + format_duration(*o.max_outage);
  if (o.max_drift_ppm != ExploreOptions{}.max_drift_ppm) cmd += fmt::format(" --max-drift-ppm {}", o.max_drift_ppm);
  if (o.liveness) cmd += " --liveness";
  if (o.liveness_window) cmd += " --liveness-window " + format_duration(*o.liveness_window);
  return cmd;
}

std::string explore_text(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s) {
  std::string out = fmt::format("{} — {} from seed {}", base.path, counted(s.runs, "run"), o.seed);
  if (o.shard_count > 1) out += fmt::format(" (shard {}/{})", o.shard_index + 1, o.shard_count);
  if (s.partial) out += fmt::format("\n  PARTIAL: interrupted; the summary of the {} of {} runs that finished", s.runs, s.planned);
  const std::string algorithm = base.lock.algorithm + (base.lock.flavour.empty() ? "" : " (" + base.lock.flavour + ")");
  if (o.max_faults == 0)
    out += fmt::format("\n  algorithm {}, no fault drawn: every run is the scenario's own schedule, only the seed varies\n\n", algorithm);
  else
    out += fmt::format("\n  algorithm {}, faults drawn from: {} (swarm: each run enables a random subset)\n\n", algorithm,
                       kinds_list(o.kinds.empty() ? drawn_kinds(base) : o.kinds));
  out += fmt::format("  {:<16} {:>8} {:>8}   {:<17} {}\n", "violation", "runs", "rate", "95% CI (Wilson)", "first seen");
  for (ViolationKind k : kAllViolationKinds) {
    const std::uint64_t n = s.by_kind.count(k) ? s.by_kind.at(k) : 0;
    const auto [lo, hi] = wilson95(n, s.runs);
    std::string first = "—";
    if (n) first = fmt::format("run {} (seed {}): {}", s.first.at(k).index, s.first.at(k).seed, explore_replay_command(base, o, s.first.at(k).seed));
    out += fmt::format("  {:<16} {:>8} {:>7.2f}%   [{:.2f}%, {:.2f}%]   {}\n", violation_name(k), n,
                       s.runs ? 100.0 * static_cast<double>(n) / static_cast<double>(s.runs) : 0.0, 100 * lo, 100 * hi, first);
  }
  out += harm_text(s.harm);
  out += found_by_text(s);
  if (o.liveness) {
    out += fmt::format("\n  liveness: after the faults, every one healed, a fresh client must get the lock\n"
                       "  (no wait longer than {} with nobody holding it): ",
                       s.runs ? format_duration(liveness_window_of(base, o)) : "the window");
    if (s.stuck_after_heal == 0) out += fmt::format("no run stuck\n");
    else
      out += fmt::format("{} stuck, first run {} (seed {}): {}\n", counted(s.stuck_after_heal, "run"),
                         s.first_stuck_after_heal->index, s.first_stuck_after_heal->seed,
                         explore_replay_command(base, o, s.first_stuck_after_heal->seed));
  }
  if (s.internal_errors)
    out += fmt::format("\n  internal errors (a bug in locksim, not a verdict): {} failed, first run {} (seed {}): {}\n"
                       "    {}\n",
                       counted(s.internal_errors, "run"), s.first_internal_error->index, s.first_internal_error->seed,
                       s.first_internal_error->internal_error, explore_replay_command(base, o, s.first_internal_error->seed));
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
    if (n) entry["first"] = {{"run", s.first.at(k).index}, {"seed", s.first.at(k).seed}, {"replay", explore_replay_command(base, o, s.first.at(k).seed)}};
    // What found it: runs by what a fault waited for, and by where its length came from.
    if (n) entry["found_by"] = {{"anchors", s.anchors.count(k) ? json(s.anchors.at(k)) : json::object()},
                                {"lengths", s.lengths.count(k) ? json(s.lengths.at(k)) : json::object()}};
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
                         {"max_drift_ppm", o.max_drift_ppm},
                         {"liveness", o.liveness},
                         {"liveness_window_ns", o.liveness_window ? json(o.liveness_window->count_ns()) : json(nullptr)}}},
            {"violating_runs", s.violating},
            {"budget_exhausted", s.budget_exhausted},
            {"violations", kinds},
            {"harm", harm_json(s.harm)}};
  if (o.liveness) {
    json live = {{"stuck_runs", s.stuck_after_heal}};
    if (s.first_stuck_after_heal)
      live["first"] = {{"run", s.first_stuck_after_heal->index}, {"seed", s.first_stuck_after_heal->seed},
                       {"replay", explore_replay_command(base, o, s.first_stuck_after_heal->seed)}};
    j["liveness"] = live;
  }
  if (s.internal_errors) {
    const RunOutcome& f = *s.first_internal_error;
    j["internal_errors"] = {{"runs", s.internal_errors},
                            {"first", {{"run", f.index}, {"seed", f.seed}, {"what", f.internal_error},
                                       {"replay", explore_replay_command(base, o, f.seed)}}}};
  }
  if (s.partial) j["partial"] = {{"planned", s.planned}};
  return j.dump();
}

namespace {
// One shard's counts, first runs and notes, read back into a summary and
// merged into `m` as explore merges its workers' (ExploreSummary::merge). A
// missing field throws nlohmann's exception, which merge_results words.
void add_shard(const nlohmann::json& j, Merged& m) {
  ExploreSummary shard;
  shard.runs = j.at("runs").get<std::uint64_t>();
  shard.violating = j.at("violating_runs").get<std::uint64_t>();
  shard.budget_exhausted = j.at("budget_exhausted").get<std::uint64_t>();
  if (j.contains("harm"))
    for (const auto& r : j.at("harm").at("runs"))
      shard.harm.runs[{r.at(0).get<std::uint64_t>(), r.at(1).get<std::uint64_t>()}] += r.at(2).get<std::uint64_t>();
  if (j.contains("liveness")) {
    const auto& live = j.at("liveness");
    shard.stuck_after_heal = live.at("stuck_runs").get<std::uint64_t>();
    if (live.contains("first")) {
      RunOutcome& first = shard.first_stuck_after_heal.emplace();
      first.index = live.at("first").at("run");
      first.seed = live.at("first").at("seed");
      first.stuck_after_heal = true;
    }
  }
  if (j.contains("internal_errors")) {
    const auto& errors = j.at("internal_errors");
    shard.internal_errors = errors.at("runs").get<std::uint64_t>();
    RunOutcome& first = shard.first_internal_error.emplace();
    first.index = errors.at("first").at("run");
    first.seed = errors.at("first").at("seed");
    first.internal_error = errors.at("first").at("what");
  }
  for (ViolationKind k : kAllViolationKinds) {
    const auto& v = j.at("violations").at(std::string(violation_name(k)));
    const std::uint64_t n = v.at("runs");
    if (n == 0) continue;
    shard.by_kind[k] = n;
    RunOutcome& first = shard.first[k];
    first.index = v.at("first").at("run");
    first.seed = v.at("first").at("seed");
    if (v.contains("found_by")) {
      for (const auto& [label, count] : v.at("found_by").at("anchors").items()) shard.anchors[k][label] = count.get<std::uint64_t>();
      for (const auto& [label, count] : v.at("found_by").at("lengths").items()) shard.lengths[k][label] = count.get<std::uint64_t>();
    }
  }
  m.summary.merge(shard);
}

// The options the shards ran with, from the first shard's "options".
void read_options(const nlohmann::json& j, Merged& m) {
  m.scenario_path = j.at("scenario");
  m.options.seed = j.at("base_seed");
  const auto& opts = j.at("options");
  m.options.runs = opts.at("runs");
  m.options.max_faults = opts.at("max_faults");
  m.options.keep_faults = opts.at("keep_faults");
  m.options.max_events = opts.at("max_events");
  auto bound = [&](const char* key) {
    return opts.contains(key) && !opts[key].is_null() ? std::optional<Duration>(Duration::ns(opts[key].get<std::int64_t>()))
                                                      : std::nullopt;
  };
  m.options.max_pause = bound("max_pause_ns");
  m.options.max_jump = bound("max_jump_ns");
  m.options.max_outage = bound("max_outage_ns");
  if (opts.contains("max_drift_ppm")) m.options.max_drift_ppm = opts.at("max_drift_ppm");
  if (opts.contains("liveness")) m.options.liveness = opts.at("liveness");
  m.options.liveness_window = bound("liveness_window_ns");
  for (const auto& k : opts.at("faults"))
    if (const auto kind = find_fault_kind(k.get<std::string>())) m.options.kinds.push_back(*kind);
}
}  // namespace

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
    if (!j.is_object() || !j.contains("options") || !j.contains("shard") || !j.contains("violations"))
      throw ScenarioError(names[i] + ": not an explore result (write one with explore --format json or --result)");
    // A field missing or of the wrong type is the file's fault, said as such:
    // .at() throws where a const operator[] was undefined behaviour.
    try {
      const json identity = {j.at("scenario"), j.at("base_seed"), j.at("options"), j.at("shard").at(1)};
      if (i == 0) {
        reference = identity;
        read_options(j, m);
        count = j.at("shard").at(1);
        // No exploration has more shards than runs, and a count of 10^15 would
        // have this list as many missing ones.
        if (count < 1 || count > 1'000'000)
          throw ScenarioError(names[i] + ": a shard count of " + std::to_string(count) + " (1 to 1,000,000)");
      } else if (identity != reference) {
        throw ScenarioError(names[i] + ": a shard of another exploration (scenario, base seed, options or shard count differ from " +
                            names[0] + ")");
      }
      if (j.contains("partial"))
        throw ScenarioError(names[i] + ": an interrupted shard (" + j.at("runs").dump() + " of " +
                            j.at("partial").at("planned").dump() + " runs): run it again, its summary is not the shard's");
      const std::uint64_t shard = j.at("shard").at(0);
      if (shard < 1 || shard > count)
        throw ScenarioError(names[i] + ": shard " + std::to_string(shard) + " of " + std::to_string(count));
      if (!seen.insert(shard).second) throw ScenarioError(names[i] + ": shard " + std::to_string(shard) + " given twice");
      add_shard(j, m);
    } catch (const nlohmann::json::exception& e) {
      throw ScenarioError(names[i] + ": not an explore result (a field is missing or of the wrong type: " + e.what() + ")");
    }
  }
  for (std::uint64_t k = 1; k <= count; ++k)
    if (!seen.count(k)) m.missing_shards.push_back(k);
  return m;
}

}  // namespace locksim
