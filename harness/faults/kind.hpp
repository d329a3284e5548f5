// A fault kind as data: what the loader, the fault engine, the writer,
// explore and the shrinker need to know of it. Each kind is one file in this
// folder defining its FaultKindInfo, listed once in table.hpp. Nothing
// registers itself: the table names every kind, and every question about the
// kinds (names, `locksim list`, what explore draws, the sort order) is
// answered from it here.
//
// A kind's parameters live in FaultSpec (scenario.hpp), which has a field for
// each kind's keys; a kind that needs a parameter no kind has yet adds one.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/faults/table.hpp"
#include "harness/scenario.hpp"
#include "lockalgos/options.hpp"
#include "sim/phrase.hpp"
#include "sim/rng.hpp"
#include "sim/world.hpp"

namespace locksim {

// A [[fault]] table's keys as its kind reads them: the loader's typed
// getters, so that every rejection reads
// "x.toml:12: [[fault]] pause 'duration': ..." whatever the kind.
class FaultReader {
 public:
  using Sign = ::locksim::Sign;
  static constexpr Sign Any = Sign::Any, NonNegative = Sign::NonNegative, Positive = Sign::Positive,
                        NonZero = Sign::NonZero;
  virtual ~FaultReader() = default;

  virtual bool has(std::string_view key) const = 0;
  // The name of a declared process; "" when the key is absent and not required.
  virtual std::string process(std::string_view key, bool required) const = 0;
  virtual std::optional<Duration> duration(std::string_view key, bool required, Sign sign) const = 0;
  virtual std::optional<double> number(std::string_view key) const = 0;
  virtual std::optional<std::int64_t> integer(std::string_view key, std::int64_t lo, std::int64_t hi) const = 0;
  virtual std::optional<bool> boolean(std::string_view key) const = 0;
  // Required: two or more non-empty groups of declared processes, none in two groups.
  virtual std::vector<std::vector<std::string>> process_groups(std::string_view key) const = 0;
  // Rejects the fault, at the key's line (the table's when the key is absent).
  [[noreturn]] virtual void fail(std::string_view key, const std::string& what) const = 0;
  // The scenario as read so far: its processes, its [sentinel], the faults before this one.
  virtual const Scenario& scenario() const = 0;
};

// What applying a fault may touch. One per run (the fault engine's).
struct FaultContext {
  World& world;
  const Scenario& scenario;
  std::map<ProcId, Instant> crashed_at;  // a restart waits out a node's restart_delay from here

  // REQUIRES: `name` is a process of the world (the loader checked).
  ProcId id(const std::string& name) const;
  // Whether the trace keeps the words of what a fault did (Trace::detailed):
  // if not, no text is built for it (a rule's label, a Fault event's detail),
  // and it never will be later in the run. The words are not hashed.
  bool detailed() const { return world.trace().detailed(); }
};

// Writes a fault's keys as `key = value` lines, as scenario_writer.cpp writes every table.
class FaultWriter {
 public:
  explicit FaultWriter(std::string& out) : out_(out) {}
  void string(std::string_view key, const std::string& value);   // "value", quoted and escaped
  void duration(std::string_view key, Duration d);               // "250ms"
  void ppm(std::string_view key, std::int64_t ppb);               // parts per million, from billionths
  void groups(std::string_view key, const std::vector<std::vector<std::string>>& groups);
  void raw(std::string_view key, const std::string& toml);        // a number or a boolean, already TOML

 private:
  std::string& out_;
};

// A duration of the scenario's own that breaking a lock is measured against
// (the lease, a validity, a replication lag, a client's work), or how long
// after a fault's start some event came in the reference run ("client2
// read"): what explore measures the faults it draws by.
enum class Measure : std::uint8_t {
  Lease, TwoLeases, Handover, Validity,           // the lock's
  ReplicationLag, RestartDelay,                   // a node's
  DownAfter, SentinelPing,                        // the sentinels'
  Hold, Work, Start, Think, StorageTimeout,       // a client's
  NetworkDelay,
};
struct NamedDuration {
  Measure measure;
  std::string of;  // whose: the node's or the client's name ("" for the lock's, the network's)
  Duration value;
  auto operator<=>(const NamedDuration&) const = default;
};

// What explore draws a fault from: the base scenario's processes and the
// bounds of the magnitudes. Every draw comes from `rng`, in the order the
// kind makes them: a run is a function of its seed.
struct FaultDraw {
  Rng& rng;
  const Scenario& base;
  Duration max_pause, max_jump, max_outage;
  std::int64_t max_drift_ppm = 0;
  std::vector<std::string> clients, nodes;
  std::vector<std::string> everyone;               // clients, nodes, then the storage
  std::vector<std::string> servers;                // nodes, then the storage
  std::vector<std::string> masters_with_replicas;  // one entry per replica
  // The scenario's own durations (explore_reference.hpp), and the events of
  // the reference run after this fault's start, measured from it.
  const std::vector<NamedDuration>* constants = nullptr;
  // An event of the reference run: its process (the reference's own
  // string), kind, and how long after the fault's start it came. No name is
  // built for it (reports/ says it, from explore's FoundLabel).
  struct Later {
    const std::string* process;
    Ev event;
    Duration value;
  };
  std::vector<Later> later;
  // The process whose event the fault waits for ("" for a fault at a time):
  // a kind prefers it as its target.
  std::string anchor_process;
  // Where the last length() came from: random, a constant ("lease"), or the
  // time until another process's event ("until client2 read"); none before
  // any. Pointers: explore copies them into notes (FoundLabel) only for a run
  // whose notes it keeps (one that found something).
  struct LengthSource {
    bool random = false;
    const NamedDuration* constant = nullptr;  // one of *constants
    const std::string* process = nullptr;     // an event's (the reference's own string)
    Ev event = Ev::Started;
  };
  LengthSource length_source;
  // length()'s candidates, kept from one call to the next (no allocation per draw).
  std::vector<const Later*> scratch_events;
  std::vector<const NamedDuration*> scratch_fixed;

  // A length for a pause, an outage or a window, in [1ms, max] (at least
  // 1ms): uniform, or a constant of the scenario or the time until another
  // process's event (not `target`'s), each give or take a little.
  Duration length(Duration max, const std::string& target = "");
  // One of `pool`, `anchor_process` with probability `p` when it is in the pool.
  const std::string& target(const std::vector<std::string>& pool, double p = 0.5);
};

// What explore --exhaustive tries at an anchor: the processes, and the few
// lengths it measures faults by (around the scenario's constants).
struct FaultChoices {
  std::vector<std::string> clients, nodes;
  std::vector<std::string> everyone;               // clients, nodes, then the storage
  std::vector<std::string> masters_with_replicas;  // distinct
  std::string storage;
  std::vector<Duration> lengths;
  std::int64_t max_drift_ppm = 0;
};
// One choice: a fault, with what goes with it (a crash's restart, its `after`
// the outage); the search sets when (on = the anchor) on every one.
using FaultChoice = std::vector<FaultSpec>;

template <typename T>
const T& pick(Rng& rng, const std::vector<T>& v) {
  return v[rng.below(v.size())];
}

// A size the shrinker bisects toward zero at millisecond resolution (besides
// `duration`, which it shortens for every kind that has one).
struct Magnitude {
  Duration (*size)(const FaultSpec& f) = nullptr;          // zero or more
  void (*resize)(FaultSpec& f, Duration size) = nullptr;  // to `size` (at least the kind's least), sign kept
  bool rounds = false;  // the shrinker may round it up to a readable unit, as it rounds times
};

// What `locksim live` can do to real processes: one operation per thing a
// fault does (live/live_run.cpp implements them, for servers, locksim's own
// clients and external ones alike). A kind's `live` calls the operation that
// is its fault, so that the live run holds no switch over the kinds.
class LiveFaultTarget {
 public:
  virtual ~LiveFaultTarget() = default;
  virtual void pause(const std::string& target, Duration d) = 0;
  virtual void crash(const std::string& target) = 0;
  virtual void restart(const std::string& target) = 0;
  virtual void clock_jump(const std::string& target, Duration by) = 0;
  virtual void clock_drift(const std::string& target, std::int64_t ppb) = 0;
  virtual void partition(const FaultSpec& f) = 0;  // its groups, both ways or one
  virtual void link(const FaultSpec& f) = 0;       // a delay or a drop on the links it names
  virtual void heal() = 0;                         // every partition ends
  virtual void failover(const std::string& master) = 0;
};

struct FaultKindInfo {
  FaultKind kind;
  std::string_view name;   // kind = "..."
  std::string_view help;   // one line, for `locksim list`
  // The keys beyond kind, at, on and after ("did you mean" prefers the earlier).
  std::span<const std::string_view> keys;
  // The keys of one valid fault of this kind, as TOML, naming processes of
  // the standard topology (client1, client2, redis1, redis2 a replica of
  // redis1, storage, a [sentinel]); the examples, in table order at 1s, 2s,
  // ..., make one valid scenario. The extension test reads it.
  std::string_view example;

  // f.kind, f.line and the time (at, or on and after) are set.
  void (*parse)(const FaultReader& in, FaultSpec& f) = nullptr;
  void (*apply)(FaultContext& ctx, const FaultSpec& f) = nullptr;
  void (*write)(FaultWriter& out, const FaultSpec& f) = nullptr;  // the keys parse reads
  Phrase (*describe)(const FaultSpec& f) = nullptr;  // "client1 pauses for 3s" (W::FaultPause, who, d)
  // Explore: fill in the fault `out.back()` (its kind and time are drawn), in
  // place, and append any fault that goes with it (which moves `out.back()`:
  // read it before). Null: explore never draws this kind on its own.
  void (*draw)(FaultDraw& d, std::vector<FaultSpec>& out) = nullptr;
  // Whether the base scenario can take this kind; null: every scenario can.
  bool (*offered)(const Scenario& base) = nullptr;
  // Explore --exhaustive: every fault of this kind it tries at one anchor
  // (each target, each length). Null: the search never tries it on its own.
  void (*choices)(const FaultChoices& c, std::vector<FaultChoice>& out) = nullptr;
  std::optional<Magnitude> magnitude;
  // A fault of this kind undoes one of that kind on the same target: it must
  // come later, and the shrinker keeps or drops the two together.
  std::optional<FaultKind> undoes;
  // Live: the fault, done to real processes; and why `f` cannot run live in
  // `s` (W::LiveRefused*, with its line), or nothing when it can. Null
  // `live_refusal`: every fault of the kind can.
  void (*live)(LiveFaultTarget& to, const FaultSpec& f) = nullptr;
  std::optional<Phrase> (*live_refusal)(const Scenario& s, const FaultSpec& f) = nullptr;
};

#define LOCKSIM_FAULT_DECLARE(Name) extern const FaultKindInfo k##Name##Fault;
LOCKSIM_FAULT_KINDS(LOCKSIM_FAULT_DECLARE)
#undef LOCKSIM_FAULT_DECLARE

// Questions about the kinds, answered from the table.
std::span<const FaultKindInfo* const> fault_kinds();  // in table order
const FaultKindInfo& fault_kind(FaultKind k);
// The kinds explore draws from `base` when none are named.
std::vector<FaultKind> drawn_kinds(const Scenario& base);
// "pause, crash, ..." or "pause | crash | ...": the names of every kind (only those explore draws).
std::string fault_kind_names(std::string_view separator, bool drawn_only = false);
// `later` undoes `earlier` (a restart of the process a crash took down).
bool undoes(const FaultSpec& later, const FaultSpec& earlier);
// In the order the engine applies timed faults: by time, stable. Triggered faults count as time zero.
void sort_faults(std::vector<FaultSpec>& faults);
// The same, working in `scratch` (whose capacity a caller that sorts run
// after run keeps: explore's drawer).
struct FaultSortScratch {
  std::vector<std::pair<Duration, std::size_t>> order;
  std::vector<FaultSpec> sorted;
};
void sort_faults(std::vector<FaultSpec>& faults, FaultSortScratch& scratch);
// "at 1s client1 pauses for 40s", "on client1 read, 5ms after: client1 pauses
// for 40s": the fault and when it comes, as a Phrase for reports/ to say.
Phrase describe_fault(const FaultSpec& f);

}  // namespace locksim
