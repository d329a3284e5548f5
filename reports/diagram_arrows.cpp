// The messages drawn as arrows: which are the lock's and the storage's (not
// the chatter), and with --arrows N the N most relevant of them.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <map>
#include <set>

#include "reports/diagram_canvas.hpp"

namespace locksim::diagram {

using markup::esc;

namespace {

bool lock_message(const std::string& detail) {
  for (const char* p : {"SET ", "SETNX", "DEL ", "GET ", "EVAL ", "INCR", "CREATE", "GETCHILDREN", "EXISTS", "DELETE",
                        "TXN", "RANGE", "WATCH", "NOTIFY", "LEASE", "CLAIM", "WRITE", "READ", "CLIENT REPLY SKIP"})
    if (detail.rfind(p, 0) == 0) return true;
  return false;
}

// A time in which a client's messages matter, and how much.
struct Window {
  ProcId client;
  Instant from, to;
  int weight;
};

// The attempt that got the lock (weight 4) and each release (weight 3), per client.
std::vector<Window> relevance_windows(const Trace& trace) {
  std::vector<Window> windows;
  std::map<ProcId, Instant> attempt, release;
  for (const TraceEvent& e : trace.events()) {
    if (!is_client(trace, e.process)) continue;
    switch (e.kind) {
      case Ev::Acquiring:
      case Ev::AttemptFailed: attempt[e.process] = e.at; break;
      case Ev::Acquired:
        if (attempt.count(e.process)) windows.push_back({e.process, attempt[e.process], e.at, 4});
        break;
      case Ev::Releasing: release[e.process] = e.at; break;
      case Ev::Released:
      case Ev::ReleaseFailed:
        if (release.count(e.process)) windows.push_back({e.process, release[e.process], e.at, 3});
        break;
      default: break;
    }
  }
  return windows;
}

// Each arrow's relevance: within a window of its client's, a storage write,
// a lost message, near a violation (more when between its participants).
void score(const Canvas& c, std::vector<Arrow>& all, const std::vector<Window>& windows) {
  const double near_px = 40;
  for (Arrow& a : all) {
    const ProcId from = a.sent->process, to = a.sent->peer;
    const double x0 = c.x(a.sent->at), x1 = c.x(a.end->at);
    // A lost message weighs less than a grant's: a retry loop loses many,
    // and within a grant's attempt it weighs as much as the grants.
    int weight = a.end->kind == Ev::Dropped ? 2 : 0;
    for (const Window& w : windows)
      if ((w.client == from || w.client == to) && a.sent->at >= w.from && a.end->at <= w.to) weight = std::max(weight, w.weight);
    a.relevance += weight;
    if (a.sent->detail.rfind("WRITE", 0) == 0) a.relevance += 3;
    for (const Violation& v : c.run.violations) {
      const bool near = x1 >= c.x(v.at) - near_px && x0 <= c.x(v.until) + near_px;
      if (!near) continue;
      a.relevance += 2;
      for (ProcId p : v.processes)
        if (p == from || p == to) a.relevance += 8;
    }
  }
}

// Which of the scored arrows to keep: the most relevant first; of the tier
// that does not fit whole (often a retry loop of equals), an even sample over
// the run, not its first ones.
std::vector<bool> most_relevant(const std::vector<Arrow>& all, std::size_t max_arrows) {
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return all[a].relevance > all[b].relevance; });
  std::vector<bool> keep(all.size(), false);
  std::size_t taken = 0;
  while (taken < max_arrows) {
    const int tier = all[order[taken]].relevance;
    std::size_t tier_end = taken;
    while (tier_end < order.size() && all[order[tier_end]].relevance == tier) ++tier_end;
    const std::size_t room = max_arrows - taken, n = tier_end - taken;
    if (n <= room) {
      for (std::size_t i = taken; i < tier_end; ++i) keep[order[i]] = true;
      taken = tier_end;
      continue;
    }
    for (std::size_t k = 0; k < room; ++k) keep[order[taken + (k * n + n / 2) / room]] = true;  // in time order within the tier
    break;
  }
  return keep;
}

}  // namespace

Messages collect_messages(const Trace& trace, const Lanes& lanes, bool storage_messages, const std::vector<RetryRun>& retries) {
  const auto& procs = trace.processes();
  Messages m;
  // A message sent within a client's retry loop, by it or to it.
  const RetryIndex loops(retries);
  auto in_retry = [&](const TraceEvent& sent) { return loops.covers(sent.process, sent.at) || loops.covers(sent.peer, sent.at); };
  std::map<std::int64_t, const TraceEvent*> sent;
  // A server answers a client's requests in order: whether each answer
  // still to come is to a request we draw (a lock or storage command, not a
  // heartbeat).
  std::map<std::pair<ProcId, ProcId>, std::deque<bool>> pending;
  auto server = [&](ProcId p) { return p < procs.size() && procs[p].role != ProcessRole::Client; };
  for (const TraceEvent& e : trace.events()) {
    if (e.kind == Ev::Sent) {
      if (e.peer >= procs.size()) continue;
      if (!storage_messages && (procs[e.peer].role == ProcessRole::Storage || procs[e.process].role == ProcessRole::Storage)) continue;
      bool draw = lock_message(e.detail);
      if (is_client(trace, e.process) && server(e.peer)) {
        if (e.detail.rfind("CLIENT REPLY SKIP", 0) != 0) pending[{e.peer, e.process}].push_back(draw);
      } else if (server(e.process) && is_client(trace, e.peer) && !draw && e.detail.rfind("\"unlocked", 0) != 0) {
        auto& q = pending[{e.process, e.peer}];  // an answer: drawn when its request is
        if (!q.empty()) {
          draw = q.front();
          q.pop_front();
        }
      } else if (server(e.process) && is_client(trace, e.peer)) {
        draw = true;  // a push: a watch notification, an unlock message
      }
      if (draw) sent[e.value] = &e;
      continue;
    }
    if (e.kind != Ev::Delivered && e.kind != Ev::Dropped) continue;
    auto it = sent.find(e.value);
    if (it == sent.end()) continue;
    const TraceEvent* from = it->second;
    sent.erase(it);
    const ProcId to = e.kind == Ev::Dropped ? from->peer : e.process;
    if (!lanes.shown[from->process] || !lanes.shown[to]) {
      ++m.of_hidden;
      continue;
    }
    if (in_retry(*from)) {
      ++m.in_retries;
      continue;
    }
    m.arrows.push_back({from, &e});
  }
  return m;
}

void select_arrows(const Canvas& c, Messages& m, std::size_t max_arrows) {
  std::vector<Arrow>& all = m.arrows;
  if (all.size() <= max_arrows) return;
  // Windows in which a client's messages matter: the attempt that got the
  // lock, its release, and around each violation for its participants.
  score(c, all, relevance_windows(c.trace));
  const std::vector<bool> keep = most_relevant(all, max_arrows);
  std::vector<Arrow> kept;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (keep[i]) kept.push_back(all[i]);
  m.skipped = all.size() - kept.size();
  all = std::move(kept);
}

namespace {

bool refusal(const std::string& reply) {
  for (const char* p : {"(nil)", "(error)", "ERROR", "(integer) 0", "REJECTED"})
    if (reply.rfind(p, 0) == 0) return true;
  return false;
}

// "WRITE counter=1 token=34" -> "write 1, token 34".
std::string write_label(const std::string& detail, Lang lang = Lang::En) {
  std::string label = say(lang, W::LabelWrite);
  if (const auto v = detail.find("counter="); v != std::string::npos)
    label = say(lang, W::LabelWriteValue, {{"value", detail.substr(v + 8, detail.find(' ', v) - v - 8)}});
  if (const auto t = detail.find("token="); t != std::string::npos)
    label += say(lang, W::LabelToken, {{"token", detail.substr(t + 6, detail.find(' ', t) - t - 6)}});
  return label;
}

// An arrow's label in the picture's language (label_arrows names them in English).
std::string shown_label(const Canvas& c, const Arrow& a) {
  switch (a.label) {
    case Arrow::Label::Grant: return c.say(W::LabelGrant);
    case Arrow::Label::Release: return c.say(W::LabelRelease);
    case Arrow::Label::Write:
    case Arrow::Label::None: break;
  }
  return write_label(a.sent->detail, c.lang);
}

}  // namespace

void label_arrows(const Trace& trace, const std::string& lock_key, std::vector<Arrow>& arrows) {
  const auto& procs = trace.processes();
  auto node = [&](ProcId p) { return p < procs.size() && procs[p].role == ProcessRole::LockNode; };
  // The winning attempts and the releases, per client; and which command
  // each of a node's replies answers (the node traces the command, then
  // sends its answer).
  std::vector<Window> grants, releases;
  std::map<ProcId, Instant> attempt, release;
  std::map<std::pair<ProcId, ProcId>, const TraceEvent*> last_command;
  std::set<const TraceEvent*> drawn;                        // the arrows' sends
  for (const Arrow& a : arrows) drawn.insert(a.sent);
  std::map<const TraceEvent*, const TraceEvent*> answers;  // a drawn reply's send -> the command it answers
  std::map<ProcId, const TraceEvent*> last_reply;           // per client: the last node's reply it received
  std::set<const TraceEvent*> granting;                     // the last reply before each grant
  for (const TraceEvent& e : trace.events()) {
    switch (e.kind) {
      case Ev::Acquiring: case Ev::AttemptFailed: attempt[e.process] = e.at; break;
      case Ev::Acquired:
        grants.push_back({e.process, attempt.count(e.process) ? attempt[e.process] : e.at, e.at, 0});
        if (last_reply.count(e.process)) granting.insert(last_reply[e.process]);
        break;
      case Ev::Delivered:
        if (node(e.peer)) last_reply[e.process] = &e;
        break;
      case Ev::Releasing: release[e.process] = e.at; break;
      case Ev::Released: case Ev::ReleaseFailed:
        if (release.count(e.process)) releases.push_back({e.process, release[e.process], e.at, 0});
        break;
      case Ev::Command: last_command[{e.process, e.peer}] = &e; break;
      case Ev::Sent:
        if (node(e.process) && drawn.count(&e))
          if (auto it = last_command.find({e.process, e.peer}); it != last_command.end()) answers[&e] = it->second;
        break;
      default: break;
    }
  }
  auto within = [](const std::vector<Window>& ws, ProcId client, Instant t) -> const Window* {
    for (const Window& w : ws)
      if (w.client == client && t > w.from && t <= w.to) return &w;
    return nullptr;
  };
  // Per winning attempt: its replies from nodes; the ones that took the lock are grants.
  std::map<const Window*, std::vector<Arrow*>> replies;
  for (Arrow& a : arrows) {
    const TraceEvent& s = *a.sent;
    const bool lost = a.end->kind == Ev::Dropped;
    if (s.detail.rfind("WRITE", 0) == 0) {
      a.label = Arrow::Label::Write;
    } else if (!node(s.process) && node(s.peer) && within(releases, s.process, s.at + Duration::ns(1))) {
      a.label = Arrow::Label::Release;
    } else if (node(s.process) && !lost && !refusal(s.detail)) {
      if (const Window* w = within(grants, s.peer, a.end->at)) replies[w].push_back(&a);
    }
  }
  for (auto& [w, rs] : replies) {
    bool any = false;
    for (Arrow* a : rs) {
      const auto it = answers.find(a->sent);
      if (it != answers.end() && takes_lock(it->second->detail, lock_key)) {
        a->label = Arrow::Label::Grant;
        any = true;
      }
    }
    // A coordination service grants by its last answer before the grant
    // (ZooKeeper's children list, etcd's range), if that one is drawn.
    if (!any)
      for (Arrow* a : rs)
        if (granting.count(a->end)) a->label = Arrow::Label::Grant;
  }
}

std::string draw_arrows(const Canvas& c, const std::vector<Arrow>& arrows) {
  std::string out;
  for (const Arrow& a : arrows) {
    const TraceEvent& from = *a.sent;
    const TraceEvent& e = *a.end;
    const bool lost = e.kind == Ev::Dropped;
    const ProcId to = lost ? from.peer : e.process;
    // A lost message: dashed red, towards its destination's lane (so that it
    // names it), with no head and a ✕ just short of the lane.
    const double x0 = c.x(from.at), y0 = c.y(from.process), x1 = c.x(e.at), y1 = c.y(to);
    out += fmt::format(R"~(<line class="message{}" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="1"{}><title>{}</title></line>)~",
                       lost ? " dropped" : "", x0, y0, x1, y1, lost ? "#d33" : "#999",
                       lost ? R"~( stroke-dasharray="3 2" stroke-opacity="0.6")~" : R"~( marker-end="url(#arrow)")~",
                       c.say(lost ? W::TipMessageLost : W::TipMessageDelivered,
                             {{"from", c.name(from.process)}, {"to", c.name(to)}, {"content", esc(from.detail)}, {"sent", format_instant(from.at)},
                              {"at", format_instant(e.at)}, {"why", esc(translate_detail(c.lang, e.detail))}}));
    if (lost) {
      const double f = std::max(0.5, 1 - 9 / std::max(1.0, std::hypot(x1 - x0, y1 - y0)));
      out += fmt::format(R"~(<text class="lost-mark" x="{:.1f}" y="{:.1f}" fill="#d33" font-size="{:g}" text-anchor="middle">✕</text>)~",
                         x0 + f * (x1 - x0), y0 + f * (y1 - y0) + 3, c.fs(9));
    }
  }
  return out;
}

std::string draw_arrow_labels(const Canvas& c, const EventInk& ink, const std::vector<Arrow>& arrows) {
  // Writes first, then releases, then grants: where two would overlap, the first placed stays.
  std::vector<const Arrow*> labelled;
  for (const Arrow& a : arrows)
    if (a.label != Arrow::Label::None) labelled.push_back(&a);
  // The enum's order is the rank: writes, releases, grants.
  auto rank = [](const Arrow* a) { return static_cast<int>(a->label); };
  std::stable_sort(labelled.begin(), labelled.end(), [&](const Arrow* a, const Arrow* b) { return rank(a) < rank(b); });
  std::vector<std::array<double, 4>> placed = ink.label_boxes;
  std::string out;
  for (const Arrow* a : labelled) {
    const bool lost = a->end->kind == Ev::Dropped;
    const ProcId to = lost ? a->sent->peer : a->end->process;
    // By the lane it matters to: a grant where it arrives, a release or a
    // write where it leaves (arrows a few ms long are near vertical on a
    // page of seconds: a label half way would sit by another lane).
    const bool at_end = a->label == Arrow::Label::Grant;
    const double xs = c.x(a->sent->at), ys = c.y(a->sent->process), xe = c.x(a->end->at), ye = c.y(to);
    const double len = std::max(1.0, std::hypot(xe - xs, ye - ys)), d = std::min(len / 2, c.fs(16)) / len;
    const double f = at_end ? 1 - d : d, x = xs + f * (xe - xs), y = ys + f * (ye - ys);
    const std::string text = shown_label(c, *a);
    const double w = markup::text_width(text, c.fs(9)), h = c.fs(10);
    const double left = inside(c, x + 3, w);  // a write near the run's end: the label ends inside the picture
    const std::array<double, 4> box{left, y - h / 2, left + w, y + h / 2};
    bool clash = false;
    for (const auto& b : placed) clash = clash || (box[0] < b[2] + 2 && box[2] > b[0] - 2 && box[1] < b[3] && box[3] > b[1]);
    if (clash) continue;
    placed.push_back(box);
    out += fmt::format(R"~(<text class="arrow-label" x="{:.1f}" y="{:.1f}" font-size="{:g}" fill="{}" stroke="white" stroke-width="3" paint-order="stroke">{}</text>)~",
                       box[0], y + h / 2 - 2, c.fs(9), lost ? "#c33" : "#333", esc(text));
  }
  return out;
}

}  // namespace locksim::diagram
