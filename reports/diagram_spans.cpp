// What holds over a span of time, read from the trace and drawn along the
// lanes: whose value each lock node holds, who is cut off from whom, and a
// client's retry loop as one mark.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>

#include "lockalgos/registry.hpp"
#include "reports/diagram_canvas.hpp"
#include "reports/report.hpp"

namespace locksim::diagram {

using markup::esc;
using markup::text_width;

namespace {

bool lock_node(const Trace& t, ProcId p) { return p < t.processes().size() && t.processes()[p].role == ProcessRole::LockNode; }

// The first four words of a traced command, and what follows " -> " (its result).
struct Words {
  std::string_view word[4];
  std::string_view result;
};
Words words_of(std::string_view detail) {
  Words w;
  const auto arrow = detail.rfind(" -> ");
  if (arrow != std::string_view::npos) {
    w.result = detail.substr(arrow + 4);
    detail = detail.substr(0, arrow);
  }
  for (std::string_view& word : w.word) {
    const auto start = detail.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    detail.remove_prefix(start);
    const auto end = std::min(detail.find(' '), detail.size());
    word = detail.substr(0, end);
    detail.remove_prefix(end);
  }
  return w;
}

}  // namespace

std::string lock_value(const std::string& detail) {
  const Words w = words_of(detail);
  return std::string(w.word[0] == "EVAL" ? w.word[3] : w.word[2]);  // SET lock VALUE ..., EVAL script lock VALUE ...
}

bool takes_lock(const std::string& detail, const std::string& key) {
  const Words w = words_of(detail);
  const std::string_view verb = w.word[0], arg = w.word[1], result = w.result;
  if ((verb == "EVAL" ? w.word[2] : arg) != key) return false;
  // The acquiring commands of the Redis-family algorithms and what they
  // answer when they take the lock (lockalgos/redis_single.cpp, redisson.cpp).
  if (verb == "SET") return result == "OK";
  if (verb == "SETNX") return result == "(integer) 1";
  if (verb == "EVAL" && arg == "redisson-trylock") return result == "(nil)";
  if (verb == "EVAL" && arg == "redisson-fenced-trylock") return result.substr(0, 2) == "OK";
  if (verb == "EVAL" && arg == "acquire-with-token") return result.substr(0, 9) == "(integer)";
  return false;
}

std::vector<Holding> holdings(const RunResult& r, const std::vector<RetryRun>& retries) {
  const Scenario& s = *r.scenario;
  // Redis's keys only, on masters that nothing replicates or fails over.
  const AlgorithmInfo* algorithm = find_algorithm(s.lock.algorithm);
  if (!algorithm || algorithm->server != ServerKind::Redis || s.sentinel.present) return {};
  for (const NodeConfig& n : s.nodes)
    if (!n.replica_of.empty()) return {};
  const Trace& t = r.world->trace();
  std::map<std::string, Persistence> persistence;
  for (const NodeConfig& n : s.nodes) persistence[n.name] = n.persistence;
  // The values of acquisitions that got the lock (a MultiLock's are listed
  // with commas); a node holding another value holds a failed try's.
  std::set<std::string> granted;
  for (const TraceEvent& e : t.events())
    if (e.kind == Ev::Acquired) {
      std::istringstream values(e.key);
      for (std::string v; std::getline(values, v, ',');) granted.insert(v);
    }
  std::vector<Holding> out;
  std::map<ProcId, Holding> held;  // per node: what it holds now (`to` unset)
  std::map<ProcId, Holding> kept;  // a crashed node's holding, back at its restart (AOF)
  auto close = [&](ProcId node, Instant at) {
    if (auto it = held.find(node); it != held.end()) {
      it->second.to = at;
      out.push_back(it->second);
      held.erase(it);
    }
  };
  for (const TraceEvent& e : t.events()) {
    if (!lock_node(t, e.process)) continue;
    switch (e.kind) {
      case Ev::Command:
        if (e.peer < t.processes().size() && t.processes()[e.peer].role == ProcessRole::Client && takes_lock(e.detail, s.lock.key)) {
          if (auto it = held.find(e.process); it != held.end() && it->second.holder == e.peer) break;  // re-entered, extended
          close(e.process, e.at);
          held[e.process] = {.node = e.process, .holder = e.peer, .from = e.at, .to = e.at, .granted = granted.count(lock_value(e.detail)) > 0};
        }
        break;
      case Ev::Expired:
      case Ev::KeyDeleted:
        if (e.key == s.lock.key) close(e.process, e.at);
        break;
      case Ev::Crashed:
        if (auto it = held.find(e.process); it != held.end() && persistence[t.name(e.process)] == Persistence::AofAlways) kept[e.process] = it->second;
        close(e.process, e.at);
        break;
      case Ev::Restarted:
        if (auto it = kept.find(e.process); it != kept.end()) {
          held[e.process] = it->second;
          held[e.process].from = e.at;
          kept.erase(it);
        }
        break;
      default:
        break;
    }
  }
  for (const auto& [node, h] : std::map(held)) close(node, r.stats.sim_time);
  // A failed try's value within a retry loop, set and unlocked at once, is the loop's noise.
  const RetryIndex loops(retries);
  std::erase_if(out, [&](const Holding& h) { return !h.granted && loops.covers(h.holder, h.from); });
  return out;
}

namespace {

// "partition [client1] | [redis4, redis5] for 2s": the groups, by name.
std::optional<Cut> parse_partition(const Trace& t, const std::string& detail) {
  if (detail.rfind("partition [", 0) != 0) return std::nullopt;
  Cut cut;
  cut.one_way = detail.find("] -/-> [") != std::string::npos;
  for (std::size_t open = detail.find('['); open != std::string::npos; open = detail.find('[', open + 1)) {
    const auto close = detail.find(']', open);
    if (close == std::string::npos) break;
    cut.groups.emplace_back();
    std::istringstream names(detail.substr(open + 1, close - open - 1));
    for (std::string n; std::getline(names, n, ',');) {
      n.erase(0, n.find_first_not_of(' '));
      if (auto p = t.find(n)) cut.groups.back().push_back(*p);
    }
  }
  return cut.groups.size() >= 2 ? std::optional(cut) : std::nullopt;
}

}  // namespace

std::vector<Cut> partitions(const RunResult& r) {
  const Trace& t = r.world->trace();
  std::vector<Cut> out;
  std::vector<std::pair<std::string, Cut>> open;  // by the label that heals it
  for (const TraceEvent& e : t.events()) {
    if (e.kind != Ev::Fault || e.process != kNoProc) continue;
    if (auto cut = parse_partition(t, e.detail)) {
      cut->from = e.at;
      const auto for_ = e.detail.find(" for ");
      open.emplace_back(e.detail.substr(0, for_), *cut);
    } else if (e.detail.rfind("healed: ", 0) == 0 || e.detail.rfind("heal:", 0) == 0) {
      const bool all = e.detail.rfind("heal:", 0) == 0;
      for (auto it = open.begin(); it != open.end();) {
        if (all || e.detail.substr(8) == it->first) {
          it->second.to = e.at;
          out.push_back(it->second);
          it = open.erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  for (auto& [label, cut] : open) {
    cut.to = r.stats.sim_time;
    out.push_back(cut);
  }
  std::stable_sort(out.begin(), out.end(), [](const Cut& a, const Cut& b) { return a.from < b.from; });
  return out;
}

namespace {

std::string some_names(const Canvas& c, const std::vector<ProcId>& ps) {
  if (ps.size() > 3) return c.say(W::LabelProcesses, {{"n", std::to_string(ps.size())}});
  std::vector<std::string> names;
  for (ProcId p : ps) names.push_back(c.trace.name(p));
  return say_list(c.lang, names);
}

}  // namespace

std::string draw_partitions(const Canvas& c, EventInk& ink, const std::vector<Cut>& cuts) {
  std::string out;
  for (const Cut& cut : cuts) {
    const double x0 = c.x(cut.from), x1 = std::max(c.x(cut.to), x0 + 2);
    // The band goes on the smaller side, the one cut off ([client1] | [redis4, redis5]: client1).
    std::size_t g = 0;
    for (std::size_t h = 1; h < cut.groups.size(); ++h)
      if (cut.groups[h].size() < cut.groups[g].size()) g = h;
    std::vector<ProcId> others;
    for (std::size_t h = 0; h < cut.groups.size(); ++h)
      if (h != g) others.insert(others.end(), cut.groups[h].begin(), cut.groups[h].end());
    const std::string text = !cut.one_way ? c.say(W::PartitionCutOff, {{"names", some_names(c, others)}})
                             : g == 0     ? c.say(W::PartitionTo, {{"names", some_names(c, others)}})
                                          : c.say(W::PartitionFrom, {{"names", some_names(c, cut.groups[0])}});
    for (ProcId p : cut.groups[g]) {
      if (!c.shown(p)) continue;
      const double h = c.lane * 0.8, y = c.y(p) - h / 2;
      std::string label;
      if (const auto at = lane_label(c, ink, p, x0 + 3, text, c.slides))
        label = fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="#808">{}</text>)~", at->x, at->y, c.fs(10), esc(text));
      out += fmt::format(R"~(<g class="partition" data-process="{}"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="#a0a" fill-opacity="0.06" stroke="#a0a" stroke-opacity="0.4" stroke-dasharray="4 3"/>{}<title>{}</title></g>)~",
                         c.name(p), x0, y, x1 - x0, h, label,
                         esc(c.say(W::TipPartition, {{"who", c.trace.name(p)}, {"what", text.substr(4)}, {"from", format_instant(cut.from)},
                                                     {"to", format_instant(cut.to)}})));
    }
  }
  return out;
}

std::string draw_holdings(const Canvas& c, const std::vector<Holding>& hs) {
  std::string out;
  for (const Holding& h : hs) {
    if (!c.shown(h.node)) continue;
    const double x0 = c.x(h.from), w = std::max(1.5, c.x(h.to) - x0), y = c.y(h.node), hh = c.fs(11);
    const std::string who = c.trace.name(h.holder);
    const std::string name = h.granted && text_width(who, c.fs(9)) + 4 < w
                                 ? fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="white" font-weight="bold">{}</text>)~",
                                               x0 + 2, y + c.fs(3.5), c.fs(9), esc(who))
                                 : "";
    out += fmt::format(R"~(<g class="holds" data-process="{}" data-holder="{}"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" fill-opacity="{}"/>{}<title>{}</title></g>)~",
                       c.name(h.node), esc(who), x0, y - hh / 2, w, hh, c.colour(h.holder), h.granted ? "0.8" : "0.25", name,
                       c.say(W::TipHoldsValue, {{"node", c.name(h.node)}, {"who", esc(who)}, {"from", format_instant(h.from)}, {"to", format_instant(h.to)}}));
  }
  return out;
}

namespace {

bool too_few(const std::string& detail) {
  const auto t = parse_tally(detail);
  return t && t->too_few();
}

}  // namespace

std::vector<RetryRun> retry_runs(const Trace& trace) {
  constexpr std::size_t kLeast = 3;  // failed attempts in a row worth one mark
  struct Open {
    RetryRun run;
    std::vector<Instant> drops;
    std::map<std::string, std::size_t> reasons;
  };
  std::map<ProcId, Open> open;
  std::vector<RetryRun> out;
  auto flush = [&](ProcId p) {
    auto it = open.find(p);
    if (it == open.end()) return;
    Open& o = it->second;
    if (o.run.attempts >= kLeast) {
      o.run.lost = static_cast<std::size_t>(std::count_if(o.drops.begin(), o.drops.end(), [&](Instant t) { return t <= o.run.to; }));
      o.run.reasons.assign(o.reasons.begin(), o.reasons.end());
      out.push_back(o.run);
    }
    open.erase(it);
  };
  for (const TraceEvent& e : trace.events()) {
    const bool client = e.process < trace.processes().size() && trace.processes()[e.process].role == ProcessRole::Client;
    if (e.kind == Ev::Dropped) {
      for (ProcId p : {e.process, e.peer})
        if (auto it = open.find(p); it != open.end()) it->second.drops.push_back(e.at);
      continue;
    }
    if (!client) continue;
    switch (e.kind) {
      case Ev::Acquiring:
        flush(e.process);
        open[e.process].run = {.client = e.process, .from = e.at, .to = e.at};
        break;
      case Ev::AttemptFailed:
        if (too_few(e.detail)) {
          if (!open.count(e.process)) open[e.process].run = {.client = e.process, .from = e.at, .to = e.at};
          Open& o = open[e.process];
          ++o.run.attempts;
          o.run.to = e.at;
          ++o.reasons[e.detail.substr(0, e.detail.find(')') + 1)];
        } else {
          flush(e.process);  // failed otherwise: told on its own
        }
        break;
      case Ev::Acquired:
      case Ev::AcquireFailed:
      case Ev::Crashed:
        flush(e.process);
        break;
      default:
        break;
    }
  }
  for (const auto& [p, o] : std::map(open)) flush(p);
  std::stable_sort(out.begin(), out.end(), [](const RetryRun& a, const RetryRun& b) { return a.from < b.from; });
  return out;
}

std::string draw_retries(const Canvas& c, EventInk& ink, const std::vector<RetryRun>& runs) {
  std::string out;
  for (const RetryRun& run : runs) {
    if (!c.shown(run.client)) continue;
    const double x0 = c.x(run.from), w = std::max(3.0, c.x(run.to) - x0), y = c.y(run.client);
    std::string text = c.say(W::RetryBand, {{"n", std::to_string(run.attempts)}});
    if (run.lost) text += c.say(W::RetryBandLost, {{"n", std::to_string(run.lost)}});
    std::string label;
    if (const auto at = lane_label(c, ink, run.client, x0 + 2, text, c.slides))
      label = fmt::format(R"~(<text x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="#555">{}</text>)~", at->x, at->y, c.fs(10), esc(text));
    std::string why;  // each reason in the picture's words (the phrasebook's tallies), and how often
    for (const auto& [reason, n] : run.reasons)
      why += (why.empty() ? "" : std::string(c.say(W::NoteJoin))) + translate_detail(c.lang, reason) + " ×" + std::to_string(n);
    const std::string tip = c.say(W::TipRetries, {{"who", c.trace.name(run.client)}, {"what", text}, {"from", format_instant(run.from)},
                                                  {"to", format_instant(run.to)}, {"why", why}, {"lost", std::to_string(run.lost)}});
    out += fmt::format(R"~(<g class="retries" data-process="{}"><rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="url(#retry)" stroke="#999" stroke-width="0.5"/>{}<title>{}</title></g>)~",
                       c.name(run.client), x0, y - c.fs(4), w, c.fs(8), label, esc(tip));
  }
  return out;
}

}  // namespace locksim::diagram
