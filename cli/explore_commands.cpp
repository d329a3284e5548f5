// locksim explore, merge and shrink: flags to options, the modes of explore
// (random runs, --replay, --exhaustive, --boundary, --matrix), and what each
// prints. JSON output is one JSON document on stdout and nothing else.
#include "cli/explore_commands.hpp"
#include "cli/choice.hpp"
#include "cli/exit_reason.hpp"
#include "cli/output_file.hpp"
#include "cli/lang.hpp"
#include "reports/words.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/explore.hpp"
#include "harness/explore_boundary.hpp"
#include "reports/boundary.hpp"
#include "harness/explore_exhaustive.hpp"
#include "reports/exhaustive_output.hpp"
#include "reports/explore_output.hpp"
#include "harness/faults/kind.hpp"
#include "harness/run.hpp"
#include "harness/scenario_writer.hpp"
#include "harness/shrink.hpp"
#include "reports/shrunk.hpp"
#include "reports/diagram.hpp"
#include "reports/report.hpp"
#include "reports/trace_jsonl.hpp"

namespace locksim::cli {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

// Interrupted by Ctrl-C: 128 + SIGINT, as a shell reports a process SIGINT ended.
constexpr int kExitInterrupted = 130;
// As `run` keeps them (main.cpp): the text story's events, a diagram's.
constexpr std::uint64_t kTextKeep = 250'000, kWholeKeep = 2'000'000;

bool use_colour() { return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr; }

struct ExploreArgs {
  std::string file;
  ExploreOptions options;
  std::string faults, shard, out, result;
  Format format = Format::Text;
  std::vector<std::string> matrix;
  std::string max_pause, max_jump, max_outage, liveness_window;
  std::optional<std::uint64_t> replay;
  std::string trace_path, svg_path, html_path;  // --replay's reports, as `run` writes them
  std::size_t arrows = DiagramOptions{}.max_arrows;
  bool exhaustive = false, no_prune = false;
  ExhaustiveOptions search;
  std::string lengths;  // --lengths
  std::string boundary;
  std::string from;     // shrink --from RESULT.json
  std::string lang;     // --replay's and shrink's words (cli/lang.hpp)
};

// The flags that shape a run's schedule: explore and shrink take them alike,
// so a replay command's flags can be given to shrink as they are.
void add_schedule_flags(CLI::App* cmd, ExploreArgs& a) {
  cmd->add_option("--max-pause", a.max_pause, "longest pause drawn (default 2 x the lease)");
  cmd->add_option("--max-jump", a.max_jump, "largest clock jump drawn, either way (default 2 x the lease)");
  cmd->add_option("--max-outage", a.max_outage, "longest partition, delay, drop window or crash drawn (default 2 x the lease)");
  cmd->add_option("--max-drift-ppm", a.options.max_drift_ppm, "largest clock drift drawn, either way (default 50000)");
  cmd->add_option("--faults", a.faults, "fault kinds to draw from, comma-separated (default: all; --exhaustive: pause,crash)");
  cmd->add_option("--max-faults", a.options.max_faults,
                  "faults per run, at most (default 4); 0 with --keep-faults: the scenario's own faults alone, seed after seed")
      ->check(CLI::Range(0, 64));
  cmd->add_option("--max-events", a.options.max_events, "event budget per run (default 2000000)");
  cmd->add_flag("--keep-faults", a.options.keep_faults, "keep the scenario's own faults as well");
  cmd->add_flag("--liveness", a.options.liveness,
                "after each run's faults, heal them all and check a fresh client gets the lock (reported apart from safety)");
  cmd->add_option("--liveness-window", a.liveness_window, "how long a wait with nobody holding the lock is stuck (default: [expect]'s, else 2 x the lease)");
}

Duration positive_duration(const std::string& flag, const std::string& text) {
  const auto d = parse_duration(text);
  if (duration_too_long(text))
    throw ScenarioError(flag + ": \"" + text + "\" is too long: the longest duration is " + longest_duration());
  if (!d || *d <= Duration::zero()) throw ScenarioError(flag + ": \"" + text + "\" is not a positive duration (write e.g. \"20s\")");
  return *d;
}

std::vector<FaultKind> kinds_of(const std::string& list, bool exhaustive) {
  std::vector<FaultKind> kinds;
  std::string rest = list;
  while (!rest.empty()) {
    const std::string name = rest.substr(0, rest.find(','));
    rest = rest.find(',') == std::string::npos ? "" : rest.substr(rest.find(',') + 1);
    const auto kind = find_fault_kind(name);
    const bool usable = kind && (exhaustive ? fault_kind(*kind).choices != nullptr : fault_kind(*kind).draw != nullptr);
    if (!usable)
      throw ScenarioError("--faults: \"" + name + "\" is not a fault kind explore " + (exhaustive ? "tries" : "draws") + " (" +
                          fault_kind_names(", ", true) + ")");
    kinds.push_back(*kind);
  }
  return kinds;
}

// The flags into the options (explore and shrink read them alike).
void apply_flags(ExploreArgs& a) {
  ExploreOptions& o = a.options;
  for (auto [flag, text, bound] : {std::tuple{"--max-pause", &a.max_pause, &o.max_pause},
                                   std::tuple{"--max-jump", &a.max_jump, &o.max_jump},
                                   std::tuple{"--max-outage", &a.max_outage, &o.max_outage},
                                   std::tuple{"--liveness-window", &a.liveness_window, &o.liveness_window}})
    if (!text->empty()) *bound = positive_duration(flag, *text);
  if (!a.faults.empty()) {
    if (a.exhaustive) a.search.kinds = kinds_of(a.faults, true);
    else o.kinds = kinds_of(a.faults, false);
  }
  std::string rest = a.lengths;
  while (!rest.empty()) {
    a.search.lengths.push_back(positive_duration("--lengths", rest.substr(0, rest.find(','))));
    rest = rest.find(',') == std::string::npos ? "" : rest.substr(rest.find(',') + 1);
  }
  a.search.prune = !a.no_prune;
  if (!a.shard.empty()) {
    const auto slash = a.shard.find('/');
    try {
      o.shard_index = std::stoull(a.shard.substr(0, slash)) - 1;
      o.shard_count = std::stoull(a.shard.substr(slash + 1));
    } catch (const std::exception&) {
      o.shard_count = 0;
    }
    if (slash == std::string::npos || o.shard_count == 0 || o.shard_index >= o.shard_count)
      throw ScenarioError("--shard: \"" + a.shard + "\" is not K/N with 1 <= K <= N");
  }
}

// One mode at a time, and the flags that go with it.
void check_modes(const ExploreArgs& a) {
  const int modes = !a.matrix.empty() + a.replay.has_value() + a.exhaustive + !a.boundary.empty();
  if (modes > 1) throw ScenarioError("explore: give one of --replay, --exhaustive, --boundary and --matrix");
  const bool reports = !a.svg_path.empty() || !a.html_path.empty() || !a.trace_path.empty();
  if (reports && !a.replay) throw ScenarioError("explore: --svg, --html and --trace tell one run: give --replay SEED");
  if (!a.lengths.empty() && !a.exhaustive) throw ScenarioError("explore: --lengths goes with --exhaustive");
  if (a.options.max_faults == 0 && !a.options.keep_faults)
    throw ScenarioError("explore: --max-faults 0 draws no fault: give --keep-faults too (the scenario's own faults, seed after seed)");
}

// Says whether every violation found is one the base scenario's [expect] allows.
bool allowed(const Scenario& base, const std::set<ViolationKind>& found) {
  if (!base.expect.present) return found.empty();
  return std::includes(base.expect.violations.begin(), base.expect.violations.end(), found.begin(), found.end());
}

// The kinds some run showed (a count above zero).
std::set<ViolationKind> kinds_found(const std::map<ViolationKind, std::uint64_t>& by_kind, bool stuck_after_heal = false) {
  std::set<ViolationKind> found;
  for (const auto& [k, n] : by_kind)
    if (n > 0) found.insert(k);
  if (stuck_after_heal) found.insert(ViolationKind::Stuck);
  return found;
}

// The exit status of a search of `base` and why, on stderr: 0, or 1 with
// the kinds found that its [expect] does not allow.
int search_status(std::string_view command, const Scenario& base, const std::set<ViolationKind>& found, bool ok, Lang lang = Lang::En,
                  bool one_run = false) {
  if (ok) return kExitOk;
  return exit_because(kExitUnexpected, command, not_allowed_words(lang, base, found, one_run));
}

// The progress bar (stderr, a terminal, text output only): the user's wall
// time, not the simulation's.
Progress progress_bar(const ExploreArgs& a) {
  if (a.format != Format::Text || !isatty(STDERR_FILENO)) return {};
  const auto started = std::chrono::steady_clock::now();
  return [started](std::uint64_t done, std::uint64_t total, std::uint64_t violating) {
    if (done % 50 != 0 && done != total) return;
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const double rate = secs > 0 ? static_cast<double>(done) / secs : 0.0;
    const double eta = rate > 0 && total > done ? static_cast<double>(total - done) / rate : 0.0;
    const int width = 30, filled = static_cast<int>(width * std::min(done, total) / std::max<std::uint64_t>(total, 1));
    std::cerr << "\r  [" << std::string(static_cast<std::size_t>(filled), '#') << std::string(static_cast<std::size_t>(width - filled), '.')
              << "] " << done << "/" << total << " runs, " << static_cast<std::uint64_t>(rate) << " runs/s, " << violating
              << " violating, ETA " << static_cast<std::uint64_t>(eta) << "s   " << std::flush;
    if (done == total) std::cerr << "\n";
  };
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Whole or absent (cli/output_file.hpp): a temporary renamed into place.
void write_file(const std::string& path, const std::string& text) { write_whole(path, text); }

// Ctrl-C during a random exploration: the first stops the runs (those under
// way finish) and the summary of the runs done is printed, marked partial;
// a second ends locksim at once, as SIGINT's default does.
std::atomic<bool> interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

// The handler before ours (main's: remove unfinished temporaries, then die).
void (*previous_interrupt)(int) = SIG_DFL;

extern "C" void on_interrupt(int) {
  interrupted = true;
  std::signal(SIGINT, previous_interrupt);
}

// Installs on_interrupt for the life of the object.
class InterruptGuard {
 public:
  InterruptGuard() {
    interrupted = false;
    previous_interrupt = std::signal(SIGINT, on_interrupt);
    if (previous_interrupt == SIG_ERR) previous_interrupt = SIG_DFL;
  }
  ~InterruptGuard() { std::signal(SIGINT, previous_interrupt); }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

// One shrunk scenario: a distinct schedule, and the kinds it was shrunk for
// (several when shrinking for each of them came to the same schedule).
struct Shrunk {
  std::vector<ViolationKind> wanted;  // in the order they were shrunk
  Scenario scenario;                  // its [expect]: every kind its run shows
  std::string text;                   // as written
  std::string path;
  int trials = 0;                     // simulations, for all its kinds
  std::string line(Lang lang = Lang::En) const {
    return say(lang, W::ShrunkLine,
               {{"kind", kinds_text(scenario.expect.violations, lang)},
                {"faults", say_count(lang, scenario.faults.size(), W::ShrinkFaultOne, W::ShrinkFaultMany)},
                {"runs", say_count(lang, static_cast<std::uint64_t>(trials), W::ShrinkRunOne, W::ShrinkRunMany)}, {"path", path}});
  }
  json to_json() const { return {{"path", path}, {"faults", scenario.faults.size()}, {"trials", trials}}; }
};

// Shrinks each failing run for its kind, and writes each distinct shrunk
// scenario once under `dir`, named by the kinds it shows
// (NAME-stale-write-lost-update-SEED.toml): shrunk for overlap, stale-write
// and lost-update, one schedule often shows all three, and three files that
// differ in nothing would be noise.
std::vector<Shrunk> write_shrunk(const std::vector<std::pair<Scenario, ViolationKind>>& failing, const ExploreOptions& o,
                                 const std::string& dir, const std::function<bool()>& stop = {}) {
  std::vector<Shrunk> out;
  for (const auto& [run, kind] : failing) {
    if (stop && stop()) break;
    ShrinkResult r = shrink(run, kind, o.max_events);
    tell_shrunk(r.scenario, run);
    std::string text = to_toml(r.scenario);
    const auto same = std::find_if(out.begin(), out.end(), [&](const Shrunk& s) { return s.text == text; });
    if (same != out.end()) {
      same->wanted.push_back(kind);
      same->trials += r.trials;
      continue;
    }
    std::string name = fs::path(run.path).stem().string();
    for (ViolationKind k : r.scenario.expect.violations) (name += '-') += violation_name(k);
    name += "-" + std::to_string(run.seed);
    std::string path = (fs::path(dir) / (name + ".toml")).string();
    for (int n = 2; std::any_of(out.begin(), out.end(), [&](const Shrunk& s) { return s.path == path; }); ++n)
      path = (fs::path(dir) / fmt::format("{}-{}.toml", name, n)).string();
    out.push_back({{kind}, std::move(r.scenario), std::move(text), std::move(path), r.trials});
  }
  if (!out.empty()) fs::create_directories(dir);
  for (const Shrunk& s : out) write_file(s.path, s.text);
  return out;
}

// --replay: one explored run, told in full, with every report `run` writes.
int cmd_replay(const Scenario& base, const ExploreArgs& a) {
  const ExploreOptions& o = a.options;
  const Lang lang = lang_flag(a.lang);
  const Scenario s = with_random_faults(base, *a.replay, o);
  RunOptions ro;
  ro.max_events = o.max_events;
  const bool whole = !a.svg_path.empty() || !a.html_path.empty();
  ro.keep_events = whole ? kWholeKeep : a.format == Format::Json ? 0 : kTextKeep;
  if (o.liveness) ro.liveness = liveness_window_of(base, o);
  std::optional<OutputFile> trace_out;  // renamed into place once the run has ended: whole or absent
  if (!a.trace_path.empty()) {
    trace_out.emplace(a.trace_path);
    ro.details = true;
    ro.listener = [&trace_out](const Trace& t, const TraceEvent& e) { write_event_jsonl(t, e, trace_out->stream()); };
  }
  RunResult r = run_scenario(s, ro);
  r.replay = explore_replay_command(base, o, *a.replay);
  if (trace_out) trace_out->commit();
  std::string written;
  if (!a.out.empty()) {
    fs::create_directories(a.out);
    written = (fs::path(a.out) / fmt::format("{}-seed-{}.toml", fs::path(base.path).stem().string(), *a.replay)).string();
    write_file(written, to_toml(s));
  }
  std::set<ViolationKind> found = r.verdict;
  if (r.liveness && r.liveness->stuck) found.insert(ViolationKind::Stuck);
  if (a.format == Format::Json) {
    json j = json::parse(json_report(r));
    json faults = json::array(), fired = json::array();
    for (std::size_t i = 0; i < s.faults.size(); ++i) {
      faults.push_back(say(Lang::En, describe_fault(s.faults[i])));  // JSON speaks English
      fired.push_back(r.faults[i].applied);
    }
    j["explore"] = {{"scenario", base.path}, {"run_seed", *a.replay}, {"faults", faults}, {"fired", fired}, {"allowed", allowed(base, found)}};
    if (r.liveness)
      j["explore"]["liveness"] = {{"stuck", r.liveness->stuck}, {"healed_at_ns", r.liveness->healed_at.ns()},
                                  {"window_ns", r.liveness->window.count_ns()}, {"detail", say(Lang::En, r.liveness->detail)}};
    if (!written.empty()) j["explore"]["written"] = written;
    std::cout << j.dump() << "\n";
  } else {
    std::cout << say(lang, W::ReplayHeader, {{"run", std::to_string(*a.replay)}, {"file", base.path}}) << "\n";
    for (std::size_t i = 0; i < s.faults.size(); ++i)
      std::cout << "  - " << fault_listing(lang, s.faults[i], r.faults[i], s.duration) << "\n";
    if (s.faults.empty()) std::cout << "  - " << say(lang, W::ReplayNoFault) << "\n";
    std::cout << "\n" << text_report(r, {.colour = use_colour(), .lang = lang});
    if (r.liveness)
      std::cout << say(lang, W::ReplayLiveness, {{"stuck", r.liveness->stuck ? say(lang, W::ReplayStuck) : ""},
                                                 {"detail", say(lang, r.liveness->detail)}})
                << "\n";
    if (!written.empty()) std::cout << say(lang, W::ReplayWritten, {{"path", written}}) << "\n";
  }
  for (auto [path, html] : {std::pair{a.svg_path, false}, std::pair{a.html_path, true}}) {
    if (path.empty()) continue;
    if (!r.world->trace().complete())
      std::cerr << "locksim: " << path << " shows the first " << r.world->trace().events().size() << " of " << r.stats.events
                << " events (a diagram of more would not be read)\n";
    DiagramOptions d;
    d.max_arrows = a.arrows;
    d.lang = lang;
    write_file(path, html ? html_report(r, d) : svg_diagram(r, d));
  }
  return search_status("explore", base, found, allowed(base, found), lang, true);
}

int cmd_boundary(const Scenario& base, const ExploreArgs& a) {
  const BoundaryResult b = find_boundary(base, a.boundary, a.options.max_events);
  std::vector<std::string> written;
  if (!a.out.empty() && b.found()) {
    fs::create_directories(a.out);
    // NAME-lower-below.toml, NAME-lower-above.toml, and the same for the upper edge.
    for (const auto& [edge, edge_name] : {std::pair{&b.lower, "lower"}, std::pair{&b.upper, "upper"}}) {
      if (!*edge) continue;
      for (const auto& [side, name] : {std::pair{&(*edge)->below, "below"}, std::pair{&(*edge)->above, "above"}}) {
        Scenario s = side->scenario;
        s.expect.present = true;
        s.expect.violations = side->verdict;
        s.title = fmt::format("{} ({} = {}, {} the {} boundary)", base.title, a.boundary, format_duration(side->value), name,
                              edge_name);
        written.push_back(
            (fs::path(a.out) / fmt::format("{}-{}-{}.toml", fs::path(base.path).stem().string(), edge_name, name)).string());
        write_file(written.back(), to_toml(s));
      }
    }
  }
  if (a.format == Format::Json) {
    json j = json::parse(boundary_json(base, b));
    j["written"] = written;
    std::cout << j.dump() << "\n";
  } else {
    const Lang lang = lang_flag(a.lang);
    std::cout << boundary_text(base, b, lang);
    for (const std::string& w : written) std::cout << "  " << say(lang, W::BoundaryWritten, {{"path", w}}) << "\n";
  }
  return kExitOk;
}

int cmd_exhaustive(const Scenario& base, const ExploreArgs& a) {
  const Lang lang = lang_flag(a.lang);
  const ExploreOptions& o = a.options;
  const auto started = std::chrono::steady_clock::now();
  const ExhaustiveSummary s = explore_exhaustive(base, o, a.search, progress_bar(a));
  const double secs = seconds_since(started);
  ExhaustiveOptions shown = a.search;
  json found = json::object();
  if (!a.out.empty() && !s.first.empty()) {
    fs::create_directories(a.out);
    // One file per distinct schedule, named by every kind it shows: the first
    // finding of two kinds is often one schedule.
    std::map<std::string, std::string> written;  // text -> path
    for (const auto& [kind, f] : s.first) {
      const Scenario found_run = exhaustive_scenario(base, o, f, kind);
      const std::string text = to_toml(found_run);
      auto [at, fresh] = written.try_emplace(text);
      if (fresh) {
        std::string name = fs::path(base.path).stem().string() + "-exhaustive";
        for (ViolationKind k : found_run.expect.violations) (name += '-') += violation_name(k);
        std::string path = (fs::path(a.out) / (name + ".toml")).string();
        const auto taken = [&] { return std::any_of(written.begin(), written.end(), [&](const auto& w) { return w.second == path; }); };
        for (int n = 2; taken(); ++n) path = (fs::path(a.out) / fmt::format("{}-{}.toml", name, n)).string();
        at->second = path;
        write_file(at->second, text);
      }
      found[std::string(violation_name(kind))] = at->second;
    }
  }
  std::string result = a.result;
  if (result.empty() && o.shard_count > 1)
    result = fmt::format("{}.exhaustive-shard-{}-of-{}.json", fs::path(base.path).stem().string(), o.shard_index + 1, o.shard_count);
  if (!result.empty()) write_file(result, exhaustive_json(base, o, shown, s) + "\n");
  if (a.format == Format::Json) {
    json j = json::parse(exhaustive_json(base, o, shown, s));
    j["seconds"] = secs;
    if (!found.empty()) j["written"] = found;
    std::cout << j.dump() << "\n";
  } else {
    std::cout << exhaustive_text(base, o, shown, s, lang);
    std::cout << "  " << say(lang, W::ExhRunsIn, {{"runs", say_count(lang, s.total(), W::ShrinkRunOne, W::ShrinkRunMany)},
                                                  {"secs", fmt::format("{:.1f}", secs)}}) << "\n";
    std::map<std::string, std::string> kinds_of;  // path -> the kinds whose first finding it is
    for (const auto& [kind, path] : found.items()) {
      std::string& k = kinds_of[path.get<std::string>()];
      k += (k.empty() ? "" : ", ") + kind;
    }
    for (const auto& [path, kinds] : kinds_of) std::cout << "  " << say(lang, W::ExhWritten, {{"kinds", kinds}, {"path", path}}) << "\n";
    if (!result.empty()) std::cout << "\n  " << say(lang, W::ExploreResultWritten, {{"path", result}}) << "\n";
  }
  return search_status("explore", base, kinds_found(s.by_kind), exhaustive_as_expected(base, s), lang_flag(a.lang));
}

int cmd_explore(ExploreArgs a) {
  const Lang lang = lang_flag(a.lang);  // an unknown --lang is refused whatever the mode
  const Scenario base = load_scenario(a.file);
  apply_flags(a);
  check_modes(a);
  const ExploreOptions& o = a.options;
  if (!a.matrix.empty()) {
    std::cout << matrix_text(base, o, explore_matrix(base, o, a.matrix), lang);
    return kExitOk;
  }
  if (a.replay) return cmd_replay(base, a);
  if (!a.boundary.empty()) return cmd_boundary(base, a);
  if (a.exhaustive) return cmd_exhaustive(base, a);

  const InterruptGuard guard;
  ExploreOptions stoppable = o;
  stoppable.stop = [] { return interrupted.load(); };
  const ExploreSummary summary = explore(base, stoppable, progress_bar(a));
  if (summary.partial && isatty(STDERR_FILENO)) std::cerr << "\n  interrupted: the summary of the runs done follows\n";
  std::string result = a.result;
  if (result.empty() && o.shard_count > 1)
    result = fmt::format("{}.shard-{}-of-{}.json", fs::path(base.path).stem().string(), o.shard_index + 1, o.shard_count);
  if (!result.empty()) write_file(result, explore_json(base, o, summary) + "\n");
  std::vector<Shrunk> shrunk;
  if (!a.out.empty()) {
    std::vector<std::pair<Scenario, ViolationKind>> failing;
    for (const auto& [kind, run] : summary.first) failing.emplace_back(with_random_faults(base, run.seed, o), kind);
    // Each file written is whole; the kinds not yet shrunk when Ctrl-C comes are not started.
    shrunk = write_shrunk(failing, o, a.out, [] { return interrupted.load(); });
  }
  std::size_t kinds_shrunk = 0;
  for (const Shrunk& s : shrunk) kinds_shrunk += s.wanted.size();
  if (a.format == Format::Json) {
    json j = json::parse(explore_json(base, o, summary));
    if (!shrunk.empty()) {
      j["shrunk"] = json::object();
      for (const Shrunk& s : shrunk)
        for (ViolationKind k : s.wanted) j["shrunk"][std::string(violation_name(k))] = s.to_json();
    }
    std::cout << j.dump() << "\n";
  } else {
    std::cout << explore_text(base, o, summary, lang);
    if (!result.empty()) std::cout << "\n  " << say(lang, W::ExploreResultWritten, {{"path", result}}) << "\n";
    if (!shrunk.empty()) std::cout << "\n" << say(lang, W::ExploreShrinking) << "\n";
    for (const Shrunk& s : shrunk) std::cout << s.line(lang);
    if (interrupted && !a.out.empty() && kinds_shrunk < summary.first.size())
      std::cout << "  " << say(lang, W::ExploreNotShrunk) << "\n";
  }
  std::cout << std::flush;
  if (interrupted) return exit_because(kExitInterrupted, "explore", say(lang, W::ExitInterrupted, {{"n", std::to_string(summary.runs)}}));
  if (summary.internal_errors)
    return exit_because(kExitBug, "explore", say(lang, W::ExitBug, {{"n", std::to_string(summary.internal_errors)}}));
  return search_status("explore", base, kinds_found(summary.by_kind, summary.stuck_after_heal > 0), explore_as_expected(base, summary), lang);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ScenarioError(path + ": cannot read the file");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int cmd_merge(const std::vector<std::string>& files, Format format, const std::string& lang_name) {
  const Lang lang = lang_flag(lang_name);
  std::vector<std::string> texts;
  for (const std::string& f : files) texts.push_back(read_file(f));
  // The scenario, for what its [expect] allows and its lease (a missing file: allow nothing).
  auto scenario_at = [](const std::string& path) {
    try {
      return load_scenario(path);
    } catch (const ScenarioError&) {
      Scenario named;
      named.path = path;
      named.lock.algorithm = "(merged)";
      return named;
    }
  };
  std::vector<std::uint64_t> missing;
  bool ok = true;
  std::set<ViolationKind> found;
  Scenario base;
  if (!texts.empty() && is_exhaustive_result(texts.front())) {
    const MergedExhaustive m = merge_exhaustive(texts, files);
    base = scenario_at(m.scenario_path);
    std::cout << (format == Format::Json ? exhaustive_json(base, m.options, m.exhaustive, m.summary) + "\n"
                                   : exhaustive_text(base, m.options, m.exhaustive, m.summary, lang));
    missing = m.missing_shards;
    ok = exhaustive_as_expected(base, m.summary);
    found = kinds_found(m.summary.by_kind);
  } else {
    const Merged m = merge_results(texts, files);
    base = scenario_at(m.scenario_path);
    std::cout << (format == Format::Json ? explore_json(base, m.options, m.summary) + "\n" : explore_text(base, m.options, m.summary, lang));
    missing = m.missing_shards;
    ok = explore_as_expected(base, m.summary);
    found = kinds_found(m.summary.by_kind, m.summary.stuck_after_heal > 0);
  }
  if (!missing.empty()) {
    std::string shards;
    for (auto k : missing) shards += (shards.empty() ? "" : ", ") + std::to_string(k);
    const std::string why = say(lang, W::MergeShardsMissing, {{"shards", shards}}) + (ok ? "" : "; " + not_allowed_words(lang, base, found));
    return exit_because(kExitUnexpected, "merge", why);
  }
  return search_status("merge", base, found, ok, lang);
}

// "--faults pause,crash --max-faults 2": the schedule-shaping flags given.
std::string flags_given(const ExploreArgs& a, Lang lang) {
  const std::string cmd = explore_replay_command(Scenario{}, a.options, 0);
  const std::string tail = cmd.substr(cmd.find("--replay 0") + 10);
  return tail.empty() ? say(lang, W::ShrinkDefaultOptions) : tail.substr(1);
}

// `locksim shrink FILE --seed N [flags]`, or `--from RESULT.json`: explored
// runs, shrunk for each kind they show.
int cmd_shrink(ExploreArgs a, std::optional<std::uint64_t> seed) {
  const Lang lang = lang_flag(a.lang);
  apply_flags(a);
  std::vector<std::pair<std::uint64_t, std::set<ViolationKind>>> runs;  // seeds, and the kinds to shrink each for
  if (!a.from.empty()) {
    const Merged m = merge_results({read_file(a.from)}, {a.from});
    if (!a.file.empty() && a.file != m.scenario_path)
      throw ScenarioError("shrink: " + a.from + " explored " + m.scenario_path + ", not " + a.file);
    a.file = m.scenario_path;
    a.options = m.options;
    for (const auto& [kind, run] : m.summary.first)
      if (!seed || run.seed == *seed) runs.push_back({run.seed, {kind}});
    if (runs.empty()) {
      const std::string why = say(lang, W::ShrinkNoFailingRun,
                                  {{"file", a.from}, {"seed", seed ? say(lang, W::ShrinkWithSeed, {{"seed", std::to_string(*seed)}}) : ""}});
      std::cout << why;
      return exit_because(kExitUnexpected, "shrink", why.substr(0, why.size() - 1));
    }
  } else if (!seed || a.file.empty()) {
    throw ScenarioError("shrink: give FILE --seed RUNSEED (with the flags explore ran with), or --from RESULT.json");
  } else {
    runs.push_back({*seed, {}});
  }
  const Scenario base = load_scenario(a.file);
  const std::string dir = a.out.empty() ? "found" : a.out;
  std::vector<std::pair<Scenario, ViolationKind>> failing;
  for (const auto& [run, kinds] : runs) {
    const Scenario failing_run = with_random_faults(base, run, a.options);
    RunOptions ro;
    ro.max_events = a.options.max_events;
    ro.keep_events = 0;
    const RunResult r = run_scenario(failing_run, ro);
    if (r.verdict.empty()) {
      std::cout << say(lang, W::ShrinkNoViolation, {{"seed", std::to_string(run)}, {"file", a.file}, {"flags", flags_given(a, lang)}});
      continue;
    }
    for (ViolationKind k : r.verdict)
      if (kinds.empty() || kinds.count(k)) failing.emplace_back(failing_run, k);
  }
  const std::vector<Shrunk> shrunk = write_shrunk(failing, a.options, dir);
  for (const Shrunk& s : shrunk) std::cout << s.line(lang);
  if (shrunk.empty()) return exit_because(kExitUnexpected, "shrink", say(lang, W::ExitNothingShrunk, {{"file", a.file}}));
  return kExitOk;
}

}  // namespace

std::function<std::optional<int>()> add_explore_commands(CLI::App& app) {
  auto explore_args = std::make_shared<ExploreArgs>();
  ExploreArgs& e = *explore_args;
  auto* explore_cmd = app.add_subcommand("explore", "run a scenario under random fault schedules, seed after seed");
  explore_cmd->add_option("file", e.file, "scenario file (its topology, algorithm and clients)")->required();
  explore_cmd->add_option("--runs", e.options.runs, "how many runs (default 1000)");
  explore_cmd->add_option("--seed", e.options.seed, "base seed: run i has its own seed drawn from it (default 1)");
  add_schedule_flags(explore_cmd, e);
  explore_cmd->add_option("--jobs", e.options.jobs, "parallel simulations (default 1)")->check(CLI::Range(1, 256));
  explore_cmd->add_option("--shard", e.shard, "K/N: run only the K-th of N disjoint slices of the runs (or schedules)");
  add_format_option(*explore_cmd, e.format);
  explore_cmd->add_option("--replay", e.replay, "tell one run in full, by its run seed (as the summary prints it)");
  explore_cmd->add_option("--trace", e.trace_path, "with --replay: write every event as JSON Lines to PATH");
  explore_cmd->add_option("--svg", e.svg_path, "with --replay: write the space-time diagram to PATH");
  explore_cmd->add_option("--html", e.html_path, "with --replay: write the diagram, story and verdict as one page");
  explore_cmd->add_option("--arrows", e.arrows, "with --replay: draw at most this many message arrows (default 400)");
  add_lang_option(*explore_cmd, e.lang);
  explore_cmd->add_option("--out", e.out,
                          "shrink the first failing run of each kind and write it there as a scenario "
                          "(--replay: the run; --exhaustive: each first finding; --boundary: both sides)");
  explore_cmd->add_option("--matrix", e.matrix, "the same runs for each ALGORITHM or ALGORITHM:FLAVOUR (comma-separated): one table")
      ->delimiter(',');
  explore_cmd->add_option("--result", e.result, "also write the JSON result to PATH (with --shard: by default NAME.shard-K-of-N.json)");
  explore_cmd->add_flag("--exhaustive", e.exhaustive, "every schedule of up to --depth faults over the fault-free run's events");
  explore_cmd->add_option("--depth", e.search.depth, "--exhaustive: faults per schedule, at most (default 2)")->check(CLI::Range(1, 4));
  explore_cmd->add_option("--lengths", e.lengths, "--exhaustive: the lengths tried, comma-separated (default: around the scenario's constants)");
  explore_cmd->add_option("--window", e.search.window, "--exhaustive: a fault within this many events of the one before (default: any)");
  explore_cmd->add_flag("--no-prune", e.no_prune, "--exhaustive: explore states already explored again");
  explore_cmd->add_option("--boundary", e.boundary, "where the verdict flips as this number moves: " + boundary_parameters());

  auto merge_files = std::make_shared<std::vector<std::string>>();
  auto merge_format = std::make_shared<Format>(Format::Text);
  auto* merge_cmd = app.add_subcommand("merge", "combine explore --shard results into the summary of the whole");
  merge_cmd->add_option("files", *merge_files, "the shards' result files")->required();
  add_format_option(*merge_cmd, *merge_format);
  auto merge_lang = std::make_shared<std::string>();
  add_lang_option(*merge_cmd, *merge_lang);

  auto shrink_args = std::make_shared<ExploreArgs>();
  auto shrink_seed = std::make_shared<std::optional<std::uint64_t>>();
  auto* shrink_cmd = app.add_subcommand("shrink", "shrink an explored run to the smallest scenario that fails the same way");
  shrink_cmd->add_option("file", shrink_args->file, "the scenario explored");
  shrink_cmd->add_option("--seed", *shrink_seed, "the run seed (as explore prints it)");
  shrink_cmd->add_option("--from", shrink_args->from, "an explore JSON result: its scenario, options and first failing runs");
  add_schedule_flags(shrink_cmd, *shrink_args);
  shrink_cmd->add_option("--out", shrink_args->out, "directory for the scenario files (default found/)");
  add_lang_option(*shrink_cmd, shrink_args->lang);

  return [=]() -> std::optional<int> {
    if (*explore_cmd) return cmd_explore(*explore_args);
    if (*merge_cmd) return cmd_merge(*merge_files, *merge_format, *merge_lang);
    if (*shrink_cmd) return cmd_shrink(*shrink_args, *shrink_seed);
    return std::nullopt;
  };
}

}  // namespace locksim::cli
