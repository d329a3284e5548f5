#include "cli/live_commands.hpp"
#include "cli/choice.hpp"
#include "cli/exit_reason.hpp"

#include "cli/output_file.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "harness/run.hpp"
#include "live/common.hpp"
#include "live/diff_redis.hpp"
#include "live/live_run.hpp"
#include "lockalgos/registry.hpp"
#include "reports/diagram.hpp"
#include "reports/report.hpp"
#include "reports/trace_jsonl.hpp"
#include "reports/words.hpp"
#include "sim/servers/table.hpp"

namespace locksim {

namespace fs = std::filesystem;

namespace {

std::string verdict_text(const std::set<ViolationKind>& v) {
  if (v.empty()) return "-";
  std::string s;
  for (ViolationKind k : v) s += (s.empty() ? "" : ",") + std::string(violation_name(k));
  return s;
}

const char* const kScaleHelp =
    "K: play the scenario K times faster (default 1). Every duration is divided by K on its way to the servers (a 30 s "
    "TTL becomes PX 3000, a 40 s pause lasts 4 s) and every real reading multiplied by K on its way back, so the "
    "report's times are scenario times, measured; ZooKeeper's tickTime is the scenario's tick / K (whole "
    "milliseconds). Not scaled: Redis's 100 ms expiry cycle, Sentinel's periods, loopback latency; a margin thinner "
    "than ~20 ms of real time is warned about";

// A live error as one line. A server's comes with its log's tail on the lines
// after ("...; its output and log:\n    ..."): the log stays with --keep.
std::string one_line(std::string message) {
  const auto nl = message.find('\n');
  if (nl == std::string::npos) return message;
  message.erase(nl);
  if (!message.empty() && message.back() == ':')
    if (const auto clause = message.rfind("; "); clause != std::string::npos) message.erase(clause);
  return message + " (run with --keep DIR to keep its log)";
}

}  // namespace

CLI::App* add_live_command(CLI::App& app, LiveArgs& a) {
  CLI::App* cmd = app.add_subcommand("live", "run scenarios against real servers (redis-server, ZooKeeper, etcd) on loopback");
  cmd->add_option("files", a.files, "scenario files")->required();
  cmd->add_option("--time-scale", a.time_scale, kScaleHelp)->check(CLI::Range(1, 1000));
  cmd->add_option("--keep", a.keep, "keep the servers' directories (configs, logs, AOFs) in DIR");
  add_format_option(*cmd, a.format);
  cmd->add_option("--trace", a.trace_path, "write every event as JSON Lines to PATH");
  cmd->add_option("--svg", a.svg_path, "write the space-time diagram to PATH (SVG)");
  cmd->add_option("--html", a.html_path, "write one self-contained page: the diagram, the story, the verdict");
  cmd->add_flag("--full", a.full, "tell every step and list every violation");
  return cmd;
}

int cmd_live(const LiveArgs& a) {
  int status = kExitOk;
  std::vector<std::string> not_expected;
  for (const std::string& file : a.files) {
    const Scenario s = load_scenario(file);
    if (auto why = live::live_unsupported(s)) {
      std::cerr << "locksim live: " << file << ": " << *why << "\n";
      status = std::max(status, kExitBadInput);
      continue;
    }
    for (const std::string& w : live::live_warnings(s, a.time_scale))
      std::cerr << "locksim live: warning: " << file << ": " << w << "\n";
    live::LiveOptions o;
    o.time_scale = a.time_scale;
    o.keep = a.keep.empty() ? fs::path() : fs::path(a.keep) / fs::path(file).stem();
    std::optional<OutputFile> trace_out;  // whole or absent, as run's
    if (!a.trace_path.empty()) {
      std::string path = a.trace_path;
      if (a.files.size() > 1) path += "." + fs::path(file).stem().string() + ".jsonl";
      trace_out.emplace(path);
      o.details = true;
      o.listener = [&trace_out](const Trace& t, const TraceEvent& e) { write_event_jsonl(t, e, trace_out->stream()); };
    }
    const auto began = std::chrono::steady_clock::now();
    RunResult r;
    try {
      r = live::run_live(s, o);
    } catch (const live::Interrupted& e) {
      std::cerr << "locksim live: " << e.what() << "\n";
      return 130;
    } catch (const live::Error& e) {
      // A server that would not start, an external client that could not run:
      // one line, exit 2, nothing left running.
      std::cerr << "locksim live: " << file << ": " << one_line(e.what()) << "\n";
      return kExitBadInput;
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (trace_out) trace_out->commit();
    if (a.format == Format::Json) {
      std::cout << json_report(r) << "\n";
    } else {
      std::cout << "LIVE against " << live::live_servers(s) << ", time scale " << a.time_scale << ": the times below are real times"
                << " measured since the start, x " << a.time_scale << " (" << std::fixed << std::setprecision(1) << took
                << " s of real time)\n"
                << std::defaultfloat;
      std::cout << text_report(r, {.colour = isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr,
                                   .full = a.full})
                << (a.files.size() > 1 ? "\n" : "");
    }
    for (auto [path, html] : {std::pair{a.svg_path, false}, std::pair{a.html_path, true}}) {
      if (path.empty()) continue;
      if (a.files.size() > 1) path += "." + fs::path(file).stem().string() + (html ? ".html" : ".svg");
      write_whole(path, html ? html_report(r, {}) : svg_diagram(r, {}));
    }
    if (r.as_expected()) continue;
    status = std::max(status, kExitUnexpected);
    not_expected.push_back(say(Lang::En, W::ExitNotAsExpected,
                               {{"file", file}, {"found", kinds_text(r.verdict)},
                                {"expected", s.expect.present ? kinds_text(s.expect.violations) : kinds_text({})}}));
  }
  if (status == kExitUnexpected) {
    std::string why;
    for (const std::string& w : not_expected) why += (why.empty() ? "" : "; ") + w;
    return exit_because(status, "live", why);
  }
  return status;
}

void add_check_live_flags(CLI::App& check, CheckLiveArgs& a) {
  check.add_flag("--live", a.live,
                 "run each scenario simulated and live (real redis-server, ZooKeeper, etcd) and print one table of the verdicts");
  check.add_option("--reps", a.reps, "with --live: live repetitions of each scenario (default 3)")->check(CLI::Range(1, 100));
  check.add_option("--time-scale", a.time_scale,
                   "with --live: K, as for `live` (default 10); a scenario whose thinnest margin (a fault's time or "
                   "length, a replication lag, a simulated violation's length) would be under 5 ms of real time runs "
                   "at the largest scale that keeps it 5 ms")->check(CLI::Range(1, 1000));
  check.add_option("--keep", a.keep, "with --live: keep the servers' directories in DIR");
}

// Live timings hold on a quiet machine: under a load above its cores, a
// paused client's timers and the servers' replies slip by tens of
// milliseconds and a live run can show fewer kinds than the simulator (seen:
// 8 of 17 catalogue scenarios at load 20 on two cores, none when quiet).
static void warn_if_loaded() {
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores > 0 && load > static_cast<double>(cores))
    std::cerr << "locksim: warning: the load average is " << std::fixed << std::setprecision(1) << load << " on " << cores
              << " cores; live timings may slip and disagree with the simulator for that reason alone\n";
}

int cmd_check_live(const std::vector<std::string>& files, const CheckLiveArgs& a) {
  int agreed = 0, disagreed = 0, unsupported = 0;
  warn_if_loaded();
  std::cout << "scenario | simulated | live x" << a.reps << " (time scale " << a.time_scale << ") | agree?\n";
  for (const std::string& file : files) {
    const Scenario s = load_scenario(file);
    std::cout << file << " | " << std::flush;
    RunOptions keep_none;
    keep_none.keep_events = 0;
    const RunResult sim = run_scenario(s, keep_none);
    std::cout << verdict_text(sim.verdict) << " | " << std::flush;
    if (auto why = live::live_unsupported(s)) {
      std::cout << "(" << *why << ") | -\n";
      ++unsupported;
      continue;
    }
    bool same = true;
    const std::int64_t k = live::live_scale_for(s, sim.violations, a.time_scale);
    if (k != a.time_scale) std::cout << "(at scale " << k << ") ";
    for (int i = 0; i < a.reps; ++i) {
      live::LiveOptions o;
      o.time_scale = k;
      o.keep_events = 0;
      if (!a.keep.empty()) o.keep = fs::path(a.keep) / (fs::path(file).stem().string() + "-" + std::to_string(i + 1));
      std::string verdict;
      try {
        const RunResult r = live::run_live(s, o);
        verdict = verdict_text(r.verdict);
        same = same && r.verdict == sim.verdict;
      } catch (const live::Error& e) {
        verdict = std::string("ERROR ") + e.what();
        same = false;
      }
      std::cout << (i ? " ; " : "") << verdict << std::flush;
    }
    std::cout << " | " << (same ? "yes" : "NO") << "\n";
    (same ? agreed : disagreed)++;
  }
  std::cout << "\n" << files.size() << " scenarios: " << agreed << " agree, " << disagreed << " disagree, " << unsupported
            << " not yet supported live\n";
  if (files.empty()) return exit_because(kExitBadInput, "check --live", "no scenario files found");
  if (disagreed)
    return exit_because(kExitUnexpected, "check --live",
                        std::to_string(disagreed) + " of " + std::to_string(files.size()) +
                            " scenarios: the live runs' verdicts differ from the simulator's (the NO lines above)");
  return kExitOk;
}

}  // namespace locksim

namespace locksim {

std::function<std::optional<int>()> add_diff_redis_command(CLI::App& app) {
  struct Args {
    std::uint64_t sequences = 1000;
    std::uint64_t seed = 1;
    bool replica = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "diff-redis", "check the simulator's Redis model against a real redis-server, reply by reply");
  cmd->add_option("--sequences", a->sequences, "how many random command sequences (default 1000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  cmd->add_option("--seed", a->seed, "the seed the sequences are drawn from (default 1)");
  cmd->add_flag("--replica", a->replica,
                "a primary and a replica: reads on the replica, REPLICAOF, promotion, clock steps on either");
  return [cmd, a]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    live::diff::RunOptions o;
    o.sequences = a->sequences;
    o.seed = a->seed;
    o.options.replica = a->replica;
    const auto start = std::chrono::steady_clock::now();
    live::diff::Summary sum;
    try {
      sum = live::diff::run(o, std::cout);
    } catch (const live::Error& e) {
      std::cerr << "locksim diff-redis: " << e.what() << "\n";
      return kExitBadInput;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "diff-redis: " << sum.sequences << " sequences (seed " << o.seed
              << (a->replica ? ", a primary and a replica" : ", one node") << "), " << sum.commands
              << " commands compared, " << sum.mismatches << " mismatches, " << std::fixed << std::setprecision(1)
              << secs << " s\n";
    if (sum.mismatches)
      return exit_because(kExitUnexpected, "diff-redis",
                          std::to_string(sum.mismatches) + " replies of the model differ from redis-server's (each is shown above, shrunk)");
    return kExitOk;
  };
}

}  // namespace locksim
