// locksim: the command line (product.md, "The command line").
// Exit status: 0 as expected, 1 not as expected, 2 bad input or usage, 3 a bug in locksim.
#include <unistd.h>

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/explore_commands.hpp"
#include "harness/faults.hpp"
#include "harness/run.hpp"
#include "lockalgos/registry.hpp"
#include "reports/diagram.hpp"
#include "reports/report.hpp"
#include "reports/trace_jsonl.hpp"
#include "judge/words.hpp"

using namespace locksim;
namespace fs = std::filesystem;

namespace {

constexpr int kExitOk = 0, kExitUnexpected = 1, kExitBadInput = 2, kExitBug = 3;

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
  std::string format = "text";
  std::string trace_path;
  std::string svg_path, html_path;
  std::size_t arrows = DiagramOptions{}.max_arrows;
  bool check_determinism = false;
};

// How many events `run` keeps for its text story: the story of a long run is
// told from its beginning; the verdict always judges every event.
constexpr std::uint64_t kTextKeep = 250'000;
// A diagram or a determinism check reads every event, up to this many (about
// 300 MiB); past it a diagram shows the beginning, and the determinism check
// compares the events kept and the hash of them all.
constexpr std::uint64_t kWholeKeep = 2'000'000;

int cmd_run(const RunArgs& a) {
  int status = kExitOk;
  for (const std::string& file : a.files) {
    const Scenario s = load_scenario(file);
    RunOptions opts;
    opts.seed = a.seed;
    // Keep only the events a report will read: a diagram or a determinism
    // check needs them all, the text story its beginning, JSON none.
    const bool whole = !a.svg_path.empty() || !a.html_path.empty() || a.check_determinism;
    opts.keep_events = whole ? kWholeKeep : a.format == "json" ? 0 : kTextKeep;
    std::ofstream trace_out;
    if (!a.trace_path.empty()) {
      std::string path = a.trace_path;
      if (a.files.size() > 1) path += "." + fs::path(file).stem().string() + ".jsonl";
      trace_out.open(path);
      if (!trace_out) throw ScenarioError(path + ": cannot write the trace there");
      opts.details = true;
      opts.listener = [&trace_out](const Trace& t, const TraceEvent& e) { write_event_jsonl(t, e, trace_out); };
    }
    RunResult r = run_scenario(s, opts);
    opts.listener = nullptr;
    opts.details = false;
    if (a.format == "json") std::cout << json_report(r) << "\n";
    else std::cout << text_report(r, {.colour = use_colour()}) << (a.files.size() > 1 ? "\n" : "");
    if (trace_out.is_open() && !trace_out.flush()) throw ScenarioError(a.trace_path + ": cannot write the trace there");
    for (auto [path, html] : {std::pair{a.svg_path, false}, std::pair{a.html_path, true}}) {
      if (path.empty()) continue;
      if (!r.world->trace().complete())
        std::cerr << "locksim: " << path << " shows the first " << r.world->trace().events().size() << " of "
                  << r.stats.events << " events (a diagram of more would not be read); shorten the run to see its end\n";
      if (a.files.size() > 1) path += "." + fs::path(file).stem().string() + (html ? ".html" : ".svg");
      std::ofstream out(path);
      DiagramOptions d;
      d.max_arrows = a.arrows;
      if (!(out << (html ? html_report(r, d) : svg_diagram(r, d)))) throw ScenarioError(path + ": cannot write there");
    }
    if (a.check_determinism) {
      RunResult again = run_scenario(s, opts);
      const std::string diff = first_divergence(r.world->trace(), again.world->trace());
      if (!diff.empty() || again.trace_hash != r.trace_hash) {
        std::cout << "NOT deterministic: the second run diverged at " << diff << "\n";
        status = std::max(status, kExitUnexpected);
      } else {
        std::cout << "deterministic: a second run gave the same " << r.stats.events << " events (trace "
                  << r.trace_hash << ")\n";
      }
    }
    if (!r.as_expected()) status = std::max(status, kExitUnexpected);
  }
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

int cmd_check(const std::vector<std::string>& args, const std::string& format) {
  const std::vector<std::string> files = scenario_files(args);
  int ok = 0, failed = 0, bad = 0;
  for (const std::string& file : files) {
    try {
      const Scenario s = load_scenario(file);
      RunOptions keep_none;
      keep_none.keep_events = 0;
      RunResult r = run_scenario(s, keep_none);
      if (format == "json") std::cout << json_report(r) << "\n";
      else std::cout << check_line(r) << "\n";
      (r.as_expected() ? ok : failed)++;
    } catch (const ScenarioError& e) {
      std::cout << "BAD  " << e.what() << "\n";
      ++bad;
    }
  }
  if (format != "json")
    std::cout << "\n" << counted(files.size(), "scenario") << ": " << ok << " as expected, " << failed << " not as expected"
              << (bad ? ", " + std::to_string(bad) + " unreadable" : "") << "\n";
  if (files.empty()) {
    std::cerr << "locksim check: no scenario files found\n";
    return kExitBadInput;
  }
  return bad ? kExitBadInput : failed ? kExitUnexpected : kExitOk;
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
  std::cout << "\nFault kinds ([[fault]] kind = ...):\n";
  for (const FaultKindInfo* k : fault_kinds()) std::cout << fmt::format("  {:<12} {}\n", k->name, k->help);
  std::cout << "\nViolation kinds ([expect] violations = [...]):\n";
  for (ViolationKind k : kAllViolationKinds)
    std::cout << "  " << std::string(violation_name(k)) << std::string(16 - violation_name(k).size(), ' ')
              << violation_help(k) << "\n";
  std::cout << "\nEvents a fault can wait for (on = \"<process> <event>[#N]\"):\n  ";
  for (int i = 0; i <= static_cast<int>(Ev::Fault); ++i)
    if (fault_may_wait_for(static_cast<Ev>(i))) std::cout << event_name(static_cast<Ev>(i)) << " ";
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"locksim: a deterministic simulator and fault-injection harness for distributed locks"};
  app.require_subcommand(1);

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "run scenarios and tell what happened");
  run_cmd->add_option("files", run.files, "scenario files")->required();
  run_cmd->add_option("--seed", run.seed, "seed (overrides the scenario's)");
  run_cmd->add_option("--format", run.format, "text | json")->check(CLI::IsMember({"text", "json"}));
  run_cmd->add_option("--trace", run.trace_path, "write every event as JSON Lines to PATH");
  run_cmd->add_option("--svg", run.svg_path, "write the space-time diagram to PATH (SVG)");
  run_cmd->add_option("--arrows", run.arrows, "draw at most this many message arrows (default 400; 0: none)");
  run_cmd->add_option("--html", run.html_path, "write one self-contained page: the diagram, the story, the narrative, the verdict");
  run_cmd->add_flag("--check-determinism", run.check_determinism,
                    "run twice and name the first event where the runs differ");

  std::vector<std::string> check_args;
  std::string check_format = "text";
  auto* check_cmd = app.add_subcommand("check", "run every scenario and compare with its [expect] table");
  check_cmd->add_option("paths", check_args, "directories or files")->required();
  check_cmd->add_option("--format", check_format, "text | json")->check(CLI::IsMember({"text", "json"}));

  auto* list_cmd = app.add_subcommand("list", "algorithms, fault kinds and violation kinds");

  const auto run_explore_commands = cli::add_explore_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  try {
    if (*run_cmd) return cmd_run(run);
    if (*check_cmd) return cmd_check(check_args, check_format);
    if (*list_cmd) return cmd_list();
    if (const auto status = run_explore_commands()) return *status;
  } catch (const ScenarioError& e) {
    std::cerr << "locksim: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "locksim: internal error (a bug in locksim, please report it): " << e.what() << "\n";
    return kExitBug;
  }
  return kExitBadInput;
}
