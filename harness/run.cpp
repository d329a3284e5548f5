#include "harness/run.hpp"

#include <algorithm>

#include "harness/faults.hpp"
#include "harness/sim_client.hpp"
#include "harness/state_fingerprint.hpp"
#include "lockalgos/registry.hpp"
#include "sim/servers/table.hpp"
#include "sim/storage.hpp"

namespace locksim {

bool RunResult::as_expected() const {
  if (!scenario->expect.present) return verdict.empty();
  return verdict == scenario->expect.violations;
}

namespace {
RunResult run_owned(std::shared_ptr<const Scenario> owned, const Scenario& s, const RunOptions& options);

// Explore's liveness phase (liveness.hpp), once the fault phase is judged:
// heal, let a fresh client ask for the lock, and run on.
void liveness_phase(RunResult& result, FaultEngine& faults, LivenessWatch& watch, Duration window,
                    std::uint64_t budget, const std::function<Client&(const ClientConfig&)>& add_client) {
  World& world = *result.world;
  faults.heal_all();
  auto probe = std::make_shared<ClientConfig>();
  probe->name = probe_name(world.trace());
  probe->job = JobKind::Hold;
  probe->hold = DurationRange::fixed(Duration::ms(1));
  probe->start = DurationRange::fixed(world.now() - Instant::zero());
  result.probe = probe;
  watch.healed(world.now(), window);
  add_client(*probe).schedule_start();
  if (!world.run_until(world.now() + window * 2, budget)) result.budget_exhausted = true;
  result.liveness = watch.finish(world.now());
}
}  // namespace

RunResult run_scenario(const Scenario& given, const RunOptions& options) {
  auto owned = std::make_shared<const Scenario>(given);
  const Scenario& s = *owned;
  return run_owned(std::move(owned), s, options);
}

RunResult run_scenario(Scenario&& given, const RunOptions& options) {
  auto owned = std::make_shared<const Scenario>(std::move(given));
  const Scenario& s = *owned;
  return run_owned(std::move(owned), s, options);
}

RunResult run_scenario_borrowed(const Scenario& s, const RunOptions& options) { return run_owned(nullptr, s, options); }

namespace {
// The state hash hook (RunOptions::at_anchor): clients' phases followed from
// the trace, the fingerprint folded only when asked for.
void watch_anchors(World& world, const FaultEngine& faults, const decltype(RunOptions::at_anchor)& at_anchor) {
  auto phases = std::make_shared<StateFingerprint>();
  world.trace().add_listener([&world, &faults, phases, at_anchor](const TraceEvent& e) {
    phases->observe(e);
    if (e.process == kNoProc || !fault_may_wait_for(e.kind) || faults.healed()) return;
    at_anchor(world.trace(), e, [&] { return phases->value(world, faults); });
  });
}

// What the run's trace shows each event to, in one listener (one call through
// a std::function per event, not one per watcher): the judge (the fault
// phase only), the tally, then, once the run is set up, the fault engine's
// triggers and the liveness watch. The world's trace keeps the listener: it
// is shared with the run, or kept by the caller's RunReuse.
struct Watchers {
  // A failed try: a multi-step acquire's (AttemptFailed) or a single node's (Retrying).
  static constexpr EvSet kTallied{Ev::Acquired, Ev::AttemptFailed, Ev::Retrying};  // delivered messages: the world counts them

  Watchers(const Trace& trace, const CheckOptions& check) : judge(trace, check) {}
  Judge judge;
  bool judging = true;  // the fault phase only
  RunStats tally;
  FaultEngine* faults = nullptr;          // set once armed: events before are no fault's trigger
  std::optional<LivenessWatch> liveness;  // explore's liveness phase, when asked for
  // The kinds some watcher reads: the trace shows this listener those only
  // (and a lean world does not build events of other kinds).
  EvSet interest = Judge::kReads | kTallied;
  // Of those, the kinds only the judge reads, and only when they name an owner.
  EvSet owned_only = Judge::kOwnedOnly.without(kTallied);
  std::size_t listener = 0;  // its number in the trace

  // As made anew for another run (the judge keeps its capacity).
  void restart(const Trace& trace, const CheckOptions& check) {
    judge.restart(trace, check);
    judging = true;
    tally = {};
    faults = nullptr;
    liveness.reset();
    interest = Judge::kReads | kTallied;
    owned_only = Judge::kOwnedOnly.without(kTallied);
    listener = 0;
  }
  void arm(Trace& trace, FaultEngine& engine) {
    faults = &engine;
    widen(trace, engine.trigger_kinds());
  }
  void watch_liveness(Trace& trace) {
    liveness.emplace(trace);
    widen(trace, LivenessWatch::kReads);
  }
  // None of the watchers reads clock readings: the judge and the liveness
  // watch go by true time, the fault triggers by kind and process.
  Trace::Interest reads() const { return {interest, owned_only, false}; }
  void widen(Trace& trace, EvSet kinds) {
    interest |= kinds;
    owned_only = owned_only.without(kinds);  // another watcher reads them whole
    trace.widen_listener(listener, reads());
  }

  void operator()(const TraceEvent& e) {
    if (judging && Judge::reads(e.kind)) judge.observe(e);
    switch (e.kind) {
      case Ev::Acquired: ++tally.acquisitions; break;
      case Ev::AttemptFailed: case Ev::Retrying: ++tally.failed_attempts; break;
      default: break;
    }
    if (faults) faults->observe(e);
    if (liveness) liveness->observe(e);
  }
};

// What a run's world is built from that depends on neither its seed nor its
// faults: worked out per run, or once per RunReuse.
struct Prepared {
  const AlgorithmInfo* algorithm = nullptr;
  std::size_t grant_quorum = 0;
  // Clients need the ids of nodes and storage before those exist: ids are
  // assigned in creation order (clients, nodes, storage, sentinels).
  ProcId first_node = 0, storage_id = 0;
  LockTargets targets;  // the masters (replicas take over through the sentinel), the sentinel
  const ServerModel* model = nullptr;
  ServerSetup setup;
  SentinelPlan sentinels;
};

Prepared prepare(const Scenario& s) {
  Prepared p;
  p.algorithm = find_algorithm(s.lock.algorithm);
  if (!p.algorithm) throw ScenarioError(s.path + ": unknown algorithm " + s.lock.algorithm);
  const auto primaries = std::count_if(s.nodes.begin(), s.nodes.end(), [](const NodeConfig& n) { return n.replica_of.empty(); });
  p.grant_quorum = grant_quorum(*p.algorithm, static_cast<std::size_t>(primaries));
  p.first_node = static_cast<ProcId>(s.clients.size());
  for (std::size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].replica_of.empty()) p.targets.nodes.push_back(p.first_node + static_cast<ProcId>(i));
  p.storage_id = static_cast<ProcId>(p.first_node + s.nodes.size());
  p.targets.sentinel = s.sentinel.present ? p.storage_id + 1 : kNoProc;
  // The lock service, through its model in the server table (sim/servers/table.hpp).
  p.model = &server_model(p.algorithm->server);
  p.setup = s.lock.options->server();
  if (s.lock.fencing == Fencing::Token) p.setup.token_key = s.lock.key + ":token";
  if (s.sentinel.present) {
    for (int i = 0; i < s.sentinel.sentinels; ++i) p.sentinels.names.push_back(s.sentinel.process_name(i));
    p.sentinels.clock = s.sentinel.clock;
    p.sentinels.settings.down_after = s.sentinel.down_after;
    p.sentinels.settings.ping_period = s.sentinel.ping_period;
    p.sentinels.settings.failover_timeout = s.sentinel.failover_timeout;
    p.sentinels.settings.quorum = s.sentinel.quorum_or_default();
  }
  return p;
}

}  // namespace

struct RunReuse::Impl {
  std::optional<Prepared> prepared;  // at the first run
  std::optional<Watchers> watchers;  // the last run's, restarted for the next
  std::vector<Client*> clients;
};

RunReuse::RunReuse() : impl_(std::make_unique<Impl>()) {}
RunReuse::~RunReuse() = default;

namespace {

// The run's watchers, listening to `trace`: the reuse's, restarted, or the
// run's own, shared with the trace's listener.
Watchers& add_watchers(Trace& trace, const CheckOptions& check, RunReuse* reuse) {
  Watchers* w = nullptr;
  if (reuse) {
    std::optional<Watchers>& kept = reuse->impl().watchers;
    if (kept) kept->restart(trace, check);
    else kept.emplace(trace, check);
    w = &*kept;
    w->listener = trace.add_listener([w](const TraceEvent& e) { (*w)(e); }, w->reads());
  } else {
    auto owned = std::make_shared<Watchers>(trace, check);
    w = owned.get();
    w->listener = trace.add_listener([owned](const TraceEvent& e) { (*owned)(e); }, w->reads());
  }
  return *w;
}

// The world's processes, in the order of their ids: the clients (returned),
// the lock service, the storage, the service's companions.
void build_world(World& world, const Scenario& s, const Prepared& p, std::vector<Client*>& clients) {
  clients.clear();
  for (const ClientConfig& c : s.clients)
    clients.push_back(&world.add<Client>(c, *p.algorithm, s.lock, p.targets, p.storage_id, s.storage.fenced_reads));
  ServiceBuild service{.world = world, .nodes = s.nodes, .first_id = p.first_node, .setup = p.setup,
                       .sentinels = p.sentinels};
  build_service(*p.model, service);
  world.add<Storage>(s.storage.name, s.storage.clock, s.storage.initial, s.lock.fencing, s.storage.fenced_reads);
  // The sentinels follow the storage, the first at targets.sentinel.
  add_companions(*p.model, service);
}

// `owned`: the result keeps `s` alive (null: the caller does).
RunResult run_owned(std::shared_ptr<const Scenario> owned, const Scenario& s, const RunOptions& options) {
  RunResult result;
  result.owned_scenario = std::move(owned);
  result.scenario = &s;
  result.seed = options.seed.value_or(s.seed);
  result.world = std::make_unique<World>(result.seed);
  World& world = *result.world;
  world.network().configure(s.network);

  // Judged as it runs: the trace need not keep its events for the verdict.
  Trace& trace = world.trace();
  trace.set_keep_limit(options.keep_events);
  if (options.details) trace.want_details();
  if (options.listener) trace.add_listener([&trace, l = options.listener](const TraceEvent& e) { l(trace, e); });
  CheckOptions check;
  check.ttl = s.lock.ttl;
  check.liveness_window = s.expect.liveness_window;
  // Superseded timers leave nothing stale in the queue, except where the
  // exhaustive search folds the queue into its states (at_anchor). Without a
  // hash the world is lean (World::set_lean): events nobody reads are not
  // built (the watchers' kinds are the trace's only readers).
  if (!options.at_anchor) world.set_compact_timers(true);
  if (!options.hash && !options.at_anchor) world.set_lean(true);
  Watchers& watchers = add_watchers(trace, check, options.reuse);

  std::optional<Prepared> own;
  if (options.reuse && !options.reuse->impl().prepared) options.reuse->impl().prepared = prepare(s);
  const Prepared& p = options.reuse ? *options.reuse->impl().prepared : own.emplace(prepare(s));
  trace.set_grant_quorum(p.grant_quorum);
  // Lanes in the order a reader expects: clients, then the lock service, then storage.
  std::vector<Client*> own_clients;
  std::vector<Client*>& clients = options.reuse ? options.reuse->impl().clients : own_clients;
  build_world(world, s, p, clients);

  FaultEngine faults(world, s);
  faults.arm();
  watchers.arm(trace, faults);
  // The engine goes with this call, the trace lives on in the result: however
  // the call ends (a run that throws too), the listener stops showing it events.
  struct Disarm {
    Watchers& w;
    ~Disarm() { w.faults = nullptr; }
  } disarm{watchers};
  if (options.at_anchor) watch_anchors(world, faults, options.at_anchor);
  for (Client* c : clients) c->schedule_start();
  if (options.liveness) watchers.watch_liveness(trace);

  const Instant end = Instant::zero() + s.duration;
  result.budget_exhausted = !world.run_until(end, options.max_events);
  result.faults = faults.fates();  // before the liveness phase, which applies nothing

  watchers.judging = false;
  result.violations = watchers.judge.finish(world.now());
  result.harm = watchers.judge.harm();
  for (const Violation& v : result.violations) result.verdict.insert(v.kind);
  if (watchers.liveness && !result.budget_exhausted)
    liveness_phase(result, faults, *watchers.liveness, *options.liveness, options.max_events - world.events_run(),
                   [&](const ClientConfig& c) -> Client& {
                     return world.add<Client>(c, *p.algorithm, s.lock, p.targets, p.storage_id, s.storage.fenced_reads);
                   });

  result.stats = watchers.tally;
  result.stats.delivered = world.messages_delivered();
  result.stats.events = trace.size();
  result.stats.queue_events = world.events_run();
  result.stats.messages = world.network().messages_sent();
  result.stats.sim_time = world.now();
  result.trace_hash = world.trace().hash_hex();  // empty in a lean world
  return result;
}

}  // namespace

}  // namespace locksim
