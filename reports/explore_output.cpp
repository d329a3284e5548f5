// The explorer's output (reports/explore_output.hpp): a summary as text or
// JSON, and shards' JSON results merged back into one summary.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <tuple>

#include "reports/explore_output.hpp"

#include "harness/explore.hpp"
#include "harness/faults.hpp"
#include "harness/faults/kind.hpp"
#include "reports/words.hpp"

namespace locksim {


namespace {
// "pause,clock-jump": as --faults takes them.
std::string kinds_list(const std::vector<FaultKind>& kinds) {
  std::string s;
  for (FaultKind k : kinds) (s += s.empty() ? "" : ",") += fault_kind_name(k);
  return s;
}
// A constant of the scenario a fault's length was measured by: "lease",
// "client1 work", "redis2 replication lag".
std::string measure_words(Lang lang, Measure m, const std::string& of) {
  switch (m) {
    case Measure::Lease: return say(lang, W::MeasureLease);
    case Measure::TwoLeases: return say(lang, W::MeasureTwoLeases);
    case Measure::Handover: return say(lang, W::MeasureHandover);
    case Measure::Validity: return say(lang, W::MeasureValidity);
    case Measure::ReplicationLag: return say(lang, W::MeasureReplicationLag, {{"of", of}});
    case Measure::RestartDelay: return say(lang, W::MeasureRestartDelay, {{"of", of}});
    case Measure::DownAfter: return say(lang, W::MeasureDownAfter);
    case Measure::SentinelPing: return say(lang, W::MeasureSentinelPing);
    case Measure::Hold: return say(lang, W::MeasureHold, {{"of", of}});
    case Measure::Work: return say(lang, W::MeasureWork, {{"of", of}});
    case Measure::Start: return say(lang, W::MeasureStart, {{"of", of}});
    case Measure::Think: return say(lang, W::MeasureThink, {{"of", of}});
    case Measure::StorageTimeout: return say(lang, W::MeasureStorageTimeout, {{"of", of}});
    case Measure::NetworkDelay: return say(lang, W::MeasureNetworkDelay);
  }
  return {};
}
constexpr Measure kMeasures[] = {Measure::Lease, Measure::TwoLeases, Measure::Handover, Measure::Validity,
                                 Measure::ReplicationLag, Measure::RestartDelay, Measure::DownAfter, Measure::SentinelPing,
                                 Measure::Hold, Measure::Work, Measure::Start, Measure::Think, Measure::StorageTimeout,
                                 Measure::NetworkDelay};

// A kind in a table's first column: its name ("stale-write"); in another
// language, its words with the name after them.
std::string kind_column(Lang lang, ViolationKind k) {
  return lang == Lang::En ? std::string(violation_name(k)) : kind_words(lang, k);
}

// A label in `lang`: "client1 read", "a time", "until client2 read", "lease".
std::string found_label_words(Lang lang, const FoundLabel& l) {
  using K = FoundLabel::Kind;
  std::string out;
  switch (l.kind) {
    case K::Time: out = say(lang, W::FoundTime); break;
    case K::Event: out = say(lang, W::FoundEvent, {{"process", l.process}, {"event", std::string(event_name(l.event))}}); break;
    case K::Random: return say(lang, W::FoundRandom);
    case K::Constant: return measure_words(lang, l.measure, l.process);
    case K::Until: return say(lang, W::FoundUntil, {{"process", l.process}, {"event", std::string(event_name(l.event))}});
  }
  if (l.struck > 1) out = say(lang, W::FoundStruck, {{"label", out}, {"n", std::to_string(l.struck)}});
  return out;
}

// "client1 read (40), a time (35), ...": the most frequent first (ties in
// the order of their JSON keys), at most `top`.
std::string top_labels(Lang lang, const std::map<FoundLabel, std::uint64_t>& m, std::size_t top = 4) {
  std::vector<std::tuple<std::string, const FoundLabel*, std::uint64_t>> v;
  for (const auto& [label, n] : m) v.emplace_back(found_label_key(label), &label, n);
  std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return std::get<2>(a) > std::get<2>(b); });
  const std::string separator(word(lang, W::KindSeparator));
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < top; ++i)
    out += fmt::format("{}{} ({})", i ? separator : "", found_label_words(lang, *std::get<1>(v[i])), std::get<2>(v[i]));
  if (v.size() > top) out += separator + "...";
  return out;
}

std::string found_by_text(const ExploreSummary& s, Lang lang) {
  std::string out;
  for (ViolationKind k : kAllViolationKinds) {
    if (!s.by_kind.count(k) || (!s.anchors.count(k) && !s.lengths.count(k))) continue;
    if (out.empty()) out = "\n  " + say(lang, W::ExploreFoundBy) + "\n";
    const std::string kind = kind_column(lang, k);
    const std::size_t width = std::max<std::size_t>(16, display_width(kind) + 1);
    if (s.anchors.count(k)) out += fmt::format("  {:<{}} {}\n", kind, width, say(lang, W::ExploreFoundOn, {{"labels", top_labels(lang, s.anchors.at(k))}}));
    if (s.lengths.count(k))
      out += fmt::format("  {:<{}} {}\n", s.anchors.count(k) ? "" : kind, width, say(lang, W::ExploreFoundLengths, {{"labels", top_labels(lang, s.lengths.at(k))}}));
  }
  return out;
}

// "harm: 12 of 340 acknowledged increments lost (3.53%), 95% CI [...]": the
// pooled fraction over the runs and its bootstrap interval (HarmTally); no
// line when no run acknowledged an increment.
std::string harm_text(const HarmTally& h, Lang lang) {
  const auto ci = h.interval95();
  if (!ci) return {};
  return "\n  " + say(lang, W::ExploreHarm, {{"lost", std::to_string(h.lost())}, {"acknowledged", std::to_string(h.acknowledged())},
                                             {"pct", fmt::format("{:.2f}", 100 * h.fraction())},
                                             {"lo", fmt::format("{:.2f}", 100 * ci->first)}, {"hi", fmt::format("{:.2f}", 100 * ci->second)}}) +
         "\n  " + say(lang, W::ExploreHarmHow, {{"n", std::to_string(HarmTally::kResamples)}}) + "\n";
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


std::string found_label_key(const FoundLabel& l) { return found_label_words(Lang::En, l); }

std::optional<FoundLabel> found_label_of_key(const std::string& key) {
  using K = FoundLabel::Kind;
  for (const FoundLabel& l : {FoundLabel{.kind = K::Random}, FoundLabel{.kind = K::Time}})
    if (key == found_label_key(l)) return l;
  // A constant: the lock's, or "<whose> <what>".
  for (Measure m : kMeasures) {
    const std::string alone = measure_words(Lang::En, m, "");
    if (key == alone) return FoundLabel{.kind = K::Constant, .measure = m};
    // A measure of a node's or a client's says its name first: alone, " replication lag".
    if (alone.rfind(' ', 0) == 0 && key.size() > alone.size() && key.ends_with(alone))
      return FoundLabel{.kind = K::Constant, .process = key.substr(0, key.size() - alone.size()), .measure = m};
  }
  // An event's: "until client2 read"; an anchor: "client1 read", "a time", each maybe ", 3 nodes at once".
  std::string rest = key;
  std::size_t struck = 0;
  const std::string at_once = " nodes at once";
  if (const auto comma = key.rfind(", "); comma != std::string::npos && key.ends_with(at_once)) {
    const std::string n = key.substr(comma + 2, key.size() - at_once.size() - comma - 2);
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos && n.size() < 10) {
      rest = key.substr(0, comma);
      struck = std::stoul(n);
    }
  }
  const bool until = rest.rfind("until ", 0) == 0 && struck == 0;
  if (until) rest = rest.substr(6);
  if (rest == "a time" && !until) return FoundLabel{.kind = K::Time, .struck = struck};
  const auto space = rest.rfind(' ');
  if (space == std::string::npos) return std::nullopt;
  const auto event = event_from_name(rest.substr(space + 1));
  if (!event) return std::nullopt;
  return FoundLabel{.kind = until ? K::Until : K::Event, .process = rest.substr(0, space), .event = *event, .struck = struck};
}

std::string explore_text(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s, Lang lang) {
  auto runs = [&](std::uint64_t n) { return say_count(lang, n, W::ShrinkRunOne, W::ShrinkRunMany); };
  std::string out = say(lang, W::ExploreHead, {{"path", base.path}, {"runs", runs(s.runs)}, {"seed", std::to_string(o.seed)}});
  if (o.shard_count > 1) out += say(lang, W::ExploreShard, {{"i", std::to_string(o.shard_index + 1)}, {"n", std::to_string(o.shard_count)}});
  if (s.partial) out += "\n  " + say(lang, W::ExplorePartial, {{"n", std::to_string(s.runs)}, {"m", std::to_string(s.planned)}});
  const std::string algorithm = base.lock.algorithm + (base.lock.flavour.empty() ? "" : " (" + base.lock.flavour + ")");
  if (o.max_faults == 0)
    out += "\n  " + say(lang, W::ExploreNoFault, {{"algorithm", algorithm}}) + "\n\n";
  else
    out += "\n  " + say(lang, W::ExploreDrawn, {{"algorithm", algorithm}, {"kinds", kinds_list(o.kinds.empty() ? drawn_kinds(base) : o.kinds)}}) + "\n\n";
  // The kinds' column as wide as its widest name in this language (16 in English).
  std::size_t width = 16, ci = 17;
  for (ViolationKind k : kAllViolationKinds) width = std::max(width, display_width(kind_column(lang, k)) + 1);
  ci = std::max(ci, display_width(say(lang, W::ExploreColCi)));
  out += fmt::format("  {:<{}} {:>8} {:>8}   {:<{}} {}\n", say(lang, W::ExploreColViolation), width, say(lang, W::ExploreColRuns),
                     say(lang, W::ExploreColRate), say(lang, W::ExploreColCi), ci, say(lang, W::ExploreColFirst));
  for (ViolationKind k : kAllViolationKinds) {
    const std::uint64_t n = s.by_kind.count(k) ? s.by_kind.at(k) : 0;
    const auto [lo, hi] = wilson95(n, s.runs);
    std::string first = "—";
    if (n)
      first = say(lang, W::ExploreFirstSeen, {{"run", std::to_string(s.first.at(k).index)}, {"seed", std::to_string(s.first.at(k).seed)},
                                              {"command", explore_replay_command(base, o, s.first.at(k).seed)}});
    out += fmt::format("  {:<{}} {:>8} {:>7.2f}%   [{:.2f}%, {:.2f}%]{:<{}}{}\n", kind_column(lang, k), width, n,
                       s.runs ? 100.0 * static_cast<double>(n) / static_cast<double>(s.runs) : 0.0, 100 * lo, 100 * hi, "",
                       3 + (ci > 17 ? ci - 17 : 0), first);
  }
  out += harm_text(s.harm, lang);
  out += found_by_text(s, lang);
  if (o.liveness) {
    out += "\n  " + say(lang, W::ExploreLiveness, {{"window", s.runs ? format_duration(liveness_window_of(base, o)) : say(lang, W::ExploreTheWindow)}});
    if (s.stuck_after_heal == 0) out += say(lang, W::ExploreNoneStuck) + "\n";
    else
      out += say(lang, W::ExploreStuck, {{"runs", runs(s.stuck_after_heal)}, {"run", std::to_string(s.first_stuck_after_heal->index)},
                                         {"seed", std::to_string(s.first_stuck_after_heal->seed)},
                                         {"command", explore_replay_command(base, o, s.first_stuck_after_heal->seed)}}) + "\n";
  }
  if (s.internal_errors)
    out += "\n  " + say(lang, W::ExploreInternalErrors, {{"runs", runs(s.internal_errors)}, {"run", std::to_string(s.first_internal_error->index)},
                                                          {"seed", std::to_string(s.first_internal_error->seed)},
                                                          {"what", s.first_internal_error->internal_error}}) +
           "\n    " + explore_replay_command(base, o, s.first_internal_error->seed) + "\n";
  out += "\n  " + say(lang, W::ExploreTotals, {{"violating", std::to_string(s.violating)}, {"runs", runs(s.runs)},
                                                {"hit", std::to_string(s.budget_exhausted)},
                                                {"events", say_count(lang, o.max_events, W::EventOne, W::EventMany)},
                                                {"d", format_duration(base.duration)}}) + "\n";
  return out;
}

std::string matrix_text(const Scenario& base, const ExploreOptions& o, const std::vector<MatrixRow>& rows, Lang lang) {
  const std::uint64_t runs = rows.empty() ? 0 : rows.front().summary.runs;
  std::string out = say(lang, W::MatrixHead,
                        {{"path", base.path},
                         {"runs", say_count(lang, runs, W::ShrinkRunOne, W::ShrinkRunMany)},
                         {"seed", std::to_string(o.seed)}}) +
                    "\n\n";
  const std::string algorithm = say(lang, W::MatrixColAlgorithm);  // padded by its width on a terminal: 算法 is 4 columns
  out += "  " + algorithm + std::string(28 - std::min<std::size_t>(28, display_width(algorithm)), ' ');
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
  out += "\n  " + say(lang, W::MatrixFoot) + "\n";
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
    if (n) {
      auto labels = [&](const FoundBy& by) {
        json out = json::object();
        if (by.count(k)) {
          std::map<std::string, std::uint64_t> keyed;  // in the keys' order, as before labels had a structure
          for (const auto& [label, count] : by.at(k)) keyed[found_label_key(label)] += count;
          for (const auto& [key, count] : keyed) out[key] = count;
        }
        return out;
      };
      entry["found_by"] = {{"anchors", labels(s.anchors)}, {"lengths", labels(s.lengths)}};
    }
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
      for (const auto& [key, count] : v.at("found_by").at("anchors").items())
        if (const auto label = found_label_of_key(key)) shard.anchors[k][*label] = count.get<std::uint64_t>();
      for (const auto& [key, count] : v.at("found_by").at("lengths").items())
        if (const auto label = found_label_of_key(key)) shard.lengths[k][*label] = count.get<std::uint64_t>();
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
