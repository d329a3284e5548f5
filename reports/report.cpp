#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "reports/report.hpp"
#include "judge/words.hpp"

namespace locksim {

namespace {

std::string kinds_text(const std::set<ViolationKind>& kinds) {
  if (kinds.empty()) return "no violation";
  std::string s;
  for (ViolationKind k : kinds) s += (s.empty() ? "" : ", ") + std::string(violation_name(k));
  return s;
}

std::string paint(bool colour, const char* code, const std::string& s) {
  return colour ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
}

std::size_t count_events(const Trace& t, Ev kind) {
  std::size_t n = 0;
  for (const TraceEvent& e : t.events()) n += e.kind == kind;
  return n;
}

}  // namespace

std::string replay_command(const RunResult& r) {
  if (!r.replay.empty()) return r.replay;
  return fmt::format("locksim run {} --seed {}", r.scenario->path, r.seed);
}

std::string text_report(const RunResult& r, const TextOptions& o) {
  const Scenario& s = *r.scenario;
  const Trace& trace = r.world->trace();
  std::string out;
  out += paint(o.colour, "1", s.title) + "\n";
  out += fmt::format("  {}\n  source: {}\n", s.path, s.source);
  std::string lock = s.lock.algorithm;
  if (!s.lock.flavour.empty()) lock += " (" + s.lock.flavour + ")";
  if (s.lock.ttl) lock += ", ttl " + format_duration(*s.lock.ttl);
  lock += ", fencing " + std::string(fencing_name(s.lock.fencing));
  out += fmt::format("  {} · {}, {} · {} simulated\n\n", lock, counted(s.clients.size(), "client"),
                     counted(s.nodes.size(), "node"), format_duration(s.duration));

  out += "What happened (t = true time, which no process can read; local clock readings where they matter):\n";
  const std::vector<Step> steps = narrate(trace);
  const std::size_t shown = std::min(steps.size(), o.max_steps);
  const int width = static_cast<int>(std::to_string(steps.size()).size());
  for (std::size_t i = 0; i < shown; ++i)
    out += fmt::format("  {:>{}}. {} {}\n", i + 1, width, paint(o.colour, "2", fmt::format("t={:<10}", format_instant(steps[i].at))),
                       steps[i].text);
  if (shown < steps.size())
    out += fmt::format("  ... {} more (--trace PATH writes every event)\n", counted(steps.size() - shown, "step"));
  if (!trace.complete())
    out += fmt::format("  (a long run: this story is told from its first {} of {}; the verdict below\n"
                       "  judged them all; --trace PATH writes every event)\n",
                       trace.events().size(), counted(trace.size(), "event"));

  out += "\n";
  const bool ok = r.as_expected();
  std::string verdict = "Verdict: " + kinds_text(r.verdict);
  if (s.expect.present)
    verdict += ok ? " — as expected" : " — NOT as expected (expected: " + kinds_text(s.expect.violations) + ")";
  out += paint(o.colour, r.verdict.empty() ? "32;1" : "31;1", verdict) + "\n";
  for (const Violation& v : r.violations) {
    std::string when = v.until != v.at ? format_instant(v.at) + "–" + format_instant(v.until) : format_instant(v.at);
    out += fmt::format("  {} {:<20} {}\n", paint(o.colour, "31", fmt::format("{:<16}", violation_name(v.kind))), when, v.detail);
  }
  if (s.lock.fencing == Fencing::Token) {
    const std::size_t rejected = count_events(trace, Ev::StorageReject);
    if (rejected > 0 && !r.verdict.count(ViolationKind::StaleWrite))
      out += fmt::format(
          "  Fencing kept the data safe: storage rejected {} carrying a superseded token,\n"
          "  so the overlap of the lock did no damage to the data.\n",
          counted(rejected, "write"));
  }
  if (r.budget_exhausted) out += "  (the run hit its event budget before the end)\n";
  std::size_t notifications = 0;
  for (const TraceEvent& e : trace.events()) notifications += e.kind == Ev::Sent && e.detail.rfind("NOTIFY ", 0) == 0;
  if (notifications > 0) out += fmt::format("  {} sent by the service\n", counted(notifications, "watch notification"));
  out += fmt::format("\nseed {} · trace {} · {}, {}, {}\nreplay: {}\n", r.seed, r.trace_hash,
                     counted(r.stats.events, "event"), counted(r.stats.messages, "message"),
                     counted(r.stats.acquisitions, "acquisition"), replay_command(r));
  return out;
}

std::string check_line(const RunResult& r) {
  const Scenario& s = *r.scenario;
  std::string line = fmt::format("{:<4} {:<60} {}", r.as_expected() ? "ok" : "FAIL", s.path, kinds_text(r.verdict));
  if (!r.as_expected())
    line += "  (expected: " + (s.expect.present ? kinds_text(s.expect.violations) : "no violation") + ")";
  return line;
}

std::string json_report(const RunResult& r) {
  using json = nlohmann::ordered_json;
  const Scenario& s = *r.scenario;
  const Trace& trace = r.world->trace();
  json violations = json::array();
  for (const Violation& v : r.violations) {
    json procs = json::array();
    for (ProcId p : v.processes) procs.push_back(trace.name(p));
    violations.push_back({{"kind", violation_name(v.kind)},
                          {"at_ns", v.at.ns()},
                          {"until_ns", v.until.ns()},
                          {"processes", procs},
                          {"detail", v.detail}});
  }
  json expected = json::array();
  for (ViolationKind k : s.expect.violations) expected.push_back(violation_name(k));
  json j;
  j["scenario"] = s.path;
  j["title"] = s.title;
  j["seed"] = r.seed;
  j["algorithm"] = s.lock.algorithm;
  if (!s.lock.flavour.empty()) j["flavour"] = s.lock.flavour;
  j["fencing"] = fencing_name(s.lock.fencing);
  j["violations"] = violations;
  j["expected"] = s.expect.present ? expected : json(nullptr);
  j["as_expected"] = r.as_expected();
  j["stats"] = {{"events", r.stats.events},
                {"queue_events", r.stats.queue_events},
                {"messages", r.stats.messages},
                {"delivered", r.stats.delivered},
                {"acquisitions", r.stats.acquisitions},
                {"failed_attempts", r.stats.failed_attempts},
                {"sim_time_ns", r.stats.sim_time.ns()}};
  j["budget_exhausted"] = r.budget_exhausted;
  j["trace_hash"] = r.trace_hash;
  j["replay"] = replay_command(r);
  return j.dump();
}

}  // namespace locksim
