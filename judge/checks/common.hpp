// What every checker shares: a process's role, per-process slots, and what
// the lock service held (the service's own statements, never the clients'
// beliefs), against which a grant is judged.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "judge/checkers.hpp"
#include "sim/trace.hpp"

namespace locksim::checks {

inline bool has_role(const Trace& t, ProcId p, ProcessRole role) {
  return p < t.processes().size() && t.processes()[p].role == role;
}
inline bool is_client(const Trace& t, ProcId p) { return has_role(t, p, ProcessRole::Client); }

// The names of `ps`, for a Phrase's list.
inline std::vector<std::string> names_of(const Trace& trace, const std::vector<ProcId>& ps) {
  std::vector<std::string> out;
  out.reserve(ps.size());
  for (ProcId p : ps) out.push_back(trace.name(p));
  return out;
}

// Per-process state, grown as processes appear in events: at once to every
// process the trace names (one allocation per run, not one per process).
template <typename T>
T& slot(std::vector<T>& v, ProcId p, const Trace& t) {
  if (p >= v.size()) v.resize(std::max<std::size_t>(p + 1, t.processes().size()));
  return v[p];
}

// What the lock service held, from its nodes' own statements, never the
// clients' beliefs. Every model says, as its state changes, "node N holds
// key K for client C" or "node N holds nothing at K", and this keeps the map:
//   - Holder names C (or nobody): the coordination services' lock, the
//     lowest sequential node (ZooKeeper), the first-created key under the
//     prefix (etcd), the lock's holder (Chubby), the key's Session (Consul);
//   - a Command naming an owner leaves K holding C's value (a Redis node,
//     sim/servers/redis/node.cpp note_command and replication);
//   - Expired and KeyDeleted leave nothing at K.
// A node that restarts or is resynced keeps, here, what it held before: the
// doubt goes to the client (its grant counts).
class ServiceHoldings {
 public:
  static constexpr EvSet kReads{Ev::Holder, Ev::Command, Ev::Expired, Ev::KeyDeleted};

  explicit ServiceHoldings(const Trace& t) : trace_(&t) {}
  // As constructed anew (capacity kept).
  void restart(const Trace& t) {
    trace_ = &t;
    keys_.clear();
    entries_.clear();
    named_ = false;
  }

  void observe(const TraceEvent& e) {
    if (!has_role(*trace_, e.process, ProcessRole::LockNode)) return;
    switch (e.kind) {
      case Ev::Holder: hold(e, e.owner); break;
      case Ev::Command:  // with an owner only: Judge::kOwnedOnly
        if (e.owner != kNoProc) hold(e, e.owner);
        break;
      case Ev::Expired:
      case Ev::KeyDeleted: hold(e, kNoProc); break;
      default: break;
    }
  }

  // Whether some node has named a holder: until then nothing is known.
  bool named() const { return named_; }
  // On how many nodes `client`'s entries are held (a node holding two of its
  // keys counts once).
  std::size_t nodes_holding(ProcId client) const {
    std::size_t n = 0;
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->client == client && std::none_of(entries_.begin(), it, [&](const Entry& before) {
            return before.client == client && before.node == it->node;
          }))
        ++n;
    return n;
  }

 private:
  // (node, key) -> the client it holds it for; keys by their index in keys_.
  // A run names a key or two: flat vectors searched from the front cost less
  // than a map keyed by strings, and nothing is allocated per event.
  struct Entry {
    ProcId node;
    std::uint32_t key;
    ProcId client;
  };

  std::optional<std::uint32_t> find_key(const std::string& key) const {
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] == key) return static_cast<std::uint32_t>(i);
    return std::nullopt;
  }

  // `client` kNoProc: nothing.
  void hold(const TraceEvent& e, ProcId client) {
    std::optional<std::uint32_t> key = find_key(e.key);
    if (!key) {
      if (client == kNoProc) return;  // nothing was held there
      keys_.push_back(e.key);
      key = static_cast<std::uint32_t>(keys_.size() - 1);
    }
    const auto at = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const Entry& x) { return x.node == e.process && x.key == *key; });
    if (client == kNoProc) {
      if (at != entries_.end()) entries_.erase(at);
      return;
    }
    if (at != entries_.end()) at->client = client;
    else entries_.push_back({e.process, *key, client});
    named_ = true;
  }

  const Trace* trace_;
  std::vector<std::string> keys_;  // the keys named so far, in order of first mention
  std::vector<Entry> entries_;
  bool named_ = false;  // some node named a holder
};

// Each Acquired, judged against what the service held: a grant when the
// client's entries are on at least the lock's quorum of nodes (one; a
// majority for Redlock: Trace::grant_quorum), else a belief.
class GrantTruth {
 public:
  static constexpr EvSet kReads = ServiceHoldings::kReads;
  explicit GrantTruth(const Trace& t) : trace_(&t), holdings_(t) {}
  void restart(const Trace& t) {
    trace_ = &t;
    holdings_.restart(t);
  }
  void observe(const TraceEvent& e) { holdings_.observe(e); }
  // For an Acquired event: on how many nodes the service held the client's entries.
  std::size_t held(const TraceEvent& acquired) const { return holdings_.nodes_holding(acquired.process); }
  // Whether it held them on too few (never where no node names holders).
  bool belief_only(const TraceEvent& acquired) const {
    return holdings_.named() && held(acquired) < trace_->grant_quorum();
  }
  std::size_t quorum() const { return trace_->grant_quorum(); }

 private:
  const Trace* trace_;
  ServiceHoldings holdings_;
};

}  // namespace locksim::checks
