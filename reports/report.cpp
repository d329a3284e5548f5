#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "reports/report.hpp"
#include "reports/words.hpp"

namespace locksim {

namespace {

std::string paint(bool colour, const char* code, const std::string& s) {
  return colour ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
}

}  // namespace

std::string kinds_text(const std::set<ViolationKind>& kinds, Lang lang) {
  if (kinds.empty()) return say(lang, W::NoViolation);
  std::string s;
  for (ViolationKind k : kinds) s += (s.empty() ? "" : std::string(word(lang, W::KindSeparator))) + kind_words(lang, k);
  return s;
}

std::string not_allowed_words(Lang lang, const Scenario& s, const std::set<ViolationKind>& found, bool one_run) {
  std::set<ViolationKind> extra;
  for (ViolationKind k : found)
    if (!s.expect.present || !s.expect.violations.count(k)) extra.insert(k);
  return say(lang, one_run ? W::ExitNotAllowedRun : W::ExitNotAllowed,
             {{"kinds", kinds_text(extra, lang)}, {"file", s.path}, {"how", say(lang, s.expect.present ? W::ExitInExpect : W::ExitNoExpect)}});
}

std::string fault_listing(Lang lang, const FaultSpec& f, const FaultFate& fate, Duration run) {
  const std::string fault = say(lang, describe_fault(f));
  if (fate.applied) return fault;
  // An `on` fault whose event came as often as it waits for, or an `at`
  // fault, was due when the run had ended.
  if (f.at || fate.seen >= f.on_occurrence) return say(lang, W::FaultDueAfterEnd, {{"fault", fault}, {"end", format_duration(run)}});
  const WordArgs args{{"fault", fault}, {"process", f.on_process}, {"event", f.on_event},
                      {"times", say_count(lang, static_cast<std::uint64_t>(fate.seen), W::TimeOne, W::TimeMany)},
                      {"n", std::to_string(f.on_occurrence)}};
  return say(lang, fate.seen == 0 ? W::FaultNeverCame : W::FaultCameOnly, args);
}

std::string replay_command(const RunResult& r) {
  if (!r.replay.empty()) return r.replay;
  return fmt::format("locksim run {} --seed {}", r.scenario->path, r.seed);
}

namespace {

// The story's lines as the text tells them: every one when they fit, else
// its beginning, the lines the verdict rests on and its ending, with what is
// left out counted where it was.
std::string story_text(const std::vector<StoryLine>& lines, const StoryClock& clock, const TextOptions& o) {
  const std::size_t head = o.max_lines / 2, tail = o.max_lines / 5;
  const bool cut = !o.full && lines.size() > o.max_lines;
  const int width = static_cast<int>(std::to_string(lines.size()).size());
  std::string out;
  std::size_t skipped = 0;
  Instant skipped_from, skipped_to;
  auto say_skipped = [&] {
    if (skipped == 0) return;
    out += fmt::format("  {:>{}}  {}\n", "", width + static_cast<int>(clock.width()) + 1,
                       say(o.lang, W::NotToldHere, {{"lines", say_count(o.lang, skipped, W::LineOne, W::LineMany)}, {"span", clock.span(skipped_from, skipped_to)}}));
    skipped = 0;
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (cut && i >= head && i + tail < lines.size() && !lines[i].decisive) {
      if (skipped++ == 0) skipped_from = lines[i].at;
      skipped_to = lines[i].until;
      continue;
    }
    say_skipped();
    out += fmt::format("  {:>{}}. {}  {}\n", i + 1, width, paint(o.colour, "2", fmt::format("{:>{}}", clock(lines[i].at), clock.width())),
                       lines[i].text);
  }
  say_skipped();
  return out;
}

std::string when(const Violation& v, const StoryClock& clock) { return clock.span(v.at, v.until); }

constexpr std::size_t kListAll = 8, kFirstOfKind = 3;

}  // namespace

std::vector<Violation> told_violations(const std::vector<Violation>& all) {
  if (all.size() <= kListAll) return all;
  std::vector<Violation> told;
  std::map<ViolationKind, std::size_t> n;
  for (const Violation& v : all)
    if (n[v.kind]++ < kFirstOfKind) told.push_back(v);
  return told;
}

namespace {

// The violations, one line each; many of them (a contended run) summed up
// per kind first, then the first few of each kind.
std::string violations_text(const RunResult& r, const StoryClock& clock, const TextOptions& o) {
  const auto& trace = r.world->trace();
  std::size_t when_w = 0;
  for (const Violation& v : r.violations) when_w = std::max(when_w, when(v, clock).size() - (v.until != v.at ? 2 : 0));
  // The kinds' column as wide as the widest kind's words shown (16 in English).
  std::size_t kind_w = 16;
  for (const Violation& v : r.violations) kind_w = std::max(kind_w, display_width(kind_words(o.lang, v.kind)) + 1);
  auto kind = [&](ViolationKind k) { return paint(o.colour, "31", fmt::format("{:<{}}", kind_words(o.lang, k), kind_w)); };
  auto line = [&](const Violation& v) {
    return fmt::format("  {} {:<{}}  {}\n", kind(v.kind), when(v, clock), when_w, violation_words(o.lang, v));
  };
  std::string out;
  if (o.full || r.violations.size() <= kListAll) {
    for (const Violation& v : r.violations) out += line(v);
    return out;
  }
  std::map<ViolationKind, std::vector<const Violation*>> by_kind;
  for (const Violation& v : r.violations) by_kind[v.kind].push_back(&v);
  for (const auto& [k, vs] : by_kind) {
    std::set<ProcId> who;
    Instant from = vs.front()->at, to = vs.front()->until;
    for (const Violation* v : vs) {
      who.insert(v->processes.begin(), v->processes.end());
      from = std::min(from, v->at);
      to = std::max(to, v->until);
    }
    std::vector<std::string> names;
    for (ProcId p : who) names.push_back(trace.name(p));
    const std::string among = names.size() <= 4 ? fmt::format("{}", fmt::join(names, ", "))
                                                : fmt::format("{}, {} … {}", names[0], names[1], names.back());
    out += fmt::format("  {} {:>4}  {}\n", kind(k), "×" + std::to_string(vs.size()),
                       say(o.lang, W::ViolationsAmong,
                           {{"span", clock.span(from, to)}, {"clients", say_count(o.lang, who.size(), W::ClientOne, W::ClientMany)}, {"names", among}}));
  }
  std::size_t left = 0;
  out += "  " + say(o.lang, W::FirstOfEachKind, {{"n", std::to_string(kFirstOfKind)}}) + "\n";
  for (const auto& [k, vs] : by_kind) {
    for (std::size_t i = 0; i < vs.size() && i < kFirstOfKind; ++i) out += line(*vs[i]);
    left += vs.size() - std::min(vs.size(), kFirstOfKind);
  }
  out += "  " + say(o.lang, W::AndMoreViolations, {{"n", std::to_string(left)}, {"violations", say(o.lang, left == 1 ? W::ViolationWord : W::ViolationsWord)}}) + "\n";
  return out;
}

// "overlap ×22, stale-write": the kinds found, counted when more than once.
std::string verdict_kinds(const RunResult& r, Lang lang) {
  if (r.verdict.empty()) return say(lang, W::NoViolation);
  std::string s;
  for (ViolationKind k : r.verdict) {
    const auto n = std::count_if(r.violations.begin(), r.violations.end(), [k](const Violation& v) { return v.kind == k; });
    s += (s.empty() ? "" : std::string(word(lang, W::KindSeparator))) + kind_words(lang, k) + (n > 1 ? " ×" + std::to_string(n) : "");
  }
  return s;
}

// Writes the storage refused, told from the side of the clients that sent
// them: their work was refused, not lost, and they know it.
std::string refusals_text(const RunResult& r, const StoryClock& clock, Lang lang) {
  const Trace& trace = r.world->trace();
  std::string out;
  Instant last_grant = Instant::zero();
  ProcId last_holder = kNoProc;
  for (const TraceEvent& e : trace.events()) {
    if (e.kind == Ev::Acquired && e.at >= last_grant) {
      last_grant = e.at;
      last_holder = e.process;
    }
    if (e.kind != Ev::WriteRejected || e.detail.rfind("storage did not answer", 0) == 0) continue;
    const std::string who = trace.name(e.process);
    out += "  " +
           say(lang, W::RefusedNotLost,
               {{"who", who},
                {"what", say(lang, e.detail == "the claim was refused" ? W::RefusedClaim : W::RefusedWrite)},
                {"t", clock(e.at)},
                {"last", e.process == last_holder ? say(lang, W::RefusedLastHolder, {{"who", who}}) : ""}}) +
           "\n";
  }
  return out;
}

}  // namespace

std::string verdict_line(const RunResult& r, Lang lang) {
  const Scenario& s = *r.scenario;
  std::string verdict = say(lang, W::VerdictLine, {{"kinds", verdict_kinds(r, lang)}});
  if (s.expect.present)
    verdict += r.as_expected() ? say(lang, W::AsExpected) : say(lang, W::NotAsExpectedWas, {{"kinds", kinds_text(s.expect.violations, lang)}});
  return verdict;
}

std::string text_report(const RunResult& r, const TextOptions& o) {
  const Scenario& s = *r.scenario;
  const Trace& trace = r.world->trace();
  const Lang lang = o.lang;
  auto count = [lang](std::uint64_t n, W one, W many) { return say_count(lang, n, one, many); };
  std::string out;
  out += paint(o.colour, "1", s.title) + "\n";
  out += fmt::format("  {}\n  {}\n", s.path, say(lang, W::SourceLine, {{"source", s.source}}));
  // A library scenario names the library, then what models it.
  std::string lock = s.lock.library.empty() ? s.lock.algorithm : s.lock.library + " — " + s.lock.algorithm;
  if (!s.lock.flavour.empty()) lock += " (" + s.lock.flavour + ")";
  if (s.lock.ttl) lock += say(lang, W::LockTtl, {{"d", format_duration(*s.lock.ttl)}});
  lock += say(lang, W::LockFencing, {{"fencing", std::string(fencing_name(s.lock.fencing))}});
  out += "  " + say(lang, W::SetupLine, {{"lock", lock}, {"clients", count(s.clients.size(), W::ClientOne, W::ClientMany)},
                                         {"nodes", count(s.nodes.size(), W::NodeOne, W::NodeMany)}, {"d", format_duration(s.duration)}}) + "\n\n";

  const Story story = tell_story(r, lang);
  const StoryClock& clock = story.clock;
  const std::vector<Step>& steps = story.steps;
  std::vector<StoryLine> lines;
  if (o.full)
    for (std::size_t i = 0; i < steps.size(); ++i) lines.push_back({.at = steps[i].at, .until = steps[i].at, .text = steps[i].text, .steps = {i}});
  else
    lines = fold_story(trace, steps, told_violations(r.violations), clock, lang);
  out += say(lang, W::WhatHappened) + "\n";
  out += story_text(lines, clock, o);
  if (!trace.complete())
    out += say(lang, W::LongRun, {{"kept", std::to_string(trace.events().size())}, {"events", count(trace.size(), W::EventOne, W::EventMany)}});

  out += "\n";
  out += paint(o.colour, r.verdict.empty() ? "32;1" : "31;1", verdict_line(r, lang)) + "\n";
  out += violations_text(r, clock, o);
  if (s.lock.fencing == Fencing::Token) {
    std::size_t writes = 0, reads = 0;
    for (const TraceEvent& e : trace.events())
      if (e.kind == Ev::StorageReject) ++(e.key == "read" ? reads : writes);  // key "read": a fenced read (sim/trace.hpp)
    const std::string w = count(writes, W::WriteOne, W::WriteMany), rd = count(reads, W::ReadOne, W::ReadMany);
    if (writes + reads > 0 && !r.verdict.count(ViolationKind::StaleWrite))
      out += say(lang, W::FencingKeptSafe, {{"what", reads == 0 ? w : writes == 0 ? rd : say(lang, W::WritesAndReads, {{"writes", w}, {"reads", rd}})}});
  } else {
    out += refusals_text(r, clock, lang);
  }
  if (r.budget_exhausted) out += say(lang, W::BudgetHit);
  std::size_t notifications = 0;
  for (const TraceEvent& e : trace.events()) notifications += e.kind == Ev::Sent && e.detail.rfind("NOTIFY ", 0) == 0;
  if (notifications > 0) out += say(lang, W::NotificationsSent, {{"n", count(notifications, W::NotificationOne, W::NotificationMany)}});
  if (r.harm.acknowledged > 0)
    out += say(lang, W::HarmLine, {{"lost", std::to_string(r.harm.lost)}, {"acknowledged", std::to_string(r.harm.acknowledged)},
                                   {"percent", fmt::format("{:.1f}%", 100 * r.harm.fraction())}});
  out += say(lang, W::Footer,
             {{"seed", std::to_string(r.seed)}, {"hash", r.trace_hash}, {"events", count(r.stats.events, W::EventOne, W::EventMany)},
              {"messages", count(r.stats.messages, W::MessageOne, W::MessageMany)},
              {"acquisitions", count(r.stats.acquisitions, W::AcquisitionOne, W::AcquisitionMany)}, {"replay", replay_command(r)}});
  return out;
}

std::string check_line(const RunResult& r, Lang lang) {
  const Scenario& s = *r.scenario;
  // The mark is padded to four columns as shown: a CJK character is two wide.
  const std::string mark = say(lang, r.as_expected() ? W::CheckOk : W::CheckFail);
  const std::string pad = lang == Lang::Zh ? "" : std::string(4 - std::min<std::size_t>(mark.size(), 4), ' ');
  std::string line = fmt::format("{}{} {:<60} {}", mark, pad, s.path, kinds_text(r.verdict, lang));
  if (!r.as_expected())
    line += say(lang, W::CheckExpected,
                {{"kinds", s.expect.present ? kinds_text(s.expect.violations, lang) : say(lang, W::NoViolation)}});
  return line;
}

std::string check_summary(Lang lang, std::size_t scenarios, int ok, int failed, int bad) {
  return say(lang, W::CheckSummary,
             {{"scenarios", say_count(lang, scenarios, W::ScenarioOne, W::ScenarioMany)}, {"ok", std::to_string(ok)}, {"failed", std::to_string(failed)},
              {"bad", bad ? say(lang, W::CheckUnreadable, {{"n", std::to_string(bad)}}) : ""}});
}

std::string violation_words(Lang lang, const Violation& v) { return say(lang, v.detail); }

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
                          {"detail", say(Lang::En, v.detail)}});
  }
  json expected = json::array();
  for (ViolationKind k : s.expect.violations) expected.push_back(violation_name(k));
  json j;
  j["scenario"] = s.path;
  j["title"] = s.title;
  j["seed"] = r.seed;
  if (!s.lock.library.empty()) j["library"] = s.lock.library;
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
  // The harm (judge/harm.hpp): of the increments the storage accepted and
  // acknowledged, how many the final state lost.
  j["harm"] = {{"accepted", r.harm.accepted},
               {"acknowledged", r.harm.acknowledged},
               {"lost", r.harm.lost},
               {"fraction", r.harm.fraction()}};
  // The story as records: what a reader of the text sees, each step with
  // the fields of its event (only those it has).
  if (!trace.events().empty() || trace.size() == 0) {
    json story = json::array();
    for (const Step& st : narrate(r)) {
      const TraceEvent& e = *st.event;
      json step = {{"at_ns", e.at.ns()}, {"process", e.process == kNoProc ? "world" : trace.name(e.process)},
                   {"kind", event_name(e.kind)}, {"text", st.text}};
      json fields = json::object();
      if (e.peer != kNoProc) fields["peer"] = trace.name(e.peer);
      if (e.owner != kNoProc) fields["owner"] = trace.name(e.owner);
      if (e.value != 0) fields["value"] = e.value;
      if (e.token >= 0) fields["token"] = e.token;
      if (!e.key.empty()) fields["key"] = e.key;
      if (e.wall != e.at) fields["wall_ns"] = e.wall.ns();
      if (e.mono != e.at) fields["mono_ns"] = e.mono.ns();
      if (!e.detail.empty()) fields["detail"] = e.detail;
      step["fields"] = fields;
      story.push_back(step);
    }
    j["story"] = story;
    j["story_complete"] = trace.complete();
  }
  j["budget_exhausted"] = r.budget_exhausted;
  j["trace_hash"] = r.trace_hash;
  j["replay"] = replay_command(r);
  return j.dump();
}

}  // namespace locksim
