#include <algorithm>
#include <map>
#include <set>

#include "reports/report.hpp"

namespace locksim {

namespace {

std::string clock_reading(const TraceEvent& e, const Trace& t, bool wall) {
  return t.name(e.process) + "'s " + (wall ? "wall" : "monotonic") + " clock reads " +
         format_instant(wall ? e.wall : e.mono);
}

// The lock value's owner, for "client1's key".
std::string owner_of(const Trace& t, ProcId owner) {
  return owner == kNoProc ? "nobody's" : t.name(owner) + "'s";
}

std::string token_text(std::int64_t token) {
  return token >= 0 ? " (token " + std::to_string(token) + ")" : "";
}

std::string names(const std::vector<std::string>& ns) {
  std::string s;
  for (std::size_t i = 0; i < ns.size(); ++i) s += (i == 0 ? "" : i + 1 == ns.size() ? " and " : ", ") + ns[i];
  return s;
}

// What a client's release asked of the lock's nodes and what came back,
// between its `releasing` and the end of the release: the words for a
// release that failed depend on it (no answer, refused, or nothing of its own
// left to remove).
struct ReleaseExchange {
  std::map<ProcId, int> asked;                // requests sent, per node
  std::map<ProcId, std::string> answered;     // the last reply received, per node
  std::set<ProcId> removed;                   // nodes that deleted a key at the client's request

  std::string failure(const Trace& t, const std::string& who) const {
    std::vector<std::string> silent, refused, not_own, removed_here, removed_unheard;
    for (const auto& [node, n] : asked) {
      const auto reply = answered.find(node);
      if (removed.count(node)) {
        (reply == answered.end() ? removed_unheard : removed_here).push_back(t.name(node));
      } else if (reply == answered.end()) {
        silent.push_back(t.name(node));
      } else if (reply->second.rfind("(error)", 0) == 0 || reply->second.rfind("ERROR", 0) == 0) {
        refused.push_back(t.name(node) + " refuses it (" + reply->second + ")");
      } else {
        not_own.push_back(t.name(node));
      }
    }
    if (asked.empty()) return who + "'s release fails: it reached no node";
    if (!not_own.empty() && silent.empty() && refused.empty() && removed_here.empty() && removed_unheard.empty())
      return who + "'s release removes nothing: the lock was no longer its own";
    std::vector<std::string> parts;
    if (!silent.empty()) parts.push_back(names(silent) + " did not answer in time");
    if (!refused.empty()) parts.push_back(names(refused));
    if (!not_own.empty()) parts.push_back(names(not_own) + " had no key of " + who + "'s left to remove");
    if (!removed_unheard.empty()) parts.push_back(names(removed_unheard) + " removed its key, but the answer was lost or late");
    if (!removed_here.empty()) parts.push_back("it removed its key on " + names(removed_here));
    return who + "'s release is not confirmed: " + names(parts);
  }
};

}  // namespace

std::vector<Step> narrate(const Trace& trace) {
  std::vector<Step> steps;
  // Whose clock is off from true time: only then is the reading worth a mention.
  std::vector<bool> clock_moved(trace.processes().size(), false);
  auto who = [&](const TraceEvent& e) { return trace.name(e.process); };
  auto peer = [&](const TraceEvent& e) { return trace.name(e.peer); };
  auto add = [&](const TraceEvent& e, std::string text) { steps.push_back({e.at, std::move(text)}); };
  auto local = [&](const TraceEvent& e) -> std::string {
    if (e.process >= clock_moved.size()) return "";
    if (!clock_moved[e.process] && e.wall == e.at) return "";
    return " — " + clock_reading(e, trace, true);
  };

  std::map<ProcId, ReleaseExchange> releasing;  // clients between `releasing` and the release's end
  auto lock_node = [&](ProcId p) { return p < trace.processes().size() && trace.processes()[p].role == ProcessRole::LockNode; };
  for (const TraceEvent& e : trace.events()) {
    if (e.process < clock_moved.size() && (e.wall != e.at || e.mono != e.at)) clock_moved[e.process] = true;
    // Heartbeats and sentinel queries are not the release's business.
    const bool chatter = e.detail.rfind("PING", 0) == 0 || e.detail.rfind("SENTINEL", 0) == 0;
    if (e.kind == Ev::Sent && lock_node(e.peer) && !chatter) {
      if (auto it = releasing.find(e.process); it != releasing.end()) ++it->second.asked[e.peer];
    } else if (e.kind == Ev::Delivered && lock_node(e.peer)) {
      if (auto it = releasing.find(e.process); it != releasing.end() && it->second.asked.count(e.peer))
        it->second.answered[e.peer] = e.detail;
    } else if (e.kind == Ev::KeyDeleted && e.peer != kNoProc) {
      if (auto it = releasing.find(e.peer); it != releasing.end()) it->second.removed.insert(e.process);
    } else if (e.kind == Ev::Crashed || e.kind == Ev::Released) {
      releasing.erase(e.process);
    }
    switch (e.kind) {
      case Ev::Acquiring:
        add(e, who(e) + " asks for the lock");
        break;
      case Ev::Acquired: {
        std::string s = who(e) + " acquires the lock on " + e.detail + token_text(e.token);
        if (e.value >= 0)
          s += "; it believes the lock is valid until " + format_instant(Instant::from_ns(e.value)) +
               " on its monotonic clock (now " + format_instant(e.mono) + ")";
        else
          s += "; the lock has no expiry";
        add(e, s);
        break;
      }
      case Ev::Claiming:
        add(e, who(e) + " claims the storage with its lock value (owner = " + e.key.substr(0, 8) + "…)");
        break;
      case Ev::Renewed:
        add(e, who(e) + " renews its lease" + (e.detail.empty() ? "" : ": " + e.detail));
        break;
      case Ev::AttemptFailed:
        add(e, who(e) + "'s attempt fails: " + e.detail);
        break;
      case Ev::AcquireFailed:
        add(e, who(e) + " gives up acquiring the lock");
        break;
      case Ev::OwnerChecked:
        add(e, who(e) + " GETs the key and sees its own value: it goes on to DEL it, in a separate command");
        break;
      case Ev::Read:
        add(e, who(e) + " reads counter = " + std::to_string(e.value) + " from storage");
        break;
      case Ev::Checked:
        add(e, who(e) + " checks its lock on its own clock: " + e.detail + ", so it goes ahead with the write");
        break;
      case Ev::Lost:
        add(e, who(e) + " gives up the lock: " + e.detail);
        break;
      case Ev::Writing:
        add(e, who(e) + " sends its write: counter = " + std::to_string(e.value) + token_text(e.token));
        break;
      case Ev::Releasing:
        releasing[e.process] = {};
        add(e, who(e) + " releases the lock");
        break;
      case Ev::Released:
        add(e, who(e) + "'s release is confirmed");
        break;
      case Ev::ReleaseFailed:
        add(e, releasing[e.process].failure(trace, who(e)));
        releasing.erase(e.process);
        break;
      case Ev::Paused:
        add(e, who(e) + " is paused for " + e.detail + " (a stop-the-world pause: nothing in it runs, not even timers)");
        break;
      case Ev::Resumed:
        add(e, who(e) + " resumes, unaware that it was paused; " + clock_reading(e, trace, false));
        break;
      case Ev::Crashed:
        add(e, who(e) + " crashes");
        break;
      case Ev::Restarted:
        add(e, who(e) + " restarts");
        break;
      case Ev::ClockJumped:
        add(e, who(e) + "'s wall clock jumps " + e.detail + "; " + clock_reading(e, trace, true));
        break;
      case Ev::ClockDrift:
        add(e, who(e) + "'s clocks now run at " + std::to_string(e.value / 1000) + " ppm off true time");
        break;
      case Ev::Expired:
        if (trace.processes()[e.process].role == ProcessRole::LockNode)
          add(e, who(e) + " expires '" + e.key + "' (" + owner_of(trace, e.owner) + " lock) " + e.detail + "; " +
                     clock_reading(e, trace, true));
        break;
      case Ev::KeyDeleted:
        if (e.owner != kNoProc && e.owner != e.peer)
          add(e, who(e) + " deletes '" + e.key + "' at " + peer(e) + "'s request — but it held " +
                     owner_of(trace, e.owner) + " lock");
        break;
      case Ev::StorageWrite:
        add(e, trace.name(e.process) + " accepts " + peer(e) + "'s write: counter = " + std::to_string(e.value) +
                   token_text(e.token));
        break;
      case Ev::StorageReject:
        add(e, trace.name(e.process) + " rejects " + peer(e) + "'s write of counter = " + std::to_string(e.value) +
                   ": " + e.detail);
        break;
      case Ev::Dropped:
        // What a fault or the network lost on the way (not deliveries to crashed processes).
        if (e.detail.rfind("partition", 0) == 0 || e.detail.rfind("dropped by", 0) == 0 || e.detail.rfind("lost", 0) == 0)
          add(e, "the network loses " + who(e) + "'s message to " + peer(e) + " (" + e.detail + ")");
        break;
      case Ev::Fault:
        add(e, (e.process == kNoProc ? "the network" : who(e)) + ": " + e.detail);
        break;
      case Ev::Promoted:
        add(e, who(e) + " is promoted to master" + local(e));
        break;
      default:
        break;
    }
  }
  return steps;
}

}  // namespace locksim
