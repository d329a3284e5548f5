#include <algorithm>
#include <map>
#include <optional>
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

// The story told event by event: what it carries from one event to the next.
class Narrator {
 public:
  explicit Narrator(const Trace& trace) : trace_(trace), clock_moved_(trace.processes().size(), false) {}

  // The event's step in the story, if it has one.
  std::optional<std::string> tell(const TraceEvent& e) {
    if (e.process < clock_moved_.size() && (e.wall != e.at || e.mono != e.at)) clock_moved_[e.process] = true;
    follow_release(e);
    if (auto s = tell_client(e)) return s;
    return tell_world(e);
  }

 private:
  std::string who(const TraceEvent& e) const { return trace_.name(e.process); }
  std::string peer(const TraceEvent& e) const { return trace_.name(e.peer); }
  bool lock_node(ProcId p) const { return p < trace_.processes().size() && trace_.processes()[p].role == ProcessRole::LockNode; }
  // The wall clock's reading, where the process's clock is off from true
  // time: only then is the reading worth a mention.
  std::string local(const TraceEvent& e) const {
    if (e.process >= clock_moved_.size()) return "";
    if (!clock_moved_[e.process] && e.wall == e.at) return "";
    return " — " + clock_reading(e, trace_, true);
  }

  // What each releasing client asked of the lock's nodes and what came back.
  void follow_release(const TraceEvent& e) {
    // Heartbeats and sentinel queries are not the release's business.
    const bool chatter = e.detail.rfind("PING", 0) == 0 || e.detail.rfind("SENTINEL", 0) == 0;
    if (e.kind == Ev::Sent && lock_node(e.peer) && !chatter) {
      if (auto it = releasing_.find(e.process); it != releasing_.end()) ++it->second.asked[e.peer];
    } else if (e.kind == Ev::Delivered && lock_node(e.peer)) {
      if (auto it = releasing_.find(e.process); it != releasing_.end() && it->second.asked.count(e.peer))
        it->second.answered[e.peer] = e.detail;
    } else if (e.kind == Ev::KeyDeleted && e.peer != kNoProc) {
      if (auto it = releasing_.find(e.peer); it != releasing_.end()) it->second.removed.insert(e.process);
    } else if (e.kind == Ev::Crashed || e.kind == Ev::Released) {
      releasing_.erase(e.process);
    }
  }

  // A client's steps with the lock and the storage.
  std::optional<std::string> tell_client(const TraceEvent& e) {
    switch (e.kind) {
      case Ev::Acquiring:
        return who(e) + " asks for the lock";
      case Ev::Acquired: {
        std::string s = who(e) + " acquires the lock on " + e.detail + token_text(e.token);
        if (e.value >= 0)
          s += "; it believes the lock is valid until " + format_instant(Instant::from_ns(e.value)) +
               " on its monotonic clock (now " + format_instant(e.mono) + ")";
        else
          s += "; the lock has no expiry";
        return s;
      }
      case Ev::Claiming:
        return who(e) + " claims the storage with its lock value (owner = " + e.key.substr(0, 8) + "…)";
      case Ev::Renewed:
        return who(e) + " renews its lease" + (e.detail.empty() ? "" : ": " + e.detail);
      case Ev::AttemptFailed:
        return who(e) + "'s attempt fails: " + e.detail;
      case Ev::AcquireFailed:
        return who(e) + " gives up acquiring the lock";
      case Ev::OwnerChecked:
        return who(e) + " GETs the key and sees its own value: it goes on to DEL it, in a separate command";
      case Ev::Read:
        return who(e) + " reads counter = " + std::to_string(e.value) + " from storage";
      case Ev::Checked:
        return who(e) + " checks its lock on its own clock: " + e.detail + ", so it goes ahead with the write";
      case Ev::Lost:
        return who(e) + " gives up the lock: " + e.detail;
      case Ev::Writing:
        return who(e) + " sends its write: counter = " + std::to_string(e.value) + token_text(e.token);
      case Ev::Releasing:
        releasing_[e.process] = {};
        return who(e) + " releases the lock";
      case Ev::Released:
        return who(e) + "'s release is confirmed";
      case Ev::ReleaseFailed: {
        std::string s = releasing_[e.process].failure(trace_, who(e));
        releasing_.erase(e.process);
        return s;
      }
      default:
        return std::nullopt;
    }
  }

  // What happens to the processes, their clocks, the nodes' keys, the storage and the network.
  std::optional<std::string> tell_world(const TraceEvent& e) const {
    switch (e.kind) {
      case Ev::Paused:
        return who(e) + " is paused for " + e.detail + " (a stop-the-world pause: nothing in it runs, not even timers)";
      case Ev::Resumed:
        return who(e) + " resumes, unaware that it was paused; " + clock_reading(e, trace_, false);
      case Ev::Crashed:
        return who(e) + " crashes";
      case Ev::Restarted:
        return who(e) + " restarts";
      case Ev::ClockJumped:
        return who(e) + "'s wall clock jumps " + e.detail + "; " + clock_reading(e, trace_, true);
      case Ev::ClockDrift:
        return who(e) + "'s clocks now run at " + std::to_string(e.value / 1000) + " ppm off true time";
      case Ev::Expired:
        if (trace_.processes()[e.process].role != ProcessRole::LockNode) return std::nullopt;
        return who(e) + " expires '" + e.key + "' (" + owner_of(trace_, e.owner) + " lock) " + e.detail + "; " +
               clock_reading(e, trace_, true);
      case Ev::KeyDeleted:
        if (e.owner == kNoProc || e.owner == e.peer) return std::nullopt;
        return who(e) + " deletes '" + e.key + "' at " + peer(e) + "'s request — but it held " + owner_of(trace_, e.owner) + " lock";
      case Ev::StorageWrite:
        return trace_.name(e.process) + " accepts " + peer(e) + "'s write: counter = " + std::to_string(e.value) + token_text(e.token);
      case Ev::StorageReject:
        return trace_.name(e.process) + " rejects " + peer(e) + "'s write of counter = " + std::to_string(e.value) + ": " + e.detail;
      case Ev::Dropped:
        // What a fault or the network lost on the way (not deliveries to crashed processes).
        if (e.detail.rfind("partition", 0) == 0 || e.detail.rfind("dropped by", 0) == 0 || e.detail.rfind("lost", 0) == 0)
          return "the network loses " + who(e) + "'s message to " + peer(e) + " (" + e.detail + ")";
        return std::nullopt;
      case Ev::Fault:
        return (e.process == kNoProc ? "the network" : who(e)) + ": " + e.detail;
      case Ev::Promoted:
        return who(e) + " is promoted to master" + local(e);
      default:
        return std::nullopt;
    }
  }

  const Trace& trace_;
  std::vector<bool> clock_moved_;                // whose clock is off from true time
  std::map<ProcId, ReleaseExchange> releasing_;  // clients between `releasing` and the release's end
};

}  // namespace

std::vector<Step> narrate(const Trace& trace) {
  std::vector<Step> steps;
  Narrator narrator(trace);
  for (const TraceEvent& e : trace.events())
    if (auto text = narrator.tell(e)) steps.push_back({e.at, std::move(*text)});
  return steps;
}

}  // namespace locksim
