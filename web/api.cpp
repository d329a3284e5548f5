#include "web/api.hpp"

#include <nlohmann/json.hpp>

#include <regex>
#include <set>

#include "harness/explore.hpp"
#include "reports/explore_output.hpp"
#include "harness/faults/kind.hpp"
#include "harness/run.hpp"
#include "harness/scenario.hpp"
#include "harness/scenario_writer.hpp"
#include "harness/shrink.hpp"
#include "reports/shrunk.hpp"
#include "harness/sweep.hpp"
#include "reports/diagram.hpp"
#include "reports/quiz.hpp"
#include "reports/report.hpp"
#include "reports/words.hpp"
#include "web/numbers.hpp"

namespace locksim::web {

namespace {

using json = nlohmann::ordered_json;

// JSON text; a string that is not UTF-8 (a byte of an edited file) is mended, not refused.
std::string text_of(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// What a run keeps of its trace, as `locksim run` keeps it (cli/main.cpp):
// every event for a diagram (up to this many), fewer for the JSON report's story.
constexpr std::uint64_t kWholeKeep = 2'000'000;
constexpr std::uint64_t kJsonKeep = 20'000;
// How far a page may ask a search to go: a tab's memory and patience.
constexpr std::uint64_t kMostRuns = 1'000'000;

Lang lang_of(const json& request) {
  const std::string name = request.value("lang", "en");
  const auto lang = parse_lang(name);
  if (!lang) throw ScenarioError(unknown_lang_message(name));
  return *lang;
}

std::string path_of(const json& request) { return request.value("path", "scenario.toml"); }

Scenario scenario_of(const json& request) {
  if (!request.contains("toml") || !request["toml"].is_string()) throw ScenarioError("the request has no scenario (\"toml\")");
  return parse_scenario(request["toml"].get<std::string>(), path_of(request));
}

json kind_names(const std::set<ViolationKind>& kinds) {
  json names = json::array();
  for (ViolationKind k : kinds) names.push_back(violation_name(k));
  return names;
}

std::set<ViolationKind> kinds_of(const json& names, std::string_view what) {
  std::set<ViolationKind> kinds;
  for (const json& n : names) {
    const auto k = n.is_string() ? parse_violation(n.get<std::string>()) : std::nullopt;
    if (!k) throw ScenarioError(std::string(what) + ": " + n.dump() + " is not a violation kind");
    kinds.insert(*k);
  }
  return kinds;
}

std::uint64_t count_of(const json& request, const char* key, std::uint64_t fallback, std::uint64_t most) {
  if (!request.contains(key)) return fallback;
  const json& v = request[key];
  if (!v.is_number_unsigned() || v.get<std::uint64_t>() < 1 || v.get<std::uint64_t>() > most)
    throw ScenarioError(std::string(key) + ": " + v.dump() + " is not a count from 1 to " + std::to_string(most));
  return v.get<std::uint64_t>();
}

// The story as the reports tell it (reports/html.cpp's list): its lines, a
// folded line with the steps it folds.
json story_json(const RunResult& r, Lang lang) {
  const Story story = tell_story(r, lang);
  const std::vector<Step>& told = story.steps;
  json lines = json::array();
  for (const StoryLine& l : fold_story(r.world->trace(), told, told_violations(r.violations), story.clock, lang)) {
    json line = {{"t", story.clock(l.at)}, {"text", l.text}};
    if (l.steps.size() > 1) {
      json steps = json::array();
      for (std::size_t i : l.steps) steps.push_back({{"t", story.clock(told[i].at)}, {"text", told[i].text}});
      line["steps"] = steps;
    }
    lines.push_back(line);
  }
  return lines;
}

json run_json(const RunResult& r, Lang lang) {
  const Scenario& s = *r.scenario;
  json violations = json::array();
  for (const Violation& v : told_violations(r.violations))
    violations.push_back({{"kind", violation_name(v.kind)}, {"kind_words", kind_words(lang, v.kind)}, {"at_ns", v.at.ns()},
                          {"until_ns", v.until.ns()}, {"words", violation_words(lang, v)}});
  DiagramOptions d;
  d.lang = lang;
  return {{"title", s.title},
          {"path", s.path},
          {"source", s.source},
          {"about", s.about},
          {"seed", r.seed},
          {"trace_hash", r.trace_hash},
          {"verdict", kind_names(r.verdict)},
          {"verdict_words", verdict_line(r, lang)},
          {"expected", s.expect.present ? kind_names(s.expect.violations) : json(nullptr)},
          {"as_expected", s.expect.present ? json(r.as_expected()) : json(nullptr)},
          {"violations", violations},
          {"story", story_json(r, lang)},
          {"report", text_report(r, {.lang = lang})},
          {"svg", svg_diagram(r, d)},
          {"stats", {{"events", r.stats.events}, {"messages", r.stats.messages}, {"acquisitions", r.stats.acquisitions},
                     {"sim_time_ns", r.stats.sim_time.ns()}}},
          {"replay", replay_command(r)}};
}

json describe(const json& request) {
  const Scenario s = scenario_of(request);
  const Lang lang = lang_of(request);
  json sliders = json::array();
  for (const Slider& k : web::sliders(s, request["toml"].get<std::string>(), lang))
    sliders.push_back({{"parameter", k.parameter}, {"label", k.label}, {"unit", knob_unit_name(k.unit)}, {"value", k.value},
                       {"lowest", k.lowest}, {"highest", k.highest}, {"line", k.line}});
  json kinds = json::array();  // what explore draws here
  for (FaultKind k : drawn_kinds(s)) kinds.push_back(fault_kind_name(k));
  static const std::regex catalogue_id(R"(catalogue ([A-Z][0-9]+))");
  std::smatch m;
  return {{"title", s.title},
          {"source", s.source},
          {"about", s.about},
          {"catalogue", std::regex_search(s.source, m, catalogue_id) ? json(m[1].str()) : json(nullptr)},
          {"algorithm", s.lock.algorithm},
          {"expected", s.expect.present ? kind_names(s.expect.violations) : json(nullptr)},
          {"sliders", sliders},
          {"explore_kinds", kinds}};
}

json run(const json& request) {
  Scenario s = scenario_of(request);
  const Lang lang = lang_of(request);
  std::optional<std::set<ViolationKind>> predicted;
  if (request.contains("predict")) {
    predicted = kinds_of(request["predict"], "predict");
    s.about.clear();  // as `run --predict` tells it
    drop_expectation(s);
  }
  RunOptions o;
  if (request.contains("seed")) o.seed = count_of(request, "seed", 1, ~std::uint64_t{0});
  o.keep_events = kWholeKeep;
  const RunResult r = run_scenario(s, o);
  json out = run_json(r, lang);
  if (predicted) {
    out["score"] = score_text(*predicted, r.verdict, lang);
    out["right"] = *predicted == r.verdict;
  }
  if (request.value("json", false)) {  // as `run --format json` writes it: its story from fewer events
    o.keep_events = kJsonKeep;
    out["json"] = json::parse(json_report(run_scenario(s, o)));
  }
  return out;
}

json quiz(const json& request) {
  const Scenario s = scenario_of(request);
  const Lang lang = lang_of(request);
  json kinds = json::array();
  for (ViolationKind k : kAllViolationKinds)
    kinds.push_back({{"kind", violation_name(k)}, {"words", kind_words(lang, k)}, {"help", kind_help(lang, k)}});
  return {{"setup", setup_text(s, lang)}, {"kinds", kinds}};
}

// The number a request moves and its value: an integer in the unit's base,
// or text as `sweep --set` takes it ("20s", "5%", "50000").
std::pair<std::string, std::int64_t> number_of(const json& request, const Scenario& s) {
  if (!request.contains("parameter") || !request["parameter"].is_string() || !request.contains("value"))
    throw ScenarioError("set: give \"parameter\" and \"value\"");
  const std::string parameter = request["parameter"].get<std::string>();
  const json& v = request["value"];
  if (v.is_number_integer()) return {parameter, v.get<std::int64_t>()};
  if (!v.is_string()) throw ScenarioError("set: " + v.dump() + " is not a value (write e.g. \"20s\")");
  const SweepAxis axis = parse_sweep_axis(s, parameter + "=" + v.get<std::string>());
  if (axis.values.size() != 1) throw ScenarioError("set: " + parameter + " takes one value, not " + v.dump());
  return {parameter, axis.values.front()};
}

json set(const json& request) {
  const auto [parameter, value] = number_of(request, scenario_of(request));
  return {{"toml", set_number(request["toml"].get<std::string>(), path_of(request), parameter, value)}};
}

ExploreOptions explore_options(const json& request) {
  ExploreOptions o;
  o.runs = count_of(request, "runs", o.runs, kMostRuns);
  o.seed = count_of(request, "seed", o.seed, ~std::uint64_t{0});
  o.max_faults = static_cast<int>(count_of(request, "max_faults", static_cast<std::uint64_t>(o.max_faults), 64));
  for (const json& name : request.value("faults", json::array())) {
    const auto kind = name.is_string() ? find_fault_kind(name.get<std::string>()) : std::nullopt;
    if (!kind || !fault_kind(*kind).draw)
      throw ScenarioError("faults: " + name.dump() + " is not a fault kind explore draws (" + fault_kind_names(", ", true) + ")");
    o.kinds.push_back(*kind);
  }
  return o;
}

json explore(const json& request, const ProgressSink& sink) {
  const Scenario base = scenario_of(request);
  const ExploreOptions o = explore_options(request);
  std::uint64_t told = 0;
  const Progress progress = [&](std::uint64_t done, std::uint64_t total, std::uint64_t violating) {
    if (!sink || (done != total && done * 100 / total == told * 100 / total)) return;  // about once a percent
    told = done;
    sink(text_of({{"done", done}, {"total", total}, {"violating", violating}}));
  };
  const ExploreSummary s = locksim::explore(base, o, progress);
  return {{"summary", json::parse(explore_json(base, o, s))},
          {"text", explore_text(base, o, s, lang_of(request))},
          {"as_expected", explore_as_expected(base, s)}};
}

json replay(const json& request) {
  const Scenario base = scenario_of(request);
  const Lang lang = lang_of(request);
  const ExploreOptions o = explore_options(request);
  const std::uint64_t seed = count_of(request, "run_seed", 1, ~std::uint64_t{0});
  const Scenario s = with_random_faults(base, seed, o);
  RunOptions ro;
  ro.max_events = o.max_events;
  ro.keep_events = kWholeKeep;
  RunResult r = run_scenario(s, ro);
  r.replay = explore_replay_command(base, o, seed);
  json out = run_json(r, lang);
  json faults = json::array();
  for (const FaultSpec& f : s.faults) faults.push_back(say(lang, describe_fault(f)));
  out["faults"] = faults;
  out["toml"] = to_toml(s);
  return out;
}

json shrink(const json& request, const ProgressSink& sink) {
  const Scenario base = scenario_of(request);
  const ExploreOptions o = explore_options(request);
  const std::uint64_t seed = count_of(request, "run_seed", 1, ~std::uint64_t{0});
  const std::set<ViolationKind> kind = kinds_of(json::array({request.value("kind", json())}), "kind");
  const Scenario failing = with_random_faults(base, seed, o);
  ShrinkResult r = locksim::shrink(failing, *kind.begin(), o.max_events, [&sink](int trials) {
    if (sink && trials % 10 == 0) sink(text_of({{"trials", trials}}));
  });
  tell_shrunk(r.scenario, failing);
  return {{"toml", to_toml(r.scenario)}, {"faults", r.scenario.faults.size()}, {"trials", r.trials}};
}

// One number over "values": each point run as the slider runs it (the
// scenario's own seed), judged; the strip under a slider.
json sweep(const json& request, const ProgressSink& sink) {
  const Scenario s = scenario_of(request);
  SweepAxis axis{.knob = knob_of(s, request.value("parameter", ""), "sweep")};
  for (const json& v : request.value("values", json::array())) {
    if (!v.is_number_integer()) throw ScenarioError("sweep: " + v.dump() + " is not a value in the number's unit");
    axis.values.push_back(v.get<std::int64_t>());
  }
  if (axis.values.empty() || axis.values.size() > kMaxSweepPoints)
    throw ScenarioError("sweep: give from 1 to " + std::to_string(kMaxSweepPoints) + " values");
  std::vector<Scenario> points;  // every point first: a value the loader refuses stops the sweep before any run
  for (std::size_t i = 0; i < axis.values.size(); ++i) points.push_back(sweep_point(s, {axis}, i, 0));
  json cells = json::array();
  for (std::size_t i = 0; i < points.size(); ++i) {
    RunOptions o;
    o.keep_events = 0;
    const RunResult r = run_scenario(points[i], o);
    cells.push_back({{"value", axis.values[i]}, {"verdict", kind_names(r.verdict)}});
    if (sink) sink(text_of({{"done", i + 1}, {"total", points.size()}}));
  }
  return {{"parameter", axis.knob.parameter}, {"cells", cells}};
}

// "scenarios/x.toml:12: ...": the line a message names, for the page to mark.
json line_of(const std::string& message, const std::string& path) {
  if (message.rfind(path + ":", 0) != 0) return nullptr;
  std::size_t at = path.size() + 1, end = at;
  while (end < message.size() && message[end] >= '0' && message[end] <= '9') ++end;
  if (end == at || end >= message.size() || message[end] != ':') return nullptr;
  return std::stoi(message.substr(at, end - at));
}

}  // namespace

std::string answer(std::string_view text, const ProgressSink& progress) {
  json request;
  try {
    request = json::parse(text);
    if (!request.is_object()) throw ScenarioError("a request is a JSON object");
    const std::string op = request.value("op", "");
    if (op == "describe") return text_of(describe(request));
    if (op == "run") return text_of(run(request));
    if (op == "quiz") return text_of(quiz(request));
    if (op == "set") return text_of(set(request));
    if (op == "explore") return text_of(explore(request, progress));
    if (op == "replay") return text_of(replay(request));
    if (op == "shrink") return text_of(shrink(request, progress));
    if (op == "sweep") return text_of(sweep(request, progress));
    throw ScenarioError("\"" + op + "\" is not a request the engine answers");
  } catch (const ScenarioError& e) {
    const std::string path = request.is_object() ? path_of(request) : "";
    return text_of({{"error", {{"message", e.what()}, {"line", line_of(e.what(), path)}}}});
  } catch (const json::exception& e) {
    return text_of({{"error", {{"message", std::string("the request: ") + e.what()}, {"line", nullptr}}}});
  } catch (const std::exception& e) {
    return text_of({{"error", {{"message", e.what()}, {"internal", true}}}});
  }
}

}  // namespace locksim::web
