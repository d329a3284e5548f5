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
        m.scenario_path = j.at("scenario");
        m.options.seed = j.at("base_seed");
        m.options.runs = j.at("options").at("runs");
        m.options.max_faults = j.at("options").at("max_faults");
        m.options.keep_faults = j.at("options").at("keep_faults");
        m.options.max_events = j.at("options").at("max_events");
        const json& opts = j.at("options");
        auto bound = [&](const char* key) {
          return opts.contains(key) && !opts[key].is_null() ? std::optional<Duration>(Duration::ns(opts[key].get<std::int64_t>()))
                                                            : std::nullopt;
        };
        m.options.max_pause = bound("max_pause_ns");
        m.options.max_jump = bound("max_jump_ns");
        m.options.max_outage = bound("max_outage_ns");
        if (opts.contains("max_drift_ppm")) m.options.max_drift_ppm = opts.at("max_drift_ppm");
        for (const auto& k : j.at("options").at("faults"))
          if (const auto kind = find_fault_kind(k.get<std::string>())) m.options.kinds.push_back(*kind);
        count = j.at("shard").at(1);
        // No exploration has more shards than runs, and a count of 10^15 would
        // have this list as many missing ones.
        if (count < 1 || count > 1'000'000)
          throw ScenarioError(names[i] + ": a shard count of " + std::to_string(count) + " (1 to 1,000,000)");
      } else if (identity != reference) {
        throw ScenarioError(names[i] + ": a shard of another exploration (scenario, base seed, options or shard count differ from " +
                            names[0] + ")");
      }
      const std::uint64_t shard = j.at("shard").at(0);
      if (shard < 1 || shard > count)
        throw ScenarioError(names[i] + ": shard " + std::to_string(shard) + " of " + std::to_string(count));
      if (!seen.insert(shard).second) throw ScenarioError(names[i] + ": shard " + std::to_string(shard) + " given twice");
      m.summary.runs += j.at("runs").get<std::uint64_t>();
      m.summary.violating += j.at("violating_runs").get<std::uint64_t>();
      m.summary.budget_exhausted += j.at("budget_exhausted").get<std::uint64_t>();
      for (ViolationKind k : kAllViolationKinds) {
        const json& v = j.at("violations").at(std::string(violation_name(k)));
        const std::uint64_t n = v.at("runs");
        if (n == 0) continue;
        m.summary.by_kind[k] += n;
        RunOutcome first;
        first.index = v.at("first").at("run");
        first.seed = v.at("first").at("seed");
        auto it = m.summary.first.find(k);
        if (it == m.summary.first.end() || first.index < it->second.index) m.summary.first[k] = first;
      }
    } catch (const nlohmann::json::exception& e) {
      throw ScenarioError(names[i] + ": not an explore result (a field is missing or of the wrong type: " + e.what() + ")");
    }
  }
  for (std::uint64_t k = 1; k <= count; ++k)
    if (!seen.count(k)) m.missing_shards.push_back(k);
  return m;
}

}  // namespace locksim
