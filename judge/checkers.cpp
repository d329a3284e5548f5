// The judges (product.md, "Properties every run is judged by"). Every checker
// reads only the trace, in its recorded order (true time, ties in the order the
// simulator produced them), and looks at client events by the role each process
// has in Trace::processes().
#include "judge/checkers.hpp"

#include "sim/word_ids.hpp"

#include <algorithm>
#include <iterator>
#include <set>

namespace locksim {

std::string_view violation_name(ViolationKind k) {
  switch (k) {
    case ViolationKind::Overlap: return "overlap";
    case ViolationKind::StaleWrite: return "stale-write";
    case ViolationKind::LostUpdate: return "lost-update";
    case ViolationKind::ForeignRelease: return "foreign-release";
    case ViolationKind::Stuck: return "stuck";
  }
  return "?";
}

std::optional<ViolationKind> parse_violation(std::string_view name) {
  for (ViolationKind k : kAllViolationKinds)
    if (violation_name(k) == name) return k;
  return std::nullopt;
}

std::string_view violation_help(ViolationKind k) {
  switch (k) {
    case ViolationKind::Overlap:
      return "two clients' critical sections overlapped in true time: mutual exclusion failed";
    case ViolationKind::StaleWrite:
      return "storage accepted a write from a client whose lock had since been granted to another: data safety failed";
    case ViolationKind::LostUpdate:
      return "the storage's final counter does not account for every accepted read-modify-write";
    case ViolationKind::ForeignRelease:
      return "a client's release removed a lock entry that another client held";
    case ViolationKind::Stuck:
      return "longer than the liveness window (2 x TTL; without a TTL, the rest of the run) a client waited "
             "while nobody held the lock";
  }
  return "";
}

namespace {

bool has_role(const Trace& t, ProcId p, ProcessRole role) {
  return p < t.processes().size() && t.processes()[p].role == role;
}
bool is_client(const Trace& t, ProcId p) { return has_role(t, p, ProcessRole::Client); }

// The names of `ps`, for a Phrase's list.
std::vector<std::string> names_of(const Trace& trace, const std::vector<ProcId>& ps) {
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

// Overlap. Each client's critical sections run from Acquired to its first
// later Releasing, Lost or Crashed, or to the end of the run. A second
// Acquired while one is open (a re-entrant acquire) does not start a new one.
// A section that starts while another client's is open overlaps it; the
// overlap ends when the first of the two closes.
class OverlapChecker {
 public:
  static constexpr EvSet kReads{Ev::Acquired, Ev::Releasing, Ev::Lost, Ev::Crashed};
  OverlapChecker(const Trace& t, const CheckOptions&, const GrantTruth& truth) : trace_(&t), truth_(truth) {}
  // As constructed anew on `t` (capacity kept; the truth restarted by its owner).
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    open_.clear();
    sections_.clear();
    pairs_.clear();
    out_.clear();
    dropped_.clear();
    next_id_ = 0;
  }

  void observe(const TraceEvent& e) {
    if (!is_client(*trace_, e.process)) return;
    auto& mine = slot(open_, e.process, *trace_);
    if (e.kind == Ev::Acquired) {
      if (mine) return;
      const bool belief = truth_.belief_only(e);
      const std::size_t held = truth_.held(e);
      for (const Section& a : sections_) {
        if (a.client == e.process) continue;
        pairs_.push_back({a.id, next_id_, a.start, e.at, out_.size(), a.belief, belief, a.held, held});
        out_.push_back({ViolationKind::Overlap, e.at, e.at, {a.client, e.process}, {}});
      }
      sections_.push_back({next_id_, e.process, e.at, belief, held});
      mine = next_id_++;
    } else if (e.kind == Ev::Releasing || e.kind == Ev::Lost || e.kind == Ev::Crashed) {
      if (!mine) return;
      close(*mine, e.at);
      mine.reset();
    }
  }

  std::vector<Violation> finish(const CheckOptions& o) {
    while (!sections_.empty()) close(sections_.front().id, o.run_end);
    std::vector<Violation> kept;
    for (std::size_t i = 0; i < out_.size(); ++i)
      if (!dropped_.count(i)) kept.push_back(std::move(out_[i]));
    return kept;
  }

 private:
  struct Section {
    std::uint64_t id;
    ProcId client;
    Instant start;
    bool belief;  // the service held too little of its entries when it began (GrantTruth)
    std::size_t held;  // on how many nodes
  };
  struct Pair {
    std::uint64_t earlier, later;  // section ids
    Instant earlier_start, later_start;
    std::size_t violation;
    bool earlier_belief, later_belief;
    std::size_t earlier_held, later_held;
  };

  // "client1 and client2 both held the lock", or, when one only believed it
  // did, says so (and on how few nodes the service held its entries).
  Phrase who_held(const Violation& v, const Pair& p, Instant end) const {
    const std::string a = trace_->name(v.processes[0]), b = trace_->name(v.processes[1]);
    Phrase said;
    if (p.earlier_belief == p.later_belief) {
      said = Phrase(!p.earlier_belief                          ? W::ViolationBothHeld
                    : p.earlier_held + p.later_held == 0 ? W::ViolationBothBelieved
                                                         : W::ViolationBothBelievedTooFew);
      said.name("a", a).name("b", b);
    } else {
      const std::size_t held = p.earlier_belief ? p.earlier_held : p.later_held;
      const std::string& believed = p.earlier_belief ? a : b;
      said = Phrase(held == 0 ? W::ViolationHeldAndBelieved : W::ViolationHeldAndBelievedTooFew);
      said.name("held", p.earlier_belief ? b : a).name("believed", believed).name("none", believed);
      if (held != 0) said.number("n", static_cast<std::int64_t>(held)).number("quorum", static_cast<std::int64_t>(truth_.quorum()));
    }
    said.instant("from", v.at).instant("to", end);
    return said;
  }

  void close(std::uint64_t id, Instant end) {
    std::erase_if(sections_, [&](const Section& s) { return s.id == id; });
    std::erase_if(pairs_, [&](const Pair& p) {
      if (p.earlier != id && p.later != id) return false;
      // A section that ends the instant the other begins does not overlap it.
      if (p.earlier == id && end <= p.later_start) {
        dropped_.insert(p.violation);
        return true;
      }
      Violation& v = out_[p.violation];
      v.until = end;
      v.detail = who_held(v, p, end);
      return true;
    });
  }

  const Trace* trace_;
  const GrantTruth& truth_;
  std::vector<std::optional<std::uint64_t>> open_;  // each client's open section
  std::vector<Section> sections_;                   // open, in order of start
  std::vector<Pair> pairs_;                         // overlaps whose end is not known yet
  std::vector<Violation> out_;
  std::set<std::size_t> dropped_;
  std::uint64_t next_id_ = 0;
};

// Stale write: storage accepted a write from a client that was granted the
// lock before the latest grant, which went to another client. Grants are
// judged by what the lock service held (GrantTruth): a client that recorded
// Acquired while the service held none of its entries only believed it held
// the lock (K7). Its own "grant" neither supersedes anyone's nor protects its
// writes; for it, the time it began asking stands for when it was granted.
//
// One write of a superseded holder is not stale: a write in token order
// (its token at least every token the storage has accepted) that lands
// before the storage has accepted any read or write of the latest holder
// since its grant. The storage then orders it wholly before everything that
// holder's critical section does to the data — its first accepted read sees
// the write — so no update can be lost through it; this is what fencing a
// storage on reads as well as writes guarantees (docs/lab.md, "The verdicts";
// docs/explore.md, "With fenced reads").
// Any later write of the superseded holder is judged afresh.
class StaleWriteChecker {
 public:
  static constexpr EvSet kReads{Ev::Acquiring, Ev::Acquired, Ev::StorageWrite, Ev::StorageRead, Ev::StorageReject};
  StaleWriteChecker(const Trace& t, const CheckOptions&, const GrantTruth& truth) : trace_(&t), truth_(truth) {}
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    asking_since_.clear();
    grants_.clear();
    latest_ = kNoProc;
    highest_token_ = -1;
    out_.clear();
  }

  void observe(const TraceEvent& e) {
    if (is_client(*trace_, e.process) && e.kind == Ev::Acquiring) {
      slot(asking_since_, e.process, *trace_) = e.at;
      return;
    }
    if (e.kind == Ev::Acquired && is_client(*trace_, e.process)) {
      Grant& g = slot(grants_, e.process, *trace_);
      if (truth_.belief_only(e)) {
        g.belief = e.at;
        g.belief_held = truth_.held(e);
        g.belief_asked = e.process < asking_since_.size() && asking_since_[e.process] ? *asking_since_[e.process] : e.at;
        g.last_was_belief = true;
        return;
      }
      g.real = e.at;
      g.last_was_belief = false;
      g.touched = false;
      latest_ = e.process;
      return;
    }
    if (e.kind != Ev::StorageWrite && e.kind != Ev::StorageRead && e.kind != Ev::StorageReject) return;
    if (e.kind == Ev::StorageWrite) judge_write(e);
    if (e.kind == Ev::StorageReject) return;  // refused: it changed nothing and showed the storage nothing
    if (e.token > highest_token_) highest_token_ = e.token;
    if (e.peer < grants_.size()) grants_[e.peer].touched = true;
  }

  std::vector<Violation> finish(const CheckOptions&) { return std::move(out_); }

 private:
  void judge_write(const TraceEvent& e) {
    if (e.peer >= grants_.size() || (!grants_[e.peer].real && !grants_[e.peer].belief)) return;  // never acquired
    if (latest_ == kNoProc || latest_ == e.peer) return;
    const Grant& g = grants_[e.peer];
    const Instant theirs = *grants_[latest_].real;
    const Instant mine = g.last_was_belief || !g.real ? std::min(g.belief_asked, g.real.value_or(Instant::never())) : *g.real;
    if (!(mine < theirs)) return;  // granted at the same instant: not after it
    if (e.token >= 0 && e.token >= highest_token_ && !grants_[latest_].touched) return;  // ordered before theirs
    const bool token = e.token >= 0;
    Phrase detail;
    if (g.last_was_belief) {
      const bool too_few = g.belief_held != 0;
      detail = Phrase(too_few ? (token ? W::ViolationStaleBeliefTooFewToken : W::ViolationStaleBeliefTooFew)
                              : (token ? W::ViolationStaleBeliefToken : W::ViolationStaleBelief));
    } else {
      detail = Phrase(token ? W::ViolationStaleToken : W::ViolationStale);
    }
    detail.name("storage", trace_->name(e.process)).name("who", trace_->name(e.peer));
    if (token) detail.number("token", e.token);
    detail.instant("t", e.at).name("latest", trace_->name(latest_)).instant("granted", theirs);
    if (g.last_was_belief) {
      detail.name("believer", trace_->name(e.peer)).instant("acquired", *g.belief);
      if (g.belief_held != 0)
        detail.number("n", static_cast<std::int64_t>(g.belief_held)).number("quorum", static_cast<std::int64_t>(truth_.quorum()));
    } else {
      detail.name("writer", trace_->name(e.peer)).instant("own", mine);
    }
    out_.push_back({ViolationKind::StaleWrite, e.at, e.at, {e.peer, latest_}, std::move(detail)});
  }

  struct Grant {
    std::optional<Instant> real;    // its last grant the service held
    bool touched = false;           // the storage has accepted a read or write of its since that grant
    std::optional<Instant> belief;  // its last Acquired the service did not hold
    Instant belief_asked;           // when it began asking for that one
    std::size_t belief_held = 0;    // on how many nodes the service held its entries then
    bool last_was_belief = false;
  };
  const Trace* trace_;
  const GrantTruth& truth_;
  std::vector<std::optional<Instant>> asking_since_;
  std::vector<Grant> grants_;
  ProcId latest_ = kNoProc;  // the most recent real grant of all
  std::int64_t highest_token_ = -1;  // the highest token the storage has accepted, on a read or a write
  std::vector<Violation> out_;
};

// Lost update: the storage's counter must end at its initial value plus the
// number of accepted writes, each one the previous value plus one.
class LostUpdateChecker {
 public:
  static constexpr EvSet kReads{Ev::Started, Ev::StorageWrite};
  LostUpdateChecker(const Trace& t, const CheckOptions&) : trace_(&t) {}
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    initial_.reset();
    current_ = accepted_ = 0;
    current_writer_ = kNoProc;
    bad_.reset();
  }

  void observe(const TraceEvent& e) {
    if (e.kind == Ev::Started && has_role(*trace_, e.process, ProcessRole::Storage)) {
      if (!initial_) initial_ = current_ = e.value;
      return;
    }
    if (e.kind != Ev::StorageWrite) return;
    ++accepted_;
    if (!bad_ && e.value != current_ + 1) bad_ = Bad{e.at, e.peer, e.value, current_, current_writer_};
    current_ = e.value;
    current_writer_ = e.peer;
  }

  std::vector<Violation> finish(const CheckOptions& o) {
    // Every write the previous value plus one leaves the counter at its
    // initial value plus the writes: only a bad write can lose an update.
    if (!bad_) return {};
    const std::int64_t initial = initial_.value_or(0);
    const Bad& b = *bad_;
    std::vector<ProcId> who{b.writer};
    if (b.previous_writer != kNoProc && b.previous_writer != b.writer) who.push_back(b.previous_writer);
    const bool initial_value = b.previous_writer == kNoProc;
    Phrase how(b.value <= b.previous ? (initial_value ? W::ViolationOverwroteInitial : W::ViolationOverwrote)
                                     : (initial_value ? W::ViolationSkippedInitial : W::ViolationSkipped));
    how.name("who", trace_->name(b.writer)).number("value", b.value).instant("t", b.at);
    if (!initial_value) how.name("writer", trace_->name(b.previous_writer));
    how.number("previous", b.previous);
    if (b.value > b.previous) how.number("expected", b.previous + 1);
    Phrase detail(initial != 0 ? (accepted_ == 1 ? W::ViolationCounterFromOne : W::ViolationCounterFrom)
                               : (accepted_ == 1 ? W::ViolationCounterOne : W::ViolationCounter));
    detail.number("value", current_).number("n", accepted_);
    if (initial != 0) detail.number("initial", initial);
    detail.part("how", std::move(how));
    return {{ViolationKind::LostUpdate, b.at, b.at, std::move(who), std::move(detail)}};
  }

 private:
  struct Bad {  // the first write that was not the previous value plus one
    Instant at;
    ProcId writer;
    std::int64_t value, previous;
    ProcId previous_writer;
  };
  const Trace* trace_;
  std::optional<std::int64_t> initial_;
  std::int64_t current_ = 0, accepted_ = 0;
  ProcId current_writer_ = kNoProc;  // who wrote `current_` (kNoProc: the initial value)
  std::optional<Bad> bad_;
};

// Foreign release: a client's release deleted a lock entry another client set.
class ForeignReleaseChecker {
 public:
  static constexpr EvSet kReads{Ev::Releasing, Ev::Released, Ev::ReleaseFailed, Ev::Crashed, Ev::Acquiring, Ev::KeyDeleted};
  ForeignReleaseChecker(const Trace& t, const CheckOptions&) : trace_(&t) {}
  void restart(const Trace& t, const CheckOptions&) {
    trace_ = &t;
    releasing_.clear();
    out_.clear();
  }

  void observe(const TraceEvent& e) {
    if (is_client(*trace_, e.process)) {
      if (e.kind == Ev::Releasing) slot(releasing_, e.process, *trace_) = 1;
      else if (e.kind == Ev::Released || e.kind == Ev::ReleaseFailed || e.kind == Ev::Crashed ||
               e.kind == Ev::Acquiring)
        slot(releasing_, e.process, *trace_) = 0;
      return;
    }
    if (e.kind != Ev::KeyDeleted || e.owner == kNoProc || e.owner == e.peer) return;
    if (e.peer >= releasing_.size() || !releasing_[e.peer]) return;
    out_.push_back({ViolationKind::ForeignRelease, e.at, e.at, {e.peer, e.owner},
                    Phrase(W::ViolationForeignRelease)
                        .name("who", trace_->name(e.peer))
                        .name("key", e.key)
                        .name("node", trace_->name(e.process))
                        .name("owner", trace_->name(e.owner))});
  }

  std::vector<Violation> finish(const CheckOptions&) { return std::move(out_); }

 private:
  const Trace* trace_;
  std::vector<std::uint8_t> releasing_;
  std::vector<Violation> out_;
};

// Stuck: clients waited to acquire while nobody held the lock, for longer than
// the liveness window.
class StuckChecker {
 public:
  static constexpr EvSet kReads{Ev::Acquiring, Ev::Acquired, Ev::AcquireFailed, Ev::Releasing, Ev::Lost,
                                         Ev::Crashed, Ev::Paused, Ev::Resumed};
  StuckChecker(const Trace& t, const CheckOptions& o) : trace_(&t), window_(window_of(o)) {}
  void restart(const Trace& t, const CheckOptions& o) {
    trace_ = &t;
    window_ = window_of(o);
    clients_.clear();
    waiters_ = holders_ = 0;
    seq_ = 0;
    stretch_start_.reset();
    stretch_start_seq_ = 0;
    out_.clear();
  }

  void observe(const TraceEvent& e) {
    if (!is_client(*trace_, e.process)) return;
    seq_ = e.seq + 1;  // 0 is "never"
    switch (e.kind) {
      case Ev::Acquiring: set_waiting(e.process, true); break;
      case Ev::Acquired: set_waiting(e.process, false); set_holding(e.process, true); break;
      case Ev::AcquireFailed: set_waiting(e.process, false); break;
      case Ev::Releasing:
      case Ev::Lost: set_holding(e.process, false); break;
      case Ev::Crashed: set_waiting(e.process, false); set_holding(e.process, false); break;
      // A client frozen by a stop-the-world pause is not waiting on the lock:
      // nothing of it runs, so no lock could serve it (one paused inside its
      // acquire until after the run ended was called stuck).
      case Ev::Paused: set_frozen(e.process, true); break;
      case Ev::Resumed: set_frozen(e.process, false); break;
      default: return;
    }
    const bool stuck_now = waiters_ > 0 && holders_ == 0;
    if (!stuck_now) {
      close(e.at, false);
      return;
    }
    if (!stretch_start_) {
      stretch_start_ = e.at;
      stretch_start_seq_ = seq_;
    }
  }

  std::vector<Violation> finish(const CheckOptions& o) {
    close(o.run_end, true, o.run_end);
    return std::move(out_);
  }

 private:
  static std::optional<Duration> window_of(const CheckOptions& o) {
    return o.liveness_window ? o.liveness_window : o.ttl ? std::optional(*o.ttl * 2) : std::nullopt;
  }
  void close(Instant end, bool open_at_run_end, Instant run_end = Instant::never()) {
    if (!stretch_start_) return;
    const Duration length = end - *stretch_start_;
    const bool counts = window_ ? length > *window_ : open_at_run_end && length > (run_end - Instant::zero()) / 2;
    if (counts) {
      // Everyone who waited during the stretch: waiting now, or stopped after it began.
      std::vector<ProcId> who;
      for (ProcId p = 0; p < clients_.size(); ++p)
        if (counted(p) || clients_[p].wait_ended > stretch_start_seq_) who.push_back(p);
      Phrase detail(window_ ? W::ViolationStuckWindow : W::ViolationStuckNoTtl);
      detail.names("who", names_of(*trace_, who)).duration("d", length);
      if (window_) detail.duration("window", *window_);
      else detail.instant("end", run_end);
      out_.push_back({ViolationKind::Stuck, *stretch_start_, end, std::move(who), std::move(detail)});
    }
    stretch_start_.reset();
  }

  // Counted as a waiter: asking for the lock and not frozen by a pause.
  bool counted(ProcId p) const { return p < clients_.size() && clients_[p].counted(); }
  void recount(ProcId p, bool before) {
    const bool now = counted(p);
    if (now == before) return;
    if (now) {
      ++waiters_;
    } else {
      --waiters_;
      clients_[p].wait_ended = seq_;
    }
  }
  void set_waiting(ProcId p, bool on) {
    const bool before = counted(p);
    slot(clients_, p, *trace_).waiting = on;
    recount(p, before);
  }
  void set_frozen(ProcId p, bool on) {
    const bool before = counted(p);
    slot(clients_, p, *trace_).frozen = on;
    recount(p, before);
  }
  void set_holding(ProcId p, bool on) {
    bool& h = slot(clients_, p, *trace_).holding;
    if (h == on) return;
    h = on;
    if (on) ++holders_;
    else --holders_;
  }

  // One client's state, in one vector (one allocation per run).
  struct ClientState {
    bool waiting = false, holding = false, frozen = false;
    std::uint64_t wait_ended = 0;  // 1 + seq of the event that ended its last wait
    bool counted() const { return waiting && !frozen; }
  };
  const Trace* trace_;
  std::optional<Duration> window_;
  std::vector<ClientState> clients_;       // by process
  std::size_t waiters_ = 0, holders_ = 0;  // clients waiting, holding now
  std::uint64_t seq_ = 0;                  // 1 + seq of the event being judged
  std::optional<Instant> stretch_start_;
  std::uint64_t stretch_start_seq_ = 0;    // 1 + seq of the event that began it
  std::vector<Violation> out_;
};

template <typename Checker>
std::vector<Violation> run_one(const Trace& trace, const CheckOptions& o) {
  Checker c(trace, o);
  for (const TraceEvent& e : trace.events()) c.observe(e);
  return c.finish(o);
}

// A checker that judges grants by what the service held: the service's
// events go to the GrantTruth first.
template <typename Checker>
std::vector<Violation> run_with_truth(const Trace& trace, const CheckOptions& o) {
  GrantTruth truth(trace);
  Checker c(trace, o, truth);
  for (const TraceEvent& e : trace.events()) {
    truth.observe(e);
    c.observe(e);
  }
  return c.finish(o);
}

}  // namespace

std::vector<Belief> beliefs_not_grants(const Trace& trace) {
  GrantTruth truth(trace);
  std::vector<Belief> out;
  for (const TraceEvent& e : trace.events()) {
    truth.observe(e);
    if (e.kind == Ev::Acquired && is_client(trace, e.process) && truth.belief_only(e))
      out.push_back({e.seq, e.process, e.at, truth.held(e)});
  }
  return out;
}

struct Judge::Impl {
  Impl(const Trace& t, const CheckOptions& o)
      : truth(t), overlap(t, o, truth), stale(t, o, truth), lost(t, o), foreign(t, o), stuck(t, o), harm(t) {}
  GrantTruth truth;  // first: the checkers below refer to it
  OverlapChecker overlap;
  StaleWriteChecker stale;
  LostUpdateChecker lost;
  ForeignReleaseChecker foreign;
  StuckChecker stuck;
  HarmMeter harm;  // not a checker: the measure beside the verdict
};

Judge::Judge(const Trace& trace, const CheckOptions& o) : impl_(std::make_unique<Impl>(trace, o)) {}

void Judge::restart(const Trace& trace, const CheckOptions& o) {
  Impl& j = *impl_;
  j.truth.restart(trace);
  j.overlap.restart(trace, o);
  j.stale.restart(trace, o);
  j.lost.restart(trace, o);
  j.foreign.restart(trace, o);
  j.stuck.restart(trace, o);
  j.harm.restart(trace);
}
Judge::~Judge() = default;

void Judge::observe(const TraceEvent& e) {
  // Each checker sees the kinds it reads (its kReads), the truth first: the
  // network's chatter and the failed tries concern none of them.
  static_assert(Judge::kReads == (GrantTruth::kReads | OverlapChecker::kReads | StaleWriteChecker::kReads |
                                  LostUpdateChecker::kReads | ForeignReleaseChecker::kReads | StuckChecker::kReads |
                                  HarmMeter::kReads),
                "Judge::kReads is every kind some checker (or the harm meter) reads");
  static_assert((Judge::kOwnedOnly & (OverlapChecker::kReads | StaleWriteChecker::kReads | LostUpdateChecker::kReads |
                                      ForeignReleaseChecker::kReads | StuckChecker::kReads)) == EvSet{} &&
                    (Judge::kOwnedOnly & GrantTruth::kReads) == Judge::kOwnedOnly,
                "the owned-only kinds are the service holdings' commands: no other checker reads them");
  Impl& j = *impl_;
  if (GrantTruth::kReads.has(e.kind)) j.truth.observe(e);
  if (OverlapChecker::kReads.has(e.kind)) j.overlap.observe(e);
  if (StaleWriteChecker::kReads.has(e.kind)) j.stale.observe(e);
  if (LostUpdateChecker::kReads.has(e.kind)) j.lost.observe(e);
  if (ForeignReleaseChecker::kReads.has(e.kind)) j.foreign.observe(e);
  if (StuckChecker::kReads.has(e.kind)) j.stuck.observe(e);
  if (HarmMeter::kReads.has(e.kind)) j.harm.observe(e);
}

Harm Judge::harm() const { return impl_->harm.finish(); }

std::vector<Violation> Judge::finish(Instant run_end) {
  CheckOptions o;
  o.run_end = run_end;
  std::vector<Violation> all;
  for (auto found : {impl_->overlap.finish(o), impl_->stale.finish(o), impl_->lost.finish(o),
                     impl_->foreign.finish(o), impl_->stuck.finish(o)})
    all.insert(all.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
  std::stable_sort(all.begin(), all.end(), [](const Violation& a, const Violation& b) {
    return a.at != b.at ? a.at < b.at : a.kind < b.kind;
  });
  return all;
}

std::vector<Violation> check_overlap(const Trace& t, const CheckOptions& o) {
  return run_with_truth<OverlapChecker>(t, o);
}
std::vector<Violation> check_stale_write(const Trace& t, const CheckOptions& o) {
  return run_with_truth<StaleWriteChecker>(t, o);
}
std::vector<Violation> check_lost_update(const Trace& t, const CheckOptions& o) {
  return run_one<LostUpdateChecker>(t, o);
}
std::vector<Violation> check_foreign_release(const Trace& t, const CheckOptions& o) {
  return run_one<ForeignReleaseChecker>(t, o);
}
std::vector<Violation> check_stuck(const Trace& t, const CheckOptions& o) { return run_one<StuckChecker>(t, o); }

std::vector<Violation> check_trace(const Trace& trace, const CheckOptions& o) {
  Judge judge(trace, o);
  for (const TraceEvent& e : trace.events()) judge.observe(e);
  return judge.finish(o.run_end);
}

}  // namespace locksim
