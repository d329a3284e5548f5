// The trace: every event of a run, in true-time order, and a hash of it.
//
// The trace is the only thing the checkers and the reports read. Each event
// carries the true instant, the process it happened at and that process's own
// clock readings at that moment, so a report can say both "t=30.002s" and
// "redis1's clock read 45.002s".
//
// It streams: listeners (the checkers, fault triggers, a JSON Lines writer)
// see each event as it is recorded, and the events themselves are kept only
// up to a limit a report asks for, so a simulated hour runs in flat memory.
// The hash covers every structured field of every event, kept or not; the
// `detail` text is rendering, built only when someone will read it
// (Trace::detailed()), and is not hashed.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "sim/message.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace locksim {

enum class Ev : std::uint8_t {
  // Any process.
  Started,      // value: storage's initial counter
  Paused,       // detail: for how long (true time)
  Resumed,
  Crashed,
  Restarted,
  ClockJumped,  // value: jump in ns (wall clock)
  ClockDrift,   // value: new drift in ppb
  // Clients: the lock's life as the client sees it.
  Acquiring,
  Acquired,       // key: lock value; token: fencing token or -1; detail: validity
  AcquireFailed,
  OwnerChecked,   // a two-step release found its value still in place
  Read,           // value: counter read
  Checked,        // validity re-checked on the local clock and still fine
  Lost,           // the client noticed its lock is gone and abandons its work
  Writing,        // value: counter to write
  Wrote,          // value: counter written (storage accepted)
  WriteRejected,
  Releasing,
  Released,
  ReleaseFailed,  // the release found the lock no longer ours (or could not reach a node)
  JobDone,
  AttemptFailed,  // one try of a multi-step acquire failed; detail: why (the algorithm retries or gives up)
  Renewed,        // the lease was extended (a watchdog, a keepalive); value: new validity on the mono clock
  Claiming,       // fencing = "lock-value": the client claims the storage with its lock value (key)
  // Network.
  Sent,       // peer: destination; detail: content
  Delivered,  // peer: source
  Dropped,    // peer: destination; detail: why
  // Lock-service nodes.
  Command,     // peer: requester; owner: the client whose value the key holds after it (Redis); detail: "SET lock v NX PX 30000 -> OK"
  Expired,     // key: the key; owner: who set it; detail: how (lazily/actively)
  KeyDeleted,  // a command removed a key: peer: requester; owner: who set it
  Promoted,
  // Storage.
  StorageRead,    // peer: client; value: counter; token: presented on a fenced read, else -1
  StorageWrite,   // peer: client; value: new counter; token
  StorageReject,  // peer: client; value: counter offered; token; detail: why; key: "read" for a refused read
  // The fault engine and the network's state.
  Fault,  // detail: what was applied
  // Lock-service nodes, again (kept after Fault so that the kinds before it
  // keep the numbers the trace hash covers).
  Holder,  // key: the lock; owner: the client the node now holds it for (kNoProc: nobody). The
           // coordination services' statement of who holds a lock, made when it changes (the judge's
           // ServiceHoldings); detail: why
  // Clients, again.
  Notified,  // the client's library told the application something (value: a LibrarySignal): a
             // state change, a lost-lock callback, an abort. What the application does about it
             // is its own (a library scenario's check); Lost is when it gives up
  // Decisions a client takes because of what it believes, which no other event shows.
  WriteSkipped,  // the job did not write: its lock had said the lock was lost (Lock::still_held);
                 // value: the counter it would have written
  Retrying,      // a try to acquire did not get the lock, and the client waits before the next;
                 // peer: the node it tried; value: the wait (ns, on its monotonic clock)
};
// The last event kind: every kind is in [Started, kLastEvent].
inline constexpr Ev kLastEvent = Ev::Retrying;

// What a library tells its application (Ev::Notified's value), as the library names it.
enum class LibrarySignal : std::uint8_t {
  Suspended,    // kazoo: KazooState.SUSPENDED, the connection is lost, the session may live
  Reconnected,  // kazoo: KazooState.CONNECTED again, the same session
  SessionLost,  // kazoo: KazooState.LOST, the session expired (its ephemeral nodes are gone)
  LockLost,     // redis-semaphore: onLockLost(LostLockError), a refresh found the key not ours
  LeaseLost,    // etcd3 (Node): the lease's 'lost' event
};

// The name used in the trace and in `on = "<process> <event>"` fault triggers.
std::string_view event_name(Ev kind);

struct TraceEvent {
  Instant at;                // true time
  std::uint64_t seq = 0;     // position in the trace
  ProcId process = kNoProc;  // where it happened (kNoProc: the world itself)
  Ev kind = Ev::Fault;
  ProcId peer = kNoProc;     // the other party, by event kind (see Ev)
  ProcId owner = kNoProc;    // whose lock entry (Expired, KeyDeleted)
  std::int64_t value = 0;
  std::int64_t token = -1;   // fencing token, -1: none
  Instant wall;              // the process's wall clock reading at `at`
  Instant mono;              // the process's monotonic clock reading at `at`
  std::string key;           // lock key, or the lock's random value (Acquired)
  std::uint64_t content = 0; // fingerprint of the message or command the event is about (hashed)
  std::string detail;        // plain words (not hashed; empty unless the trace is detailed())
};

// A set of event kinds: what a trace listener reads.
class EvSet {
 public:
  constexpr EvSet() = default;
  constexpr EvSet(std::initializer_list<Ev> kinds) {
    for (Ev k : kinds) bits_ |= bit(k);
  }
  static constexpr EvSet all() {
    EvSet s;
    s.bits_ = (bit(kLastEvent) << 1) - 1;
    return s;
  }
  // Every kind but `kinds`.
  static constexpr EvSet all_but(std::initializer_list<Ev> kinds) {
    EvSet s = all();
    for (Ev k : kinds) s.bits_ &= ~bit(k);
    return s;
  }
  constexpr bool has(Ev k) const { return (bits_ & bit(k)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr EvSet& operator|=(EvSet o) {
    bits_ |= o.bits_;
    return *this;
  }
  friend constexpr EvSet operator|(EvSet a, EvSet b) { return a |= b; }
  friend constexpr EvSet operator&(EvSet a, EvSet b) {
    a.bits_ &= b.bits_;
    return a;
  }
  // The kinds of this set that are not in `o`.
  constexpr EvSet without(EvSet o) const {
    EvSet s = *this;
    s.bits_ &= ~o.bits_;
    return s;
  }
  friend constexpr bool operator==(EvSet, EvSet) = default;

 private:
  static constexpr std::uint64_t bit(Ev k) { return std::uint64_t{1} << static_cast<unsigned>(k); }
  std::uint64_t bits_ = 0;
};
static_assert(static_cast<unsigned>(kLastEvent) < 64, "EvSet holds every kind in one word");

enum class ProcessRole : std::uint8_t { Client, LockNode, Storage };

struct ProcessInfo {
  std::string name;
  ProcessRole role;
};

class Trace {
 public:
  // Called for every event as it is recorded (fault triggers listen here).
  using Listener = std::function<void(const TraceEvent&)>;
  // What a listener reads: the events of `kinds`; of the kinds in
  // `owned_only`, only events that name an owner (the judge's reading of
  // commands: one that leaves no requester holding the key changes nothing
  // it knows); and, if `clocks`, the processes' clock readings
  // (TraceEvent::wall and mono; without them they may be left unread).
  struct Interest {
    Interest(EvSet kinds = EvSet::all(), EvSet owned_only = {}, bool clocks = true)
        : kinds(kinds), owned_only(owned_only & kinds), clocks(clocks) {}
    EvSet kinds;
    EvSet owned_only;
    bool clocks;
  };

  ProcId add_process(std::string name, ProcessRole role);
  const std::vector<ProcessInfo>& processes() const { return processes_; }
  const std::string& name(ProcId p) const;
  std::optional<ProcId> find(std::string_view name) const;

  void record(TraceEvent&& e);
  // Whether only the hash reads an event of `kind` recorded now: no listener
  // reads the kind and none is kept. Such an event may be recorded with
  // record_hashed() instead of being built (the network's sent and delivered
  // events in a long run: two of every message's three events).
  bool hash_only(Ev kind) const { return hashing_ && !heard_.has(kind) && events_.size() >= keep_limit_; }
  // The same of an event that names no owner: no listener reads `kind`
  // unless it names one (a Redis command that leaves nobody holding, which
  // the judge does not read: most of the benchmark's commands).
  bool hash_only_unowned(Ev kind) const {
    return hashing_ && !heard_unowned_.has(kind) && events_.size() >= keep_limit_;
  }
  // record() of the event with these fields, no owner and no token, when
  // hash_only(kind) or hash_only_unowned(kind): counted and hashed alike,
  // never built.
  void record_hashed(Instant at, ProcId process, Ev kind, ProcId peer, std::int64_t value, Instant wall,
                     Instant mono, std::uint64_t content, std::string_view key = {}) {
    ++count_;
    hash_ = hash_fields(hash_, at, process, kind, peer, kNoProc, value, -1, wall, mono, content, key);
  }
  // A listener hears the events it reads (Interest; default: every event,
  // whole). Returns its number, for widen_listener.
  std::size_t add_listener(Listener l, Interest reads = {});
  // Listener `id` reads `more` besides (a watcher joined it): a kind read
  // whole by either is read whole, and the clock readings if either reads them.
  void widen_listener(std::size_t id, Interest more);
  // Whether anyone reads an event of `kind` recorded now: the hash, the
  // events kept, or a listener of that kind. When nobody does, the recorder
  // may skip() it instead of building it (explore's runs, which read only
  // their verdict, skip the network's sent and delivered events).
  bool wants(Ev kind) const { return wanted_.has(kind) || events_.size() < keep_limit_; }
  // wants() of an event of `kind` that names no owner: as wants(), less the
  // listeners that read `kind` only when it names one (add_listener).
  bool wants_unowned(Ev kind) const { return wanted_unowned_.has(kind) || events_.size() < keep_limit_; }
  // Whether anyone reads the clock readings of an event recorded now: the
  // hash, the events kept, or a listener that reads them (Interest::clocks).
  bool wants_clocks() const { return clocks_wanted_ || events_.size() < keep_limit_; }
  // An event nobody reads: counted (size() and later events' seq are as if
  // it were recorded), not built, hashed or shown.
  void skip() { ++count_; }
  // Hash the events (default). Off: hash_hex() is empty, and events of
  // kinds no listener reads may be skipped. Set before the first event.
  void set_hashing(bool on);
  bool hashing() const { return hashing_; }
  // Keep at most `limit` events (the first ones); the hash and the listeners
  // see them all. 0: keep none.
  void set_keep_limit(std::uint64_t limit) { keep_limit_ = limit; }
  // Build the `detail` text of events even though none are kept (a listener
  // writes them out).
  void want_details() { want_details_ = true; }
  // Whether events carry their detail text: someone will read it.
  bool detailed() const { return want_details_ || count_ < keep_limit_; }
  // How many of the lock's nodes must hold a client's entry for its acquire
  // to be a grant (product.md: "a majority of nodes holding the client's
  // value"): the harness sets it from the algorithm and the scenario's nodes
  // (judge/checkers.cpp, GrantTruth). How the run is judged, not what
  // happened: not hashed.
  void set_grant_quorum(std::size_t n) { grant_quorum_ = n; }
  std::size_t grant_quorum() const { return grant_quorum_; }

  const std::vector<TraceEvent>& events() const { return events_; }
  // Whether events() holds every event recorded.
  bool complete() const { return events_.size() == count_; }
  std::uint64_t size() const { return count_; }
  // A 64-bit hash over the structured fields of every event, as 16 hex
  // digits (empty when hashing is off).
  std::string hash_hex() const;
  // One line per event, the form the hash is computed over.
  std::string line(const TraceEvent& e) const;

 private:
  void hash_event(const TraceEvent& e);
  // The trace hash's step for one event: every structured field, in this order.
  static std::uint64_t hash_fields(std::uint64_t h, Instant at, ProcId process, Ev kind, ProcId peer, ProcId owner,
                                   std::int64_t value, std::int64_t token, Instant wall, Instant mono,
                                   std::uint64_t content, std::string_view key) {
    h = hash_mix(h, static_cast<std::uint64_t>(at.ns()));
    h = hash_mix(h, (std::uint64_t{process} << 32) | (std::uint64_t{peer} << 8) | static_cast<std::uint8_t>(kind));
    h = hash_mix(h, std::uint64_t{owner});
    h = hash_mix(h, static_cast<std::uint64_t>(value));
    h = hash_mix(h, static_cast<std::uint64_t>(token));
    h = hash_mix(h, static_cast<std::uint64_t>(wall.ns()));
    h = hash_mix(h, static_cast<std::uint64_t>(mono.ns()));
    h = hash_mix(h, content);
    return hash_mix(h, key);
  }
  std::vector<ProcessInfo> processes_;
  std::vector<TraceEvent> events_;
  struct Listening {
    Listener listener;
    Interest reads;
  };
  void want_again();
  std::vector<Listening> listeners_;
  EvSet wanted_ = EvSet::all();  // the hash's (every kind, when hashing) and the listeners' kinds
  EvSet wanted_unowned_ = EvSet::all();  // the same, less the listeners' owned-only kinds
  EvSet heard_;                          // the listeners' kinds
  EvSet heard_unowned_;                  // the same, less the kinds a listener reads only with an owner
  bool clocks_wanted_ = true;  // by the hash or a listener
  bool hashing_ = true;
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
  std::uint64_t count_ = 0;
  std::uint64_t keep_limit_ = ~std::uint64_t{0};
  bool want_details_ = false;
  std::size_t grant_quorum_ = 1;
};

}  // namespace locksim
