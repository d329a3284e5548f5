// The bounded exhaustive search's output (reports/exhaustive_output.hpp):
// its coverage and findings as text or JSON, its findings as scenario files,
// and shards' results merged.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "reports/exhaustive_output.hpp"

#include "harness/explore_exhaustive.hpp"
#include "harness/explore_reference.hpp"
#include "harness/faults/kind.hpp"
#include "harness/run.hpp"
#include "reports/words.hpp"

namespace locksim {

namespace {

std::string kind_names(const std::vector<FaultKind>& kinds) {
  std::string s;
  for (FaultKind k : kinds) s += (s.empty() ? "" : ", ") + std::string(fault_kind_name(k));
  return s;
}

std::string length_names(const std::vector<Duration>& lengths) {
  std::string s;
  for (Duration d : lengths) s += (s.empty() ? "" : ", ") + format_duration(d);
  return s;
}

// "overlap, stale-write or lost-update"
std::string either(Lang lang, const std::vector<ViolationKind>& kinds) {
  std::string s;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    const std::string k = lang == Lang::En ? std::string(violation_name(kinds[i])) : kind_words(lang, kinds[i]);
    s = i == 0 ? k : say(lang, i + 1 == kinds.size() ? W::ListOr : W::ListComma, {{"a", s}, {"b", k}});
  }
  return s;
}

std::string faults_word(Lang lang, int depth) {
  return depth == 1 ? say(lang, W::ExhOneFault) : say(lang, W::ExhUpToFaults, {{"n", std::to_string(depth)}});
}

}  // namespace

std::string finding_faults_text(const ExhaustiveFinding& f, Lang lang) {
  if (f.faults.empty()) return f.described;
  std::string words;
  for (const FaultSpec& x : f.faults) words += (words.empty() ? "" : std::string(word(lang, W::ExhFaultSeparator))) + say(lang, describe_fault(x));
  return words;
}

Scenario exhaustive_scenario(const Scenario& base, const ExploreOptions& o, const ExhaustiveFinding& f,
                             ViolationKind kind) {
  Scenario s = unfaulted(base, o);
  s.faults.insert(s.faults.end(), f.faults.begin(), f.faults.end());
  sort_faults(s.faults);
  RunOptions ro;
  ro.max_events = o.max_events;
  ro.keep_events = 0;
  s.expect.present = true;
  s.expect.violations = run_scenario(s, ro).verdict;
  // The search's run and this one (no fingerprints, compact timers) must be
  // the same run: a finding that does not replay is a bug of ours, never a
  // file to hand out. (Stuck after the liveness phase is not this run's to show.)
  if (!s.expect.violations.count(kind) && !(kind == ViolationKind::Stuck && o.liveness))
    throw std::logic_error(fmt::format("explore --exhaustive found {} with the schedule \"{}\", but the schedule run on "
                                       "its own does not show it: the two runs differ",
                                       violation_name(kind), finding_faults_text(f)));
  std::string found;
  for (ViolationKind k : s.expect.violations) found += (found.empty() ? "" : ", ") + std::string(violation_name(k));
  s.title = fmt::format("Found by explore --exhaustive: {} in \"{}\"", found.empty() ? "nothing" : found, base.title);
  s.source = "explore --exhaustive: " + base.path;
  std::string about = fmt::format("locksim explore --exhaustive placed faults on the events of {} and found\n{}. The schedule:\n",
                                  base.path, found.empty() ? "nothing" : found);
  for (const FaultSpec& x : s.faults) about += "  - " + say(Lang::En, describe_fault(x)) + "\n";
  about += "`locksim run` on this file replays it; its narrative tells how it happened.\n";
  s.about = about;
  return s;
}

std::string exhaustive_text(const Scenario& base, const ExploreOptions& o, const ExhaustiveOptions& x,
                            const ExhaustiveSummary& s, Lang lang) {
  std::string out = say(lang, W::ExhHead, {{"path", base.path}, {"depth", std::to_string(x.depth)}});
  if (o.shard_count > 1) out += say(lang, W::ExploreShard, {{"i", std::to_string(o.shard_index + 1)}, {"n", std::to_string(o.shard_count)}});
  const std::string beyond = x.depth < 2 ? ""
                             : x.window  ? say(lang, W::ExhBeyondWindow, {{"n", std::to_string(x.window)}})
                                         : say(lang, W::ExhBeyond);
  const std::string lengths = say_count(lang, s.lengths.size(), W::ExhLengthOne, W::ExhLengthMany);
  out += "\n  " + say(lang, W::ExhEvery, {{"faults", faults_word(lang, x.depth)}, {"kinds", kind_names(s.kinds)},
                                          {"anchors", std::to_string(s.anchors)}, {"beyond", beyond}});
  out += "\n  " + say(lang, W::ExhTimes, {{"lengths", lengths}, {"values", length_names(s.lengths)},
                                          {"choices", say_count(lang, s.choices, W::ExhChoiceOne, W::ExhChoiceMany)}}) + "\n";
  std::string sizes;
  for (std::size_t i = 0; i < s.schedules.size(); ++i)
    sizes += (i ? std::string(word(lang, W::KindSeparator)) : "") +
             say(lang, W::ExhSize, {{"n", std::to_string(s.schedules[i])}, {"faults", say_count(lang, i + 1, W::ExhFaultOne, W::ExhFaultMany)}});
  out += "  " + say(lang, W::ExhSchedulesRun, {{"total", std::to_string(s.total())}, {"sizes", sizes},
                                              {"states", say_count(lang, s.states, W::ExhStateOne, W::ExhStateMany)},
                                              {"skipped", std::to_string(s.skipped)},
                                              {"pruning", x.prune ? "" : say(lang, W::ExhPruningOff)}}) + "\n\n";
  std::size_t width = 16;
  for (ViolationKind k : kAllViolationKinds)
    width = std::max(width, display_width(lang == Lang::En ? std::string(violation_name(k)) : kind_words(lang, k)) + 1);
  out += fmt::format("  {:<{}} {:>10}   {}\n", say(lang, W::ExploreColViolation), width, say(lang, W::ExhColSchedules), say(lang, W::ExhColFirst));
  std::vector<ViolationKind> missing;
  for (ViolationKind k : kAllViolationKinds) {
    const std::uint64_t n = s.by_kind.count(k) ? s.by_kind.at(k) : 0;
    if (!n) missing.push_back(k);
    out += fmt::format("  {:<{}} {:>10}   {}\n", lang == Lang::En ? std::string(violation_name(k)) : kind_words(lang, k), width, n,
                       n ? finding_faults_text(s.first.at(k), lang) : "—");
  }
  if (!missing.empty())
    out += "\n  " + say(lang, W::ExhShown, {{"kinds", either(lang, missing)}, {"faults", faults_word(lang, x.depth)}, {"fkinds", kind_names(s.kinds)},
                                            {"anchors", std::to_string(s.anchors)}, {"lengths", lengths}}) +
           "\n  " + say(lang, W::ExhFingerprint) + "\n";
  if (s.budget_exhausted)
    out += "  " + say(lang, W::ExhBudget, {{"schedules", say_count(lang, s.budget_exhausted, W::ExhScheduleOne, W::ExhScheduleMany)}}) + "\n";
  return out;
}

std::string exhaustive_json(const Scenario& base, const ExploreOptions& o, const ExhaustiveOptions& x,
                            const ExhaustiveSummary& s) {
  using json = nlohmann::ordered_json;
  json kinds = json::array(), lengths = json::array();
  for (FaultKind k : s.kinds) kinds.push_back(fault_kind_name(k));
  for (Duration d : s.lengths) lengths.push_back(d.count_ns());
  json violations = json::object();
  for (ViolationKind k : kAllViolationKinds) {
    const std::uint64_t n = s.by_kind.count(k) ? s.by_kind.at(k) : 0;
    json v = {{"schedules", n}};
    if (n) {
      json path = json::array();
      for (const Placement& p : s.first.at(k).path) path.push_back({p.anchor, p.choice});
      v["first"] = {{"path", path}, {"faults", finding_faults_text(s.first.at(k))}};
    }
    violations[std::string(violation_name(k))] = v;
  }
  json j = {{"mode", "exhaustive"},
            {"scenario", base.path},
            {"base_seed", base.seed},
            {"shard", {o.shard_index + 1, o.shard_count}},
            // What shapes the search: shards of one search must agree on all of it.
            {"options", {{"depth", x.depth}, {"faults", kinds}, {"lengths_ns", lengths}, {"prune", x.prune},
                         {"window", x.window}, {"keep_faults", o.keep_faults}, {"max_events", o.max_events},
                         {"max_drift_ppm", o.max_drift_ppm}, {"liveness", o.liveness},
                         {"liveness_window_ns", o.liveness_window ? json(o.liveness_window->count_ns()) : json(nullptr)}}},
            {"anchors", s.anchors},
            {"choices", s.choices},
            {"schedules", s.schedules},
            {"states", s.states},
            {"skipped", s.skipped},
            {"budget_exhausted", s.budget_exhausted},
            {"violations", violations}};
  return j.dump();
}

bool is_exhaustive_result(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    return j.is_object() && j.value("mode", "") == "exhaustive";
  } catch (const std::exception&) {
    return false;
  }
}

MergedExhaustive merge_exhaustive(const std::vector<std::string>& texts, const std::vector<std::string>& names) {
  using json = nlohmann::json;
  MergedExhaustive m;
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
    if (j.value("mode", "") != "exhaustive") throw ScenarioError(names[i] + ": not an explore --exhaustive result");
    const json identity = {j["scenario"], j["base_seed"], j["options"], j["shard"][1], j["anchors"], j["choices"]};
    if (i == 0) {
      reference = identity;
      m.scenario_path = j["scenario"];
      const json& opts = j["options"];
      m.exhaustive.depth = opts["depth"];
      m.exhaustive.prune = opts["prune"];
      m.exhaustive.window = opts["window"];
      for (const auto& k : opts["faults"])
        if (const auto kind = find_fault_kind(k.get<std::string>())) m.exhaustive.kinds.push_back(*kind);
      for (const auto& d : opts["lengths_ns"]) m.exhaustive.lengths.push_back(Duration::ns(d.get<std::int64_t>()));
      m.options.keep_faults = opts["keep_faults"];
      m.options.max_events = opts["max_events"];
      m.options.liveness = opts.value("liveness", false);
      m.summary.anchors = j["anchors"];
      m.summary.choices = j["choices"];
      m.summary.kinds = m.exhaustive.kinds;
      m.summary.lengths = m.exhaustive.lengths;
      count = j["shard"][1];
    } else if (identity != reference) {
      throw ScenarioError(names[i] + ": a shard of another search (scenario, options or shard count differ from " + names[0] + ")");
    }
    const std::uint64_t shard = j["shard"][0];
    if (!seen.insert(shard).second) throw ScenarioError(names[i] + ": shard " + std::to_string(shard) + " given twice");
    const auto sizes = j["schedules"].get<std::vector<std::uint64_t>>();
    if (m.summary.schedules.size() < sizes.size()) m.summary.schedules.resize(sizes.size(), 0);
    for (std::size_t d = 0; d < sizes.size(); ++d) m.summary.schedules[d] += sizes[d];
    m.summary.states += j["states"].get<std::uint64_t>();
    m.summary.skipped += j["skipped"].get<std::uint64_t>();
    m.summary.budget_exhausted += j["budget_exhausted"].get<std::uint64_t>();
    for (ViolationKind k : kAllViolationKinds) {
      const json& v = j["violations"][std::string(violation_name(k))];
      const std::uint64_t n = v["schedules"];
      if (!n) continue;
      m.summary.by_kind[k] += n;
      ExhaustiveFinding f;
      for (const auto& p : v["first"]["path"]) f.path.push_back({p[0].get<std::uint32_t>(), p[1].get<std::uint32_t>()});
      f.described = v["first"]["faults"];
      if (!m.summary.first.count(k) || before(f.path, m.summary.first.at(k).path)) m.summary.first[k] = f;
    }
  }
  for (std::uint64_t k = 1; k <= count; ++k)
    if (!seen.count(k)) m.missing_shards.push_back(k);
  return m;
}

}  // namespace locksim
