// locksim: the command line (product.md, "The command line").
// Exit status: 0 as expected, 1 not as expected, 2 bad input or usage, 3 a bug in locksim.
// (`run --ignore-expect`: 0 no violation, 1 some; `run --predict`: 0 the prediction was right, 1 not.)
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/choice.hpp"
#include "cli/exit_reason.hpp"
#include "cli/diff_etcd_command.hpp"
#include "cli/explore_commands.hpp"
#include "cli/lang.hpp"
#include "cli/live_commands.hpp"
#include "cli/matrix_command.hpp"
#include "cli/new_scenario.hpp"
#include "cli/numbers.hpp"
#include "cli/output_file.hpp"
#include "cli/progress.hpp"
#include "reports/quiz.hpp"
#include "cli/sweep_commands.hpp"
#include "cli/version.hpp"
#include "harness/faults.hpp"
#include "harness/run.hpp"
#include "lockalgos/libraries.hpp"
#include "lockalgos/registry.hpp"
#include "reports/diagram.hpp"
#include "reports/report.hpp"
#include "reports/trace_jsonl.hpp"
#include "reports/words.hpp"

using namespace locksim;
namespace fs = std::filesystem;

namespace {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  return fmt::format("{}", fmt::join(parts, separator));
}

bool use_colour() { return isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr; }

// The first event where two runs of the same scenario and seed differ.
std::string first_divergence(const Trace& a, const Trace& b) {
  const auto& ea = a.events();
  const auto& eb = b.events();
  for (std::size_t i = 0; i < std::min(ea.size(), eb.size()); ++i) {
    const std::string la = a.line(ea[i]), lb = b.line(eb[i]);
    if (la != lb) return "event " + std::to_string(i) + ":\n  run 1: " + la + "\n  run 2: " + lb;
  }
  if (ea.size() != eb.size())
    return "run 1 has " + std::to_string(ea.size()) + " events, run 2 has " + std::to_string(eb.size());
  return "";
}

struct RunArgs {
  std::vector<std::string> files;
  std::optional<std::uint64_t> seed;
  Format format = Format::Text;
  std::string trace_path;
  std::string svg_path, html_path;
  std::size_t arrows = DiagramOptions{}.max_arrows;
  bool check_determinism = false;
  bool full = false;
  AxisChoice axis = AxisChoice::Auto;
  std::string slides_path;
  bool ignore_expect = false;           // judge the verdict alone: a changed copy has no stale [expect]
  bool quiz = false;                    // course mode: the set-up and a question, no spoilers
  std::optional<std::string> predict;   // course mode: the student's answer, scored against the run
  std::string lang;                     // --lang: the words' language (lang_flag)
};

// `--quiz`: tell the set-up and ask. The prediction comes from --predict, or
// from the student at a terminal; otherwise the command that reveals the run
// is printed and nothing runs (nullopt).
std::optional<std::set<ViolationKind>> quiz_prediction(const Scenario& s, const RunArgs& a, Lang lang) {
  std::string error;
  if (a.predict) {
    auto p = parse_prediction(*a.predict, error);
    if (!p) throw ScenarioError("--predict: " + error);
    return p;
  }
  std::cout << setup_text(s, lang) << prediction_question(lang);
  if (isatty(STDIN_FILENO)) {
    for (std::string line;;) {
      std::cout << say(lang, W::QuizAsk) << std::flush;
      if (!std::getline(std::cin, line)) break;
      if (auto p = parse_prediction(line, error)) {
        std::cout << "\n";
        return p;
      }
      std::cout << error << "\n";
    }
    std::cout << "\n";
  }
  const std::string reveal = "locksim run " + s.path + (a.seed ? " --seed " + std::to_string(*a.seed) : "") +
                             (a.lang.empty() ? "" : " --lang " + a.lang) + " --predict KINDS";
  std::cout << say(lang, W::QuizReveal, {{"command", reveal}});
  return std::nullopt;
}

// How many events `run` keeps for its text story: the story of a long run is
// told from its beginning; the verdict always judges every event.
constexpr std::uint64_t kTextKeep = 250'000;
// The JSON report's story is told from fewer (every catalogue scenario's
// whole story fits), so that a long run's JSON stays small and fast.
constexpr std::uint64_t kJsonKeep = 20'000;
// A diagram or a determinism check reads every event, up to this many (about
// 300 MiB); past it a diagram shows the beginning, and the determinism check
// compares the events kept and the hash of them all.
constexpr std::uint64_t kWholeKeep = 2'000'000;

int cmd_run(const RunArgs& a) {
  int status = kExitOk;
  std::vector<std::string> why;  // each file's reason for exit 1
  const Lang lang = lang_flag(a.lang);
  if ((a.quiz || a.predict) && a.format == Format::Json)
    throw ScenarioError("--quiz and --predict tell a person the run; use them without --format json");
  for (const std::string& file : a.files) {
    Scenario s = load_scenario(file);
    std::optional<std::set<ViolationKind>> predicted;
    if (a.quiz || a.predict) {
      if (a.files.size() > 1 && file != a.files.front()) std::cout << "\n";
      predicted = quiz_prediction(s, a, lang);
      if (!predicted) continue;
      s.about.clear();
    }
    if (a.ignore_expect || predicted) drop_expectation(s);
    RunOptions opts;
    opts.seed = a.seed;
    // Keep only the events a report will read: a diagram or a determinism
    // check needs them all, the text story its beginning, JSON's story less.
    const bool whole = !a.svg_path.empty() || !a.html_path.empty() || !a.slides_path.empty() || a.check_determinism;
    opts.keep_events = whole ? kWholeKeep : a.format == Format::Json ? kJsonKeep : kTextKeep;
    std::optional<OutputFile> trace_out;  // renamed into place once the run has ended: whole or absent
    if (!a.trace_path.empty()) {
      std::string path = a.trace_path;
      if (a.files.size() > 1) path += "." + fs::path(file).stem().string() + ".jsonl";
      trace_out.emplace(path);
      opts.details = true;
      opts.listener = [out = &trace_out->stream()](const Trace& t, const TraceEvent& e) { write_event_jsonl(t, e, *out); };
    }
    std::optional<RunProgress> progress;
    if (progress_wanted()) {
      progress.emplace(std::cerr, s.duration, a.files.size() > 1 ? fs::path(file).filename().string() : "", progress_delay());
      opts.listener = [&progress, write = std::move(opts.listener)](const Trace& t, const TraceEvent& e) {
        if (write) write(t, e);
        progress->on_event(e.at);
      };
    }
    RunResult r = run_scenario(s, opts);
    if (progress) progress->finish();
    opts.listener = nullptr;
    opts.details = false;
    if (a.format == Format::Json) std::cout << json_report(r) << "\n";
    else std::cout << text_report(r, {.colour = use_colour(), .full = a.full, .lang = lang}) << (a.files.size() > 1 ? "\n" : "");
    if (trace_out) trace_out->commit();
    enum Picture { Svg, Html, Slides };
    for (auto [path, kind] : {std::pair{a.svg_path, Svg}, std::pair{a.html_path, Html}, std::pair{a.slides_path, Slides}}) {
      if (path.empty()) continue;
      if (!r.world->trace().complete())
        std::cerr << "locksim: " << path << " shows the first " << r.world->trace().events().size() << " of "
                  << r.stats.events << " events (a diagram of more would not be read); shorten the run to see its end\n";
      const bool png = kind == Slides && fs::path(path).extension() == ".png";
      if (a.files.size() > 1) path += "." + fs::path(file).stem().string() + (kind == Html ? ".html" : png ? ".png" : ".svg");
      DiagramOptions d;
      d.max_arrows = a.arrows;
      d.lang = lang;
      d.axis = a.axis;
      if (kind == Slides) {
        d.slides = true;
        d.width = 1500;
      }
      const std::string picture = kind == Html ? html_report(r, d) : svg_diagram(r, d);
      if (png) {
        write_png(picture, path);
        continue;
      }
      write_whole(path, picture);
    }
    if (a.check_determinism) {
      RunResult again = run_scenario(s, opts);
      const std::string diff = first_divergence(r.world->trace(), again.world->trace());
      if (!diff.empty() || again.trace_hash != r.trace_hash) {
        std::cout << "NOT deterministic: the second run diverged at " << diff << "\n";
        status = std::max(status, kExitUnexpected);
        why.push_back(say(lang, W::ExitNotDeterministic, {{"file", file}}));
      } else {
        std::cout << "deterministic: a second run gave the same " << r.stats.events << " events (trace "
                  << r.trace_hash << ")\n";
      }
    }
    if (predicted) std::cout << "\n" << score_text(*predicted, r.verdict, lang) << say(lang, W::QuizAbout, {{"file", file}});
    const bool ok = predicted ? *predicted == r.verdict : r.as_expected();
    if (ok) continue;
    status = std::max(status, kExitUnexpected);
    const std::string found = kinds_text(r.verdict, lang);
    if (predicted)
      why.push_back(say(lang, W::ExitPrediction, {{"file", file}, {"predicted", kinds_text(*predicted, lang)}, {"found", found}}));
    else if (a.ignore_expect)
      why.push_back(say(lang, W::ExitViolations, {{"file", file}, {"found", found}}));
    else if (!s.expect.present)
      why.push_back(not_allowed_words(lang, s, r.verdict, true));
    else
      why.push_back(say(lang, W::ExitNotAsExpected, {{"file", file}, {"found", found}, {"expected", kinds_text(s.expect.violations, lang)}}));
  }
  if (status != kExitOk) return exit_because(status, "run", join(why, "; "));
  return status;
}

std::vector<std::string> scenario_files(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& a : args) {
    if (fs::is_directory(a)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(a))
        if (e.is_regular_file() && e.path().extension() == ".toml") found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      files.push_back(a);
    }
  }
  return files;
}

int cmd_check(const std::vector<std::string>& args, Format format, const std::string& lang_option) {
  const Lang lang = lang_flag(lang_option);
  const std::vector<std::string> files = scenario_files(args);
  int ok = 0, failed = 0, bad = 0;
  std::vector<std::string> failed_files, bad_files;
  for (const std::string& file : files) {
    try {
      const Scenario s = load_scenario(file);
      RunOptions keep_none;
      keep_none.keep_events = 0;
      RunResult r = run_scenario(s, keep_none);
      if (format == Format::Json) std::cout << json_report(r) << "\n";
      else std::cout << check_line(r, lang) << "\n";
      (r.as_expected() ? ok : failed)++;
      if (!r.as_expected()) failed_files.push_back(file);
    } catch (const ScenarioError& e) {
      std::cout << "BAD  " << e.what() << "\n";
      ++bad;
      bad_files.push_back(file);
    }
  }
  if (format != Format::Json)
    std::cout << "\n" << check_summary(lang, files.size(), ok, failed, bad) << "\n";
  if (files.empty()) return exit_because(kExitBadInput, "check", "no scenario files found in " + join(args, ", "));
  const std::string scenarios = say_count(lang, files.size(), W::ScenarioOne, W::ScenarioMany);
  if (bad)
    return exit_because(kExitBadInput, "check",
                        say(lang, W::ExitCheckBad, {{"n", std::to_string(bad)}, {"scenarios", scenarios}, {"files", join(bad_files, ", ")}}));
  if (failed)
    return exit_because(kExitUnexpected, "check",
                        say(lang, W::ExitCheckFailed, {{"n", std::to_string(failed)}, {"scenarios", scenarios}, {"files", join(failed_files, ", ")}}));
  return kExitOk;
}

int cmd_list() {
  std::cout << "Algorithms ([lock] algorithm = ...):\n";
  for (const AlgorithmInfo& a : algorithms()) {
    std::cout << "  " << a.name << " — " << a.help << "\n";
    std::cout << "      source: " << a.source << "\n";
    std::cout << "      ttl: " << (a.needs_ttl ? "required" : a.takes_ttl ? "optional" : "none (no expiry)")
              << "; fencing tokens: " << (a.monotonic_token ? "yes" : "no (random values only)") << "\n";
    for (const OptionInfo& f : a.flavours) std::cout << "      flavour " << f.key << ": " << f.help << "\n";
    for (const OptionInfo& o : a.options) std::cout << "      " << o.key << ": " << o.help << "\n";
  }
  std::cout << "\nLibraries ([lock] library = ..., which chooses the algorithm and its flavour):\n";
  for (const LibraryInfo& l : libraries()) {
    std::cout << "  " << l.id << " — " << l.help << "\n";
    std::cout << "      models: " << l.algorithm << (l.flavour.empty() ? "" : ", flavour " + std::string(l.flavour))
              << "; code: " << l.origin << "\n";
    for (const LibraryOption& o : l.options) std::cout << "      [[client]] " << o.key << ": " << o.help << "\n";
    for (const LibraryCheckInfo& k : l.checks) std::cout << "      check = \"" << k.name << "\": " << k.help << "\n";
  }
  std::cout << "\nFault kinds ([[fault]] kind = ...):\n";
  for (const FaultKindInfo* k : fault_kinds()) std::cout << fmt::format("  {:<12} {}\n", k->name, k->help);
  std::cout << "\nViolation kinds ([expect] violations = [...]):\n";
  for (ViolationKind k : kAllViolationKinds)
    std::cout << "  " << std::string(violation_name(k)) << std::string(16 - violation_name(k).size(), ' ')
              << kind_help(Lang::En, k) << "\n";
  std::cout << "\nEvents a fault can wait for (on = \"<process> <event>[#N]\"):\n  ";
  for (int i = 0; i <= static_cast<int>(kLastEvent); ++i)
    if (fault_may_wait_for(static_cast<Ev>(i))) std::cout << event_name(static_cast<Ev>(i)) << " ";
  std::cout << "\n";
  return kExitOk;
}

// run's flags that decide what the run is judged against: [expect], nothing, or a student's prediction.
void add_judging_flags(CLI::App& run_cmd, RunArgs& run) {
  run_cmd.add_flag("--ignore-expect", run.ignore_expect,
                   "report the verdict alone, not against [expect] (exit 0: no violation, 1: some); for a changed copy");
  run_cmd.add_flag("--quiz,--no-spoilers", run.quiz,
                   "course mode: show the set-up without the story or expected verdict and ask for a prediction "
                   "(asked at a terminal; otherwise it prints the command that reveals the run)");
  run_cmd.add_option("--predict", run.predict,
                     "course mode: KINDS (comma-separated, or none) predicted; run, tell, and score the prediction (exit 0: right)");
}

struct NewArgs {
  std::string algorithm = "redis-single";
  std::string out;  // "" or "-": stdout
};

CLI::App* add_new_command(CLI::App& app, NewArgs& a) {
  auto* cmd = app.add_subcommand("new", "write a commented starting scenario for an algorithm");
  cmd->add_option("algorithm", a.algorithm, "an algorithm of `locksim list` (default redis-single)");
  cmd->add_option("-o,--output", a.out, "write it to FILE instead of stdout (an existing file is left alone)");
  return cmd;
}

// `locksim new [ALGORITHM] [-o FILE]`: a starting scenario; an existing FILE is left alone.
int cmd_new(const NewArgs& a) {
  const std::string& name = a.algorithm;
  const std::string& out = a.out;
  const AlgorithmInfo* algorithm = find_algorithm(name);
  if (!algorithm) {
    std::vector<std::string> names;
    for (const AlgorithmInfo& a : algorithms()) names.emplace_back(a.name);
    const auto best = closest_name(name, names);
    throw ScenarioError("new: \"" + name + "\" is not an algorithm (" + (best ? "did you mean \"" + *best + "\"? " : "") +
                        "known: " + join(names, ", ") + ")");
  }
  const std::string text = new_scenario(*algorithm);
  if (out.empty() || out == "-") {
    std::cout << text;
    return kExitOk;
  }
  if (fs::exists(out)) throw ScenarioError(out + ": exists already; not overwritten (remove it, or name another file)");
  write_whole(out, text);
  std::cout << "wrote " << out << " (" << name << "); run it: locksim run " << out << "\n";
  return kExitOk;
}

// "locksim 0.1.0 (commit 84eb3c1a9f0e)", and where an installed catalogue is.
std::string version_text() {
  std::string text = "locksim " + std::string(kVersion);
  if (!kCommit.empty()) text += " (commit " + std::string(kCommit) + ")";
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path scenarios = exe.parent_path().parent_path() / "share" / "locksim" / "scenarios";
  if (!ec && fs::is_directory(scenarios, ec)) text += "\nscenarios: " + scenarios.string();
  return text;
}

// `run` and its options: what to run, and which reports of it to write.
CLI::App* add_run_command(CLI::App& app, RunArgs& run) {
  CLI::App* run_cmd = app.add_subcommand("run", "run scenarios and tell what happened");
  run_cmd->add_option("files", run.files, "scenario files")->required();
  run_cmd->add_option("--seed", run.seed, "seed (overrides the scenario's)");
  add_format_option(*run_cmd, run.format);
  run_cmd->add_option("--trace", run.trace_path, "write every event as JSON Lines to PATH");
  run_cmd->add_option("--svg", run.svg_path, "write the space-time diagram to PATH (SVG)");
  run_cmd->add_option("--arrows", run.arrows, "draw at most this many message arrows (default 400; 0: none)");
  run_cmd->add_option("--html", run.html_path, "write one self-contained page: the diagram, the story, the narrative, the verdict");
  run_cmd->add_flag("--full", run.full, "tell every step and list every violation (nothing folded or cut)");
  add_choice(*run_cmd, "--axis", run.axis,
             {{"auto", AxisChoice::Auto}, {"linear", AxisChoice::Linear}, {"compressed", AxisChoice::Compressed}},
             "the diagram's time axis: linear (to scale) or compressed (quiet stretches cut out); default: linear where "
             "every critical section, pause and violation is 12 px wide or more at the page width");
  run_cmd->add_option("--slides", run.slides_path,
                      "write the diagram for a slide to PATH: larger type, every label written, no tooltips; PATH.png renders it "
                      "with rsvg-convert (Debian: librsvg2-bin)");
  run_cmd->add_flag("--check-determinism", run.check_determinism,
                    "run twice and name the first event where the runs differ");
  add_judging_flags(*run_cmd, run);
  add_lang_option(*run_cmd, run.lang);
  return run_cmd;
}

}  // namespace

int main(int argc, char** argv) {
  install_output_cleanup();  // a file being written when Ctrl-C comes is removed, not left half written
  CLI::App app{"locksim: a deterministic simulator and fault-injection harness for distributed locks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text(), "print the version (and the git commit it was built from)");

  RunArgs run;
  CLI::App* run_cmd = add_run_command(app, run);

  std::vector<std::string> check_args;
  Format check_format = Format::Text;
  auto* check_cmd = app.add_subcommand("check", "run every scenario and compare with its [expect] table");
  check_cmd->add_option("paths", check_args, "directories or files")->required();
  add_format_option(*check_cmd, check_format);
  std::string check_lang;
  add_lang_option(*check_cmd, check_lang);
  CheckLiveArgs check_live;
  add_check_live_flags(*check_cmd, check_live);
  LiveArgs live_args;
  CLI::App* live_cmd = add_live_command(app, live_args);

  auto* list_cmd = app.add_subcommand("list", "algorithms, fault kinds and violation kinds");

  NewArgs new_args;
  auto* new_cmd = add_new_command(app, new_args);

  const auto run_explore_commands = cli::add_explore_commands(app);
  const auto run_diff_redis = add_diff_redis_command(app);
  const auto run_matrix = add_matrix_command(app);
  const auto run_diff_zookeeper = add_diff_zookeeper_command(app);
  const auto run_diff_etcd = add_diff_etcd_command(app);
  const auto run_sweep_command = cli::add_sweep_command(app);

  refuse_negative_unsigned(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (*run_cmd) return cmd_run(run);
    if (*check_cmd && check_live.live) return cmd_check_live(scenario_files(check_args), check_live);
    if (*check_cmd) return cmd_check(check_args, check_format, check_lang);
    if (*live_cmd) return cmd_live(live_args);
    if (*list_cmd) return cmd_list();
    if (*new_cmd) return cmd_new(new_args);
    if (const auto status = run_explore_commands()) return *status;
    if (const auto status = run_diff_redis()) return *status;
    if (const auto status = run_matrix()) return *status;
    if (const auto status = run_diff_zookeeper()) return *status;
    if (const auto status = run_diff_etcd()) return *status;
    if (const auto status = run_sweep_command()) return *status;
  } catch (const ScenarioError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "locksim: internal error (a bug in locksim, please report it): " << e.what() << "\n";
    return kExitBug;
  }
  return kExitBadInput;
}
