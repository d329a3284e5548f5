#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "lockalgos/registry.hpp"
#include "reports/report.hpp"
#include "reports/words.hpp"

namespace locksim {

namespace {

// A deferred instant in a step's text: "\x01<ns>\x02" (no narrated text has these bytes).
constexpr char kStampOpen = '\x01', kStampClose = '\x02';

// Whose lock a key is: "client1's lock", "nobody's lock".
std::string lock_of(Lang lang, const Trace& t, ProcId owner) {
  return owner == kNoProc ? say(lang, W::NobodysLock) : say(lang, W::LockOf, {{"who", t.name(owner)}});
}

std::string token_text(Lang lang, std::int64_t token) {
  return token >= 0 ? say(lang, W::TokenSuffix, {{"token", std::to_string(token)}}) : "";
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


// What a client's release asked of the lock's nodes and what came back,
// between its `releasing` and the end of the release: the words for a
// release that failed depend on it (no answer, refused, or nothing of its own
// left to remove).
struct ReleaseExchange {
  std::map<ProcId, int> asked;                // requests sent, per node
  std::map<ProcId, std::string> answered;     // the last reply received, per node
  std::set<ProcId> removed;                   // nodes that deleted a key at the client's request

  std::string failure(Lang lang, const Trace& t, const std::string& who) const {
    const auto names = [lang](const std::vector<std::string>& ns) { return say_list(lang, ns); };
    std::vector<std::string> silent, refused, not_own, removed_here, removed_unheard;
    for (const auto& [node, n] : asked) {
      const auto reply = answered.find(node);
      if (removed.count(node)) {
        (reply == answered.end() ? removed_unheard : removed_here).push_back(t.name(node));
      } else if (reply == answered.end()) {
        silent.push_back(t.name(node));
      } else if (reply->second.rfind("(error)", 0) == 0 || reply->second.rfind("ERROR", 0) == 0) {
        refused.push_back(say(lang, W::ReleaseRefused, {{"node", t.name(node)}, {"reply", reply->second}}));
      } else {
        not_own.push_back(t.name(node));
      }
    }
    if (asked.empty()) return say(lang, W::ReleaseReachedNone, {{"who", who}});
    if (!not_own.empty() && silent.empty() && refused.empty() && removed_here.empty() && removed_unheard.empty())
      return say(lang, W::ReleaseNotOwn, {{"who", who}});
    std::vector<std::string> parts;
    if (!silent.empty()) parts.push_back(say(lang, W::ReleaseSilent, {{"nodes", names(silent)}}));
    if (!refused.empty()) parts.push_back(names(refused));
    if (!not_own.empty()) parts.push_back(say(lang, W::ReleaseNoKeyLeft, {{"nodes", names(not_own)}, {"who", who}}));
    if (!removed_unheard.empty()) parts.push_back(say(lang, W::ReleaseRemovedUnheard, {{"nodes", names(removed_unheard)}}));
    if (!removed_here.empty()) parts.push_back(say(lang, W::ReleaseRemovedHere, {{"nodes", names(removed_here)}}));
    return say(lang, W::ReleaseNotConfirmed, {{"who", who}, {"parts", names(parts)}});
  }
};

// The story told event by event: what it carries from one event to the next.
class Narrator {
 public:
  // `deferred`: instants in the text as placeholders, for one clock chosen
  // once every step is known (tell_story); else written by format_instant.
  Narrator(const Trace& trace, const LockConfig& lock, bool deferred, Lang lang)
      : trace_(trace), lock_(lock), deferred_(deferred), lang_(lang), clock_moved_(trace.processes().size(), false) {
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
    return say(lang_, wall ? W::WallClockReads : W::MonoClockReads, {{"who", who(e)}, {"t", stamp(wall ? e.wall : e.mono)}});
  }
  std::string names(const std::vector<std::string>& ns) const { return say_list(lang_, ns); }
  std::string detail(const TraceEvent& e) const { return translate_detail(lang_, e.detail); }
  std::string token_text(std::int64_t token) const { return locksim::token_text(lang_, token); }
  std::string peer(const TraceEvent& e) const { return trace_.name(e.peer); }
  bool lock_node(ProcId p) const { return p < trace_.processes().size() && trace_.processes()[p].role == ProcessRole::LockNode; }
  bool is_client(ProcId p) const { return p < trace_.processes().size() && trace_.processes()[p].role == ProcessRole::Client; }
  // The wall clock's reading, where the process's clock is off from true
  // time: only then is the reading worth a mention.
  std::string local(const TraceEvent& e) const {
    if (e.process >= clock_moved_.size()) return "";
    if (!clock_moved_[e.process] && e.wall == e.at) return "";
    return say(lang_, W::LocalReading, {{"reading", clock_reading(e, true)}});
  }

  // The commands the nodes applied, by client and content: where a renewal is
  // told; and who holds the lock's key on each node, and whom each client's
  // last command reached: why a try failed.
  void follow_commands(const TraceEvent& e) {
    if (e.kind == Ev::Command && e.peer != kNoProc && e.content != 0) applied_[{e.peer, e.content}] = e.at;
    if (!lock_node(e.process)) return;
    if (e.kind == Ev::Command && e.owner != kNoProc && e.key == lock_.key) key_holder_[e.process] = e.owner;
    if (e.kind == Ev::Command && is_client(e.peer)) {
      const auto held = key_holder_.find(e.process);
      answered_[e.peer] = {e.process, held == key_holder_.end() ? kNoProc : held->second};
    }
    if ((e.kind == Ev::Expired || e.kind == Ev::KeyDeleted) && e.key == lock_.key) key_holder_.erase(e.process);
    if (e.kind == Ev::Crashed || e.kind == Ev::Restarted || e.kind == Ev::Promoted) key_holder_.erase(e.process);
  }

  // What a library told its application (Ev::Notified's LibrarySignal).
  std::string signal_words(std::int64_t signal) const {
    switch (static_cast<LibrarySignal>(signal)) {
      case LibrarySignal::Suspended: return say(lang_, W::SignalSuspended, {});
      case LibrarySignal::Reconnected: return say(lang_, W::SignalReconnected, {});
      case LibrarySignal::SessionLost: return say(lang_, W::SignalSessionLost, {});
      case LibrarySignal::LockLost: return say(lang_, W::SignalLockLost, {});
      case LibrarySignal::LeaseLost: return say(lang_, W::SignalLeaseLost, {});
    }
    return "?";
  }

  // A try that did not get the lock, and the wait before the next
  // (Ev::Retrying): the node held another's key, refused, or did not answer.
  std::string try_failed(const TraceEvent& e) {
    const auto reached = answered_.find(e.process);
    const bool answered = reached != answered_.end() && reached->second.node == e.peer;
    // Whose key the node held when it answered (it may have gone since).
    const ProcId holder = answered ? reached->second.holder : kNoProc;
    if (reached != answered_.end()) answered_.erase(reached);
    const bool other = holder != kNoProc && holder != e.process;
    using Why = TryOutcome::Why;
    tried_ = {.why = !answered ? Why::NoAnswer : other ? Why::Held : Why::Refused, .holder = other ? holder : kNoProc};
    const WordArgs args{{"who", who(e)}, {"node", peer(e)}, {"holder", other ? trace_.name(holder) : ""},
                        {"d", format_duration(Duration::ns(e.value))}};
    return say(lang_, tried_.why == Why::NoAnswer ? W::TryNoAnswer : tried_.why == Why::Held ? W::TryHeld : W::TryRefused, args);
  }

 public:
  // The outcome of the last failed try told (tell() of an Ev::Retrying).
  const TryOutcome& last_try() const { return tried_; }

 private:

  std::string renewed(const TraceEvent& e) const {
    std::string s = e.detail.empty() ? say(lang_, W::Renews, {{"who", who(e)}}) : say(lang_, W::RenewsWith, {{"who", who(e)}, {"detail", detail(e)}});
    if (e.value > 0) s += say(lang_, W::RenewValidUntil, {{"t", stamp(Instant::from_ns(e.value))}});
    const Instant applied = told_at(e);
    if (e.at - applied >= Duration::ms(100)) s += say(lang_, W::RenewHeardLate, {{"peer", peer(e)}, {"who", who(e)}, {"t", stamp(e.at)}});
    return s;
  }

  // Who holds the lock as far as the clients know (granted, not yet let go).
  void follow_holders(const TraceEvent& e) {
    if (e.kind == Ev::Acquired) holders_.insert(e.process);
    if (e.kind == Ev::Releasing || e.kind == Ev::Lost || e.kind == Ev::Crashed) holders_.erase(e.process);
  }

  // What the lock promises at its grant: how long it lasts, and on what.
  std::string lasts(const TraceEvent& e) const {
    if (e.value >= 0) return say(lang_, W::LastsUntil, {{"until", stamp(Instant::from_ns(e.value))}, {"now", stamp(e.mono)}});
    // A coordination service's lock has no TTL of its own, but it is tied to
    // the session (ZooKeeper's ephemeral node) or the lease (etcd's key).
    const AlgorithmInfo* algorithm = find_algorithm(lock_.algorithm);
    const std::string d = format_duration(lock_.options->lease());
    switch (algorithm ? algorithm->server : ServerKind::Redis) {
      case ServerKind::ZooKeeper:
        return say(lang_, W::LastsZooKeeper, {{"d", d}});
      case ServerKind::Etcd:
        return say(lang_, W::LastsEtcd, {{"d", d}, {"who", who(e)}});
      case ServerKind::Chubby:
        return say(lang_, W::LastsChubby, {{"who", who(e)}});
      case ServerKind::Consul:
        return say(lang_, W::LastsConsul, {{"d", d}, {"who", who(e)}, {"m", std::to_string(lock_.options->server().session_ttl_multiplier)}});
      case ServerKind::Redis:
        return say(lang_, W::LastsForever);
    }
    return say(lang_, W::LastsForever);
  }

  // Why an attempt failed, in words that say it: too few nodes, or a
  // validity used up. Redlock says "G of N nodes granted it (Q needed),
  // validity V; ..." (lockalgos/redlock.cpp), Redisson's MultiLock "G of N
  // locks taken (all needed); ..."; other reasons are told as given.
  std::string attempt_failed(const TraceEvent& e) const {
    const auto t = parse_tally(e.detail);
    if (!t) return say(lang_, W::AttemptFails, {{"who", who(e)}, {"why", detail(e)}});
    const WordArgs args = {{"who", who(e)},
                           {"granted", std::to_string(t->granted)},
                           {"total", std::to_string(t->total)},
                           {"needed", translate_detail(lang_, t->needed)},
                           {"validity", t->validity},
                           {"rest", translate_detail(lang_, t->rest)}};
    if (t->too_few()) return say(lang_, t->nodes ? W::AttemptTooFewNodes : W::AttemptTooFewLocks, args);
    return say(lang_, W::AttemptValidityUsed, args);
  }

  // A promoted replica, with what it holds: none of the lock's keys, when
  // asynchronous replication lost them, is the point of the failover stories.
  std::string promoted(const TraceEvent& e) const {
    std::string s = say(lang_, W::Promoted, {{"who", who(e)}});
    const auto keys = number_after(e.detail, "keys it holds: ");
    if (keys && *keys == 0) {
      s += say(lang_, W::PromotedNoKeys);
      std::vector<std::string> held;
      for (ProcId p : holders_) held.push_back(trace_.name(p));
      if (!held.empty()) s += say(lang_, W::PromotedLockNotOnIt, {{"names", names(held)}});
    } else if (keys) {
      s += say(lang_, W::PromotedHolding, {{"keys", say_count(lang_, static_cast<std::uint64_t>(*keys), W::KeyOne, W::KeyMany)}});
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
    const std::string w = who(e);
    switch (e.kind) {
      case Ev::Acquiring:
        answered_.erase(e.process);
        return say(lang_, W::AsksForLock, {{"who", w}});
      case Ev::Acquired:
        // A belief, not a grant: judge/checkers.hpp, Belief (K7).
        if (auto b = beliefs_.find(e.seq); b != beliefs_.end()) {
          const WordArgs args{{"who", w}, {"where", detail(e)}, {"token", token_text(e.token)}, {"lasts", lasts(e)},
                              {"n", std::to_string(b->second)}, {"quorum", std::to_string(trace_.grant_quorum())}};
          return b->second == 0 ? say(lang_, W::BelievesAcquired, args) : say(lang_, W::BelievesAcquiredTooFew, args);
        }
        return say(lang_, W::Acquires, {{"who", w}, {"where", detail(e)}, {"token", token_text(e.token)}, {"lasts", lasts(e)}});
      case Ev::Claiming:
        return say(lang_, W::Claims, {{"who", w}, {"key", e.key}});
      case Ev::Renewed:
        return renewed(e);
      case Ev::AttemptFailed:
        return attempt_failed(e);
      case Ev::AcquireFailed:
        return say(lang_, W::GivesUpAcquiring, {{"who", w}});
      case Ev::OwnerChecked:
        return say(lang_, W::OwnerChecked, {{"who", w}});
      case Ev::Read:
        return say(lang_, W::Reads, {{"who", w}, {"value", std::to_string(e.value)}});
      case Ev::Checked:
        if (e.key == "Valid()") return say(lang_, W::ChecksWithNodes, {{"who", w}, {"detail", detail(e)}});
        // The job's check of its own clock carries the time left; a library's check does not.
        if (e.value == 0) return say(lang_, W::ChecksWithLibrary, {{"who", w}, {"detail", detail(e)}});
        return say(lang_, W::ChecksOwnClock, {{"who", w}, {"detail", detail(e)}});
      case Ev::Notified:
        return say(lang_, W::LibraryReports, {{"who", w}, {"signal", signal_words(e.value)},
                                              {"detail", e.detail.empty() ? "" : " (" + detail(e) + ")"}});
      case Ev::Lost:
        return say(lang_, W::GivesUpLock, {{"who", w}, {"detail", detail(e)}});
      case Ev::WriteSkipped:
        return say(lang_, W::SkipsWrite, {{"who", w}, {"value", std::to_string(e.value)}});
      case Ev::Retrying:
        return try_failed(e);
      case Ev::Writing:
        return say(lang_, W::SendsWrite, {{"who", w}, {"value", std::to_string(e.value)}, {"token", token_text(e.token)}});
      case Ev::WriteRejected:
        // The client learns of it: its work is refused, and it knows (not
        // lost, as an overwritten update is).
        if (e.detail == "the claim was refused") return say(lang_, W::ClaimRefused, {{"who", w}});
        if (e.detail.rfind("storage did not answer", 0) == 0) return say(lang_, W::NoAnswerFromStorage, {{"who", w}, {"detail", detail(e)}});
        if (e.detail.rfind("its read was refused", 0) == 0) return say(lang_, W::ReadRefusedTold, {{"who", w}});
        return say(lang_, W::WriteRejectedTold, {{"who", w}});
      case Ev::Releasing:
        releasing_[e.process] = {};
        return say(lang_, W::Releases, {{"who", w}});
      case Ev::Released:
        return say(lang_, W::ReleaseConfirmed, {{"who", w}});
      case Ev::ReleaseFailed: {
        std::string s = releasing_[e.process].failure(lang_, trace_, w);
        releasing_.erase(e.process);
        return s;
      }
      default:
        return std::nullopt;
    }
  }

  // What happens to the processes, their clocks, the nodes' keys, the storage and the network.
  std::optional<std::string> tell_world(const TraceEvent& e) const {
    const std::string w = e.process == kNoProc ? say(lang_, W::TheNetwork) : who(e);
    switch (e.kind) {
      case Ev::Paused:
        return say(lang_, W::IsPaused, {{"who", w}, {"d", e.detail}});
      case Ev::Resumed:
        return say(lang_, W::Resumes, {{"who", w}, {"reading", clock_reading(e, false)}});
      case Ev::Crashed:
        return say(lang_, W::Crashes, {{"who", w}});
      case Ev::Restarted:
        return say(lang_, W::Restarts, {{"who", w}});
      case Ev::ClockJumped:
        return say(lang_, W::ClockJumps, {{"who", w}, {"by", e.detail}, {"reading", clock_reading(e, true)}});
      case Ev::ClockDrift:
        return say(lang_, W::ClockDrifts, {{"who", w}, {"ppm", std::to_string(e.value / 1000)}});
      case Ev::Expired:
        if (trace_.processes()[e.process].role != ProcessRole::LockNode) return std::nullopt;
        return say(lang_, W::Expires,
                   {{"who", w}, {"key", e.key}, {"whose", lock_of(lang_, trace_, e.owner)}, {"how", detail(e)}, {"reading", clock_reading(e, true)}});
      case Ev::KeyDeleted:
        if (e.owner == kNoProc || e.owner == e.peer) return std::nullopt;
        return say(lang_, W::DeletesForeign, {{"who", w}, {"key", e.key}, {"peer", peer(e)}, {"whose", lock_of(lang_, trace_, e.owner)}});
      case Ev::StorageWrite:
        return say(lang_, W::StorageAccepts, {{"storage", w}, {"peer", peer(e)}, {"value", std::to_string(e.value)}, {"token", token_text(e.token)}});
      case Ev::StorageReject:
        if (e.key == "read")  // a fenced read (sim/trace.hpp)
          return say(lang_, W::StorageRefusesRead, {{"storage", w}, {"peer", peer(e)}, {"token", token_text(e.token)}, {"why", detail(e)}});
        return say(lang_, W::StorageRejectsWrite, {{"storage", w}, {"peer", peer(e)}, {"value", std::to_string(e.value)}, {"why", detail(e)}});
      case Ev::Dropped:
        // What a fault or the network lost on the way (not deliveries to crashed processes).
        if (e.detail.rfind("partition", 0) == 0 || e.detail.rfind("dropped by", 0) == 0 || e.detail.rfind("lost", 0) == 0)
          return say(lang_, W::NetworkLoses, {{"who", w}, {"peer", peer(e)}, {"why", detail(e)}});
        return std::nullopt;
      case Ev::Fault:
        return say(lang_, W::FaultLine, {{"who", w}, {"what", detail(e)}});
      case Ev::Promoted:
        return promoted(e);
      default:
        return std::nullopt;
    }
  }

  const Trace& trace_;
  const LockConfig& lock_;
  bool deferred_;
  Lang lang_;
  std::set<ProcId> holders_;                     // clients granted the lock and not yet letting it go
  std::map<std::uint64_t, std::size_t> beliefs_;  // Acquired events the service did not hold (by seq): on how many nodes it held them
  std::vector<bool> clock_moved_;                // whose clock is off from true time
  std::map<ProcId, ReleaseExchange> releasing_;  // clients between `releasing` and the release's end
  std::map<std::pair<ProcId, std::uint64_t>, Instant> applied_;  // (client, command content) -> when a node applied it
  std::map<ProcId, ProcId> key_holder_;  // node -> the client whose value the lock's key holds there
  struct Answer {
    ProcId node, holder;  // the lock node that answered, and whose key it held then
  };
  std::map<ProcId, Answer> answered_;    // client -> the last answer to a command of its since its last try
  TryOutcome tried_;                     // the last failed try told
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

std::vector<Step> narrate_with(const Trace& trace, const LockConfig& lock, bool deferred, Lang lang) {
  std::vector<Step> steps;
  Narrator narrator(trace, lock, deferred, lang);
  for (const TraceEvent& e : trace.events())
    if (auto text = narrator.tell(e))
      steps.push_back({narrator.told_at(e), std::move(*text), &e, e.kind == Ev::Retrying ? narrator.last_try() : TryOutcome{}});
  // A renewal told when its node applied it may come before steps traced earlier.
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
  return steps;
}

}  // namespace

std::vector<Step> narrate(const Trace& trace, const LockConfig& lock) { return narrate_with(trace, lock, false, Lang::En); }

std::vector<Step> narrate(const RunResult& r) { return narrate(r.world->trace(), r.scenario->lock); }

Story tell_story(const RunResult& r, Lang lang) {
  std::vector<Step> steps = narrate_with(r.world->trace(), r.scenario->lock, true, lang);
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
