#include "cli/matrix_command.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/exit_reason.hpp"
#include "cli/output_file.hpp"
#include "cli/version.hpp"
#include "harness/run.hpp"
#include "live/live_run.hpp"

namespace locksim {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kExitDisagree = kExitUnexpected;  // the live and simulated verdicts disagree

// The attacks, in its order; a folder's other scenarios follow, by name.
const std::vector<std::string> kAttackOrder{
    "pause-no-check", "pause-check",     "pause-check-exists",     "reply-delayed", "server-clock-jump",
    "client-clock-step", "partition-renewal", "restart-no-persistence", "failover",      "fencing"};

struct Cell {
  std::string library, attack, file;
  std::set<ViolationKind> simulated;
  std::vector<std::set<ViolationKind>> live;  // one per repetition that ran
  std::string not_live;                       // why it cannot run live ("" if it can)
  std::string error;                          // a live run that failed: its message
  double live_seconds = 0;

  bool ran_live() const { return not_live.empty() && error.empty() && !live.empty(); }
  bool agrees() const {
    return ran_live() && std::all_of(live.begin(), live.end(), [&](const auto& v) { return v == simulated; });
  }
};

std::string verdict(const std::set<ViolationKind>& v) {
  if (v.empty()) return "safe";
  std::string s;
  for (ViolationKind k : v) s += (s.empty() ? "" : ", ") + std::string(violation_name(k));
  return s;
}

json verdict_json(const std::set<ViolationKind>& v) {
  json out = json::array();
  for (ViolationKind k : v) out.push_back(std::string(violation_name(k)));
  return out;
}

// "lost-update, stale-write ×3", or each distinct verdict with its count.
std::string live_text(const Cell& c) {
  if (!c.not_live.empty()) return "not live: " + c.not_live;
  if (!c.error.empty()) return "error: " + c.error;
  std::vector<std::pair<std::set<ViolationKind>, int>> counts;
  for (const auto& v : c.live) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == v; });
    if (it == counts.end()) counts.push_back({v, 1});
    else ++it->second;
  }
  std::string out;
  for (const auto& [v, n] : counts) out += (out.empty() ? "" : "; ") + verdict(v) + " ×" + std::to_string(n);
  return out;
}

std::string agree_text(const Cell& c) {
  if (!c.ran_live()) return "–";
  const auto same = std::count(c.live.begin(), c.live.end(), c.simulated);
  if (static_cast<std::size_t>(same) == c.live.size()) return "yes";
  return same == 0 ? "no" : std::to_string(same) + "/" + std::to_string(c.live.size());
}

// Markdown cell text: a pipe would end the cell.
std::string md(std::string s) {
  for (std::size_t at = 0; (at = s.find('|', at)) != std::string::npos; at += 2) s.replace(at, 1, "\\|");
  return s;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&now));
  return buf;
}

struct Args {
  std::string dir = "scenarios/matrix";
  int reps = 3;
  std::string md_path = "matrix.md";
  std::string json_path = "matrix.json";
  std::vector<std::string> libraries, attacks;
};

std::vector<Cell> find_cells(const Args& a) {
  if (!fs::is_directory(a.dir)) throw ScenarioError(a.dir + ": not a folder (locksim matrix DIR: one folder per library, one scenario per attack)");
  std::vector<Cell> cells;
  for (const auto& lib : fs::directory_iterator(a.dir)) {
    if (!lib.is_directory()) continue;
    const std::string library = lib.path().filename().string();
    if (!a.libraries.empty() && std::find(a.libraries.begin(), a.libraries.end(), library) == a.libraries.end()) continue;
    for (const auto& f : fs::directory_iterator(lib.path())) {
      if (f.path().extension() != ".toml") continue;
      const std::string attack = f.path().stem().string();
      if (!a.attacks.empty() && std::find(a.attacks.begin(), a.attacks.end(), attack) == a.attacks.end()) continue;
      cells.push_back({library, attack, f.path().string()});
    }
  }
  auto rank = [](const std::string& attack) {
    const auto it = std::find(kAttackOrder.begin(), kAttackOrder.end(), attack);
    return static_cast<std::size_t>(it - kAttackOrder.begin());
  };
  std::sort(cells.begin(), cells.end(), [&](const Cell& x, const Cell& y) {
    return std::tuple(x.library, rank(x.attack), x.attack) < std::tuple(y.library, rank(y.attack), y.attack);
  });
  return cells;
}

void run_cell(Cell& c, int reps) {
  const Scenario s = load_scenario(c.file);
  RunOptions quiet;
  quiet.keep_events = 0;
  c.simulated = run_scenario(s, quiet).verdict;
  if (reps == 0) return;
  if (auto why = live::live_unsupported(s)) {
    c.not_live = *why;
    return;
  }
  const auto began = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) {
    live::LiveOptions o;
    o.keep_events = 0;
    try {
      c.live.push_back(live::run_live(s, o).verdict);
    } catch (const live::Interrupted&) {
      throw;
    } catch (const live::Error& e) {
      c.error = e.what();
      c.error = c.error.substr(0, c.error.find('\n'));
      break;
    }
  }
  c.live_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

std::string markdown(const std::vector<Cell>& cells, const std::string& command, const std::string& date, double seconds,
                     int reps) {
  std::vector<std::string> libraries, attacks;
  for (const Cell& c : cells) {
    if (std::find(libraries.begin(), libraries.end(), c.library) == libraries.end()) libraries.push_back(c.library);
    if (std::find(attacks.begin(), attacks.end(), c.attack) == attacks.end()) attacks.push_back(c.attack);
  }
  std::ostringstream out;
  out << "Made with `" << command << "` on " << date << " (locksim " << kVersion << (kCommit.empty() ? "" : " " + std::string(kCommit))
      << "), " << std::fixed << std::setprecision(0) << seconds << " s. Each cell: the live verdict over " << reps
      << " runs of the real library (×N: how many gave it), the simulated verdict, and whether they agree.\n\n";
  out << "| library |";
  for (const std::string& a : attacks) out << " " << a << " |";
  out << "\n|---|";
  for (std::size_t i = 0; i < attacks.size(); ++i) out << "---|";
  out << "\n";
  for (const std::string& l : libraries) {
    out << "| " << l << " |";
    for (const std::string& a : attacks) {
      const auto it = std::find_if(cells.begin(), cells.end(), [&](const Cell& c) { return c.library == l && c.attack == a; });
      if (it == cells.end()) {
        out << " |";
        continue;
      }
      out << " live: " << md(it->ran_live() ? live_text(*it) : it->not_live.empty() ? "error" : "not run") << "<br>sim: "
          << verdict(it->simulated) << "<br>agree: " << agree_text(*it) << " |";
    }
    out << "\n";
  }
  out << "\n| library | attack | live | simulated | agree |\n|---|---|---|---|---|\n";
  for (const Cell& c : cells)
    out << "| " << c.library << " | [" << c.attack << "](" << c.file << ") | " << md(live_text(c)) << " | "
        << verdict(c.simulated) << " | " << agree_text(c) << " |\n";
  return out.str();
}

json to_json(const std::vector<Cell>& cells, const std::string& command, const std::string& date, double seconds, int reps) {
  json j = {{"command", command}, {"date", date}, {"seconds", seconds}, {"reps", reps},
            {"locksim", std::string(kVersion) + (kCommit.empty() ? "" : " " + std::string(kCommit))}};
  j["cells"] = json::array();
  for (const Cell& c : cells) {
    json cell = {{"library", c.library}, {"attack", c.attack}, {"scenario", c.file}, {"simulated", verdict_json(c.simulated)}};
    cell["live"] = json::array();
    for (const auto& v : c.live) cell["live"].push_back(verdict_json(v));
    cell["agree"] = c.ran_live() ? json(c.agrees()) : json();
    if (!c.not_live.empty()) cell["not_live"] = c.not_live;
    if (!c.error.empty()) cell["error"] = c.error;
    cell["live_seconds"] = c.live_seconds;
    j["cells"].push_back(std::move(cell));
  }
  return j;
}

int cmd_matrix(const Args& a, const std::string& command) {
  std::vector<Cell> cells = find_cells(a);
  if (cells.empty()) throw ScenarioError(a.dir + ": no <library>/<attack>.toml scenarios here");
  for (const Cell& c : cells) load_scenario(c.file);  // a bad file stops it before anything runs
  const auto began = std::chrono::steady_clock::now();
  const std::string date = today();
  for (Cell& c : cells) {
    std::cerr << c.library << " × " << c.attack << ": " << std::flush;
    try {
      run_cell(c, a.reps);
    } catch (const live::Interrupted& e) {
      std::cerr << "\nlocksim matrix: " << e.what() << "\n";
      return 130;
    }
    std::cerr << "sim " << verdict(c.simulated) << (a.reps ? "; live " + live_text(c) : "") << "\n";
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  const std::string text = markdown(cells, command, date, seconds, a.reps);
  std::cout << text;
  if (!a.md_path.empty()) write_whole(a.md_path, text);
  if (!a.json_path.empty()) write_whole(a.json_path, to_json(cells, command, date, seconds, a.reps).dump(2) + "\n");
  const bool any_disagree = std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return c.ran_live() && !c.agrees(); });
  const bool any_error = std::any_of(cells.begin(), cells.end(), [](const Cell& c) { return !c.error.empty(); });
  return any_disagree || any_error ? kExitDisagree : kExitOk;
}

}  // namespace

std::function<std::optional<int>()> add_matrix_command(CLI::App& app) {
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "matrix", "each library x each attack: the real library live (external clients) and its simulated flavour, one table");
  cmd->add_option("dir", a->dir, "the matrix's scenarios: DIR/<library>/<attack>.toml (default scenarios/matrix)");
  cmd->add_option("--reps", a->reps, "live runs of each cell (default 3; 0: simulate only)")->check(CLI::Range(0, 100));
  cmd->add_option("--md", a->md_path, "write the table as Markdown to PATH (default matrix.md; \"\" for none)");
  cmd->add_option("--json", a->json_path, "write every cell as JSON to PATH (default matrix.json; \"\" for none)");
  cmd->add_option("--library", a->libraries, "only these libraries (a folder's name; repeatable)");
  cmd->add_option("--attack", a->attacks, "only these attacks (a scenario's name without .toml; repeatable)");
  return [cmd, a]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    std::string command = "locksim matrix " + a->dir;
    if (a->reps != 3) command += " --reps " + std::to_string(a->reps);
    for (const std::string& l : a->libraries) command += " --library " + l;
    for (const std::string& t : a->attacks) command += " --attack " + t;
    return cmd_matrix(*a, command);
  };
}

}  // namespace locksim
