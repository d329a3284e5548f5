// locksim sweep FILE --set KEY=SPEC [--set KEY2=SPEC2] [--seeds N] [--jobs J]
//   [--csv PATH] [--svg PATH] [--png PATH] [--format json]
#include "cli/sweep_commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include "cli/choice.hpp"
#include "cli/exit_reason.hpp"
#include "cli/lang.hpp"
#include "cli/output_file.hpp"
#include "harness/sweep.hpp"
#include "reports/heatmap.hpp"
#include "reports/report.hpp"
#include "reports/words.hpp"

namespace locksim::cli {

namespace {

struct SweepArgs {
  std::string file;
  std::vector<std::string> sets;
  std::uint64_t seeds = 1;
  int jobs = 1;
  std::uint64_t max_events = SweepOptions{}.max_events;
  std::string csv_path, svg_path, png_path;
  Format format = Format::Text;
  std::string lang;
};

// As explore judges its runs: what the scenario's [expect] allows (without one: nothing).
bool allowed(const Scenario& s, const std::set<ViolationKind>& found) {
  if (!s.expect.present) return found.empty();
  return std::includes(s.expect.violations.begin(), s.expect.violations.end(), found.begin(), found.end());
}

int cmd_sweep(const SweepArgs& a) {
  if (a.sets.empty() || a.sets.size() > 2)
    throw ScenarioError("sweep: give one or two --set KEY=SPEC (one: a strip; two: a map), e.g. --set fault[1].duration=1s..40s:40");
  const Lang lang = lang_flag(a.lang);
  if (!a.png_path.empty()) require_png_renderer(a.png_path);
  const Scenario s = load_scenario(a.file);
  std::vector<SweepAxis> axes;
  for (const std::string& set : a.sets) axes.push_back(parse_sweep_axis(s, set));
  const SweepResult r = run_sweep(s, axes, {.seeds = a.seeds, .jobs = a.jobs, .max_events = a.max_events});
  const bool ok = allowed(s, r.found());
  const std::string title = s.title.empty() ? say(lang, W::SweepDefaultTitle) : s.title;
  if (!a.csv_path.empty()) write_whole(a.csv_path, sweep_csv(r));
  if (!a.svg_path.empty()) write_whole(a.svg_path, sweep_svg(r, title, lang));
  if (!a.png_path.empty()) write_png(sweep_svg(r, title, lang), a.png_path);
  if (a.format == Format::Json) {
    std::cout << sweep_json(r, ok) << "\n";
  } else {
    std::cout << sweep_text(r, title, lang);
  }
  std::cout << std::flush;
  if (r.internal_errors())
    return exit_because(kExitBug, "sweep", say(lang, W::ExitBug, {{"n", std::to_string(r.internal_errors())}}));
  if (!ok) return exit_because(kExitUnexpected, "sweep", not_allowed_words(lang, s, r.found()));
  return kExitOk;
}

}  // namespace

std::function<std::optional<int>()> add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  SweepArgs& a = *args;
  auto* cmd = app.add_subcommand("sweep", "a grid of runs over one or two numbers: a table, CSV, a heatmap");
  cmd->add_option("file", a.file, "scenario file")->required();
  cmd->add_option("--set", a.sets,
                  "KEY=SPEC, once or twice: the number to move and its values, FROM..TO:POINTS (1s..40s:40), "
                  "FROM..TO:step=STEP (0..50000:step=10000) or a list (5s,10s,30s). KEY: " + knob_parameters())
      ->required();
  cmd->add_option("--seeds", a.seeds, "run each point with seeds 1..N (default 1)")->check(CLI::Range(1, 100000));
  cmd->add_option("--jobs", a.jobs, "parallel simulations (default 1; the output is the same for any)")->check(CLI::Range(1, 256));
  cmd->add_option("--max-events", a.max_events, "stop a run after this many events (default 2000000)");
  cmd->add_option("--csv", a.csv_path, "write one line per point to PATH");
  cmd->add_option("--svg", a.svg_path, "write the heatmap (a strip for one --set) to PATH");
  cmd->add_option("--png", a.png_path, "write the heatmap as PNG to PATH (rsvg-convert, Debian's librsvg2-bin)");
  add_format_option(*cmd, a.format);
  add_lang_option(*cmd, a.lang);
  return [cmd, args]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    return cmd_sweep(*args);
  };
}

}  // namespace locksim::cli
