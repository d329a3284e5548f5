#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "judge/words.hpp"
#include "lockalgos/registry.hpp"
#include "reports/report.hpp"

namespace locksim {

namespace {

// A deferred instant in a step's text: "\x01<ns>\x02" (no narrated text has these bytes).
constexpr char kStampOpen = '\x01', kStampClose = '\x02';

// The lock value's owner, for "client1's key".
std::string owner_of(const Trace& t, ProcId owner) {
  return owner == kNoProc ? "nobody's" : t.name(owner) + "'s";
}

std::string token_text(std::int64_t token) {
  return token >= 0 ? " (token " + std::to_string(token) + ")" : "";
}

// A lock value or a node name's 40 hex digits as their first four
// ("9925…"): the values only need telling apart. A run of 8 or more hex
// digits with both a letter and a digit in it is a value (no English word
// has a digit).
std::string shorten_values(const std::string& s) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t j = i;
    bool digit = false, letter = false;
    while (j < s.size() && std::isxdigit(static_cast<unsigned char>(s[j])) && !std::isupper(static_cast<unsigned char>(s[j]))) {
      (std::isdigit(static_cast<unsigned char>(s[j])) ? digit : letter) = true;
      ++j;
    }
    const bool word_start = i == 0 || !std::isalnum(static_cast<unsigned char>(s[i - 1]));
    const bool word_end = j == s.size() || !std::isalnum(static_cast<unsigned char>(s[j]));
    if (j - i >= 8 && digit && letter && word_start && word_end) {
      out += s.substr(i, 4);
      if (s.compare(j, 3, "…") != 0) out += "…";
      i = j;
    } else if (j > i) {
      out += s.substr(i, j - i);
      i = j;
    } else {
      out += s[i++];
    }
  }
  return out;
}

// The number after `label` in `text` ("keys it holds: 3"), if there is one.
std::optional<long long> number_after(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return std::nullopt;
  std::size_t i = at + label.size(), j = i;
  while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
  if (j == i) return std::nullopt;
  return std::stoll(text.substr(i, j - i));
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
  // `deferred`: instants in the text as placeholders, for one clock chosen
  // once every step is known (tell_story); else written by format_instant.
  Narrator(const Trace& trace, const LockConfig& lock, bool deferred)
      : trace_(trace), lock_(lock), deferred_(deferred), clock_moved_(trace.processes().size(), false) {
    for (const Belief& b : beliefs_not_grants(trace)) beliefs_[b.seq] = b.held;
  }

  // The event's step in the story, if it has one.
  std::optional<std::string> tell(const TraceEvent& e) {
    if (e.process < clock_moved_.size() && (e.wall != e.at || e.mono != e.at)) clock_moved_[e.process] = true;
    follow_commands(e);
    follow_release(e);
    auto s = tell_client(e);
    if (!s) s = tell_world(e);
    follow_holders(e);
    if (s) *s = shorten_values(*s);
    return s;
  }

  // When the step happened: a renewal when its node applied it (the client
  // may hear of it much later, after a pause), every other step at its event.
  Instant told_at(const TraceEvent& e) const {
    if (e.kind != Ev::Renewed || e.content == 0) return e.at;
    const auto it = applied_.find({e.process, e.content});
    return it == applied_.end() ? e.at : it->second;
  }

 private:
  std::string who(const TraceEvent& e) const { return trace_.name(e.process); }
  std::string stamp(Instant t) const { return deferred_ ? kStampOpen + std::to_string(t.ns()) + kStampClose : format_instant(t); }
  std::string clock_reading(const TraceEvent& e, bool wall) const {
    return who(e) + "'s " + (wall ? "wall" : "monotonic") + " clock reads " + stamp(wall ? e.wall : e.mono);
  }
  std::string peer(const TraceEvent& e) const { return trace_.name(e.peer); }
  bool lock_node(ProcId p) const { return p < trace_.processes().size() && trace_.processes()[p].role == ProcessRole::LockNode; }
  // The wall clock's reading, where the process's clock is off from true
  // time: only then is the reading worth a mention.
  std::string local(const TraceEvent& e) const {
    if (e.process >= clock_moved_.size()) return "";
    if (!clock_moved_[e.process] && e.wall == e.at) return "";
    return " — " + clock_reading(e, true);
  }

  // The commands the nodes applied, by client and content: where a renewal is told.
  void follow_commands(const TraceEvent& e) {
    if (e.kind == Ev::Command && e.peer != kNoProc && e.content != 0) applied_[{e.peer, e.content}] = e.at;
  }

  std::string renewed(const TraceEvent& e) const {
    std::string s = who(e) + " renews its lease" + (e.detail.empty() ? "" : ": " + e.detail);
    if (e.value > 0)
      s += "; it believes the lock is valid until " + stamp(Instant::from_ns(e.value)) + " on its monotonic clock";
    const Instant applied = told_at(e);
    if (e.at - applied >= Duration::ms(100))
      s += " (" + peer(e) + " applied it then; " + who(e) + " hears of it only at " + stamp(e.at) + ")";
    return s;
  }

  // Who holds the lock as far as the clients know (granted, not yet let go).
  void follow_holders(const TraceEvent& e) {
    if (e.kind == Ev::Acquired) holders_.insert(e.process);
    if (e.kind == Ev::Releasing || e.kind == Ev::Lost || e.kind == Ev::Crashed) holders_.erase(e.process);
  }

  // What the lock promises at its grant: how long it lasts, and on what.
  std::string lasts(const TraceEvent& e) const {
    if (e.value >= 0)
      return "; it believes the lock is valid until " + stamp(Instant::from_ns(e.value)) + " on its monotonic clock (now " +
             stamp(e.mono) + ")";
    // A coordination service's lock has no TTL of its own, but it is tied to
    // the session (ZooKeeper's ephemeral node) or the lease (etcd's key).
    const AlgorithmInfo* algorithm = find_algorithm(lock_.algorithm);
    switch (algorithm ? algorithm->server : ServerKind::Redis) {
      case ServerKind::ZooKeeper:
        return "; the lock lasts as long as its session (timeout " + format_duration(lock_.options->lease()) + ")";
      case ServerKind::Etcd:
        return "; the lock lasts as long as its lease (TTL " + format_duration(lock_.options->lease()) + ", kept alive by " + who(e) + ")";
      case ServerKind::Chubby:
        return "; the lock lasts as long as its session's lease, which " + who(e) + "'s KeepAlives extend";
      case ServerKind::Consul:
        return "; the lock lasts as long as its session (TTL " + format_duration(lock_.options->lease()) +
               ", renewed by " + who(e) + "; the servers end it after " +
               std::to_string(lock_.options->server().session_ttl_multiplier) + " x that unrenewed)";
      case ServerKind::Redis:
        return "; the lock has no expiry";
    }
    return "; the lock has no expiry";
  }

  // Why an attempt failed, in words that say it: too few nodes, or a
  // validity used up. Redlock says "G of N nodes granted it (Q needed),
  // validity V; ..." (lockalgos/redlock.cpp), Redisson's MultiLock "G of N
  // locks taken (all needed); ..."; other reasons are told as given.
  std::string attempt_failed(const TraceEvent& e) const {
    const auto t = parse_tally(e.detail);
    if (!t) return who(e) + "'s attempt fails: " + e.detail;
    if (t->too_few())
      return fmt::format("{}'s attempt fails: too few {}: {} of {} {} ({} needed){}", who(e), t->nodes ? "nodes" : "locks", t->granted, t->total,
                         t->nodes ? "granted it" : "taken", t->needed, t->rest);
    return fmt::format("{}'s attempt fails: its validity is used up: {} of {} nodes granted it, but the time left, {}, is not more than 0{}",
                       who(e), t->granted, t->total, t->validity, t->rest);
  }

  // A promoted replica, with what it holds: none of the lock's keys, when
  // asynchronous replication lost them, is the point of the failover stories.
  std::string promoted(const TraceEvent& e) const {
    std::string s = who(e) + " is promoted to master";
    const auto keys = number_after(e.detail, "keys it holds: ");
    if (keys && *keys == 0) {
      s += " holding no keys at all";
      std::vector<std::string> held;
      for (ProcId p : holders_) held.push_back(trace_.name(p));
      if (!held.empty()) s += ": " + names(held) + "'s lock is not on it";
    } else if (keys) {
      s += " holding " + counted(static_cast<std::uint64_t>(*keys), "key");
    }
    return s + local(e);
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
      case Ev::Acquired:
        if (auto b = beliefs_.find(e.seq); b != beliefs_.end()) {  // judge/checkers.hpp, Belief (K7)
          const std::string said = who(e) + " believes it has acquired the lock on " + e.detail + token_text(e.token) + lasts(e);
          if (b->second == 0) return said + " — but it holds nothing: the lock service held none of " + who(e) + "'s keys by then";
          return said + " — but it does not hold it: the lock service held " + who(e) + "'s keys on " +
                 counted(b->second, "node") + " by then, fewer than the " + std::to_string(trace_.grant_quorum()) +
                 " a grant needs";
        }
        return who(e) + " acquires the lock on " + e.detail + token_text(e.token) + lasts(e);
      case Ev::Claiming:
        return who(e) + " claims the storage with its lock value (owner = " + e.key + ")";
      case Ev::Renewed:
        return renewed(e);
      case Ev::AttemptFailed:
        return attempt_failed(e);
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
      case Ev::WriteRejected:
        // The client learns of it: its work is refused, and it knows (not
        // lost, as an overwritten update is).
        if (e.detail == "the claim was refused") return who(e) + "'s claim is refused: it does no work";
        if (e.detail.rfind("storage did not answer", 0) == 0) return who(e) + " gets no answer from storage: " + e.detail;
        if (e.detail.rfind("its read was refused", 0) == 0)
          return who(e) + " is told its read was refused: it writes nothing, and knows its work did not happen";
        return who(e) + " is told its write was rejected: its work is refused, not lost (" + who(e) + " knows it did not happen)";
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
        return who(e) + " resumes, unaware that it was paused; " + clock_reading(e, false);
      case Ev::Crashed:
        return who(e) + " crashes";
      case Ev::Restarted:
        return who(e) + " restarts";
      case Ev::ClockJumped:
        return who(e) + "'s wall clock jumps " + e.detail + "; " + clock_reading(e, true);
      case Ev::ClockDrift:
        return who(e) + "'s clocks now run at " + std::to_string(e.value / 1000) + " ppm off true time";
      case Ev::Expired:
        if (trace_.processes()[e.process].role != ProcessRole::LockNode) return std::nullopt;
        return who(e) + " expires '" + e.key + "' (" + owner_of(trace_, e.owner) + " lock) " + e.detail + "; " +
               clock_reading(e, true);
      case Ev::KeyDeleted:
        if (e.owner == kNoProc || e.owner == e.peer) return std::nullopt;
        return who(e) + " deletes '" + e.key + "' at " + peer(e) + "'s request — but it held " + owner_of(trace_, e.owner) + " lock";
      case Ev::StorageWrite:
        return trace_.name(e.process) + " accepts " + peer(e) + "'s write: counter = " + std::to_string(e.value) + token_text(e.token);
      case Ev::StorageReject:
        if (e.key == "read")  // a fenced read (sim/trace.hpp)
          return trace_.name(e.process) + " refuses " + peer(e) + "'s read" + token_text(e.token) + ": " + e.detail;
        return trace_.name(e.process) + " rejects " + peer(e) + "'s write of counter = " + std::to_string(e.value) + ": " + e.detail;
      case Ev::Dropped:
        // What a fault or the network lost on the way (not deliveries to crashed processes).
        if (e.detail.rfind("partition", 0) == 0 || e.detail.rfind("dropped by", 0) == 0 || e.detail.rfind("lost", 0) == 0)
          return "the network loses " + who(e) + "'s message to " + peer(e) + " (" + e.detail + ")";
        return std::nullopt;
      case Ev::Fault:
        return (e.process == kNoProc ? "the network" : who(e)) + ": " + e.detail;
      case Ev::Promoted:
        return promoted(e);
      default:
        return std::nullopt;
    }
  }

  const Trace& trace_;
  const LockConfig& lock_;
  bool deferred_;
  std::set<ProcId> holders_;                     // clients granted the lock and not yet letting it go
  std::map<std::uint64_t, std::size_t> beliefs_;  // Acquired events the service did not hold (by seq): on how many nodes it held them
  std::vector<bool> clock_moved_;                // whose clock is off from true time
  std::map<ProcId, ReleaseExchange> releasing_;  // clients between `releasing` and the release's end
  std::map<std::pair<ProcId, std::uint64_t>, Instant> applied_;  // (client, command content) -> when a node applied it
};

}  // namespace

bool AttemptTally::too_few() const {
  if (needed.empty() || !std::isdigit(static_cast<unsigned char>(needed[0]))) return true;  // "all", "a majority": not taken
  return granted < std::stoll(needed);
}

std::optional<AttemptTally> parse_tally(const std::string& d) {
  AttemptTally t;
  int read = 0;
  if (std::sscanf(d.c_str(), "%lld of %lld %n", &t.granted, &t.total, &read) != 2) return std::nullopt;
  std::string_view rest(d);
  rest.remove_prefix(static_cast<std::size_t>(read));
  for (std::string_view phrase : {std::string_view("nodes granted it ("), std::string_view("locks taken (")}) {
    if (rest.substr(0, phrase.size()) != phrase) continue;
    t.nodes = phrase[0] == 'n';
    rest.remove_prefix(phrase.size());
    const auto needed = rest.find(" needed)");
    if (needed == std::string_view::npos) return std::nullopt;
    t.needed = rest.substr(0, needed);
    rest.remove_prefix(needed + 8);
    if (rest.substr(0, 11) == ", validity ") {
      rest.remove_prefix(11);
      const auto semi = std::min(rest.find(';'), rest.size());
      t.validity = rest.substr(0, semi);
      rest.remove_prefix(semi);
    }
    t.rest = rest;
    return t;
  }
  return std::nullopt;
}

namespace {

std::vector<Step> narrate_with(const Trace& trace, const LockConfig& lock, bool deferred) {
  std::vector<Step> steps;
  Narrator narrator(trace, lock, deferred);
  for (const TraceEvent& e : trace.events())
    if (auto text = narrator.tell(e)) steps.push_back({narrator.told_at(e), std::move(*text), &e});
  // A renewal told when its node applied it may come before steps traced earlier.
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
  return steps;
}

}  // namespace

std::vector<Step> narrate(const Trace& trace, const LockConfig& lock) { return narrate_with(trace, lock, false); }

std::vector<Step> narrate(const RunResult& r) { return narrate(r.world->trace(), r.scenario->lock); }

Story tell_story(const RunResult& r) {
  std::vector<Step> steps = narrate_with(r.world->trace(), r.scenario->lock, true);
  std::vector<Instant> times;
  for (const Step& st : steps) times.push_back(st.at);
  for (const Violation& v : r.violations) {
    times.push_back(v.at);
    times.push_back(v.until);
  }
  StoryClock clock(times);
  for (Step& st : steps) {
    std::string& t = st.text;
    for (auto open = t.find(kStampOpen); open != std::string::npos; open = t.find(kStampOpen, open)) {
      const auto close = t.find(kStampClose, open);
      const std::string stamp = clock(Instant::from_ns(std::stoll(t.substr(open + 1, close - open - 1))));
      t.replace(open, close - open + 1, stamp);
      open += stamp.size();
    }
  }
  return {std::move(steps), clock};
}

}  // namespace locksim
