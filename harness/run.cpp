#include "harness/run.hpp"

#include "harness/client.hpp"
#include "harness/faults.hpp"
#include "lockalgos/registry.hpp"
#include "sim/servers/table.hpp"
#include "sim/storage.hpp"

namespace locksim {

bool RunResult::as_expected() const {
  if (!scenario->expect.present) return verdict.empty();
  return verdict == scenario->expect.violations;
}

namespace {
RunResult run_owned(std::shared_ptr<const Scenario> owned, const RunOptions& options);
}  // namespace

RunResult run_scenario(const Scenario& given, const RunOptions& options) {
  return run_owned(std::make_shared<const Scenario>(given), options);
}

RunResult run_scenario(Scenario&& given, const RunOptions& options) {
  return run_owned(std::make_shared<const Scenario>(std::move(given)), options);
}

namespace {
RunResult run_owned(std::shared_ptr<const Scenario> owned, const RunOptions& options) {
  RunResult result;
  result.owned_scenario = std::move(owned);
  const Scenario& s = *result.owned_scenario;
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
  auto judge = std::make_shared<Judge>(trace, check);
  auto tally = std::make_shared<RunStats>();
  trace.add_listener([judge, tally](const TraceEvent& e) {
    judge->observe(e);
    switch (e.kind) {
      case Ev::Delivered: ++tally->delivered; break;
      case Ev::Acquired: ++tally->acquisitions; break;
      case Ev::AttemptFailed: ++tally->failed_attempts; break;
      default: break;
    }
  });

  const AlgorithmInfo* algorithm = find_algorithm(s.lock.algorithm);
  if (!algorithm) throw ScenarioError(s.path + ": unknown algorithm " + s.lock.algorithm);

  // Lanes in the order a reader expects: clients, then the lock service, then storage.
  std::vector<Client*> clients;
  // Clients need the ids of nodes and storage before those exist: ids are
  // assigned in creation order, so compute them.
  const auto first_node = static_cast<ProcId>(s.clients.size());
  auto node_id = [&](const std::string& name) {
    for (std::size_t i = 0; i < s.nodes.size(); ++i)
      if (s.nodes[i].name == name) return first_node + static_cast<ProcId>(i);
    throw ScenarioError(s.path + ": no node named " + name);  // the loader checked
  };
  std::vector<ProcId> masters;  // what clients address; replicas take over through the sentinel
  for (const NodeConfig& n : s.nodes)
    if (n.replica_of.empty()) masters.push_back(node_id(n.name));
  const auto storage_id = static_cast<ProcId>(first_node + s.nodes.size());
  const ProcId sentinel_id = s.sentinel.present ? storage_id + 1 : kNoProc;

  for (const ClientConfig& c : s.clients)
    clients.push_back(&world.add<Client>(c, *algorithm, s.lock, LockTargets{masters, sentinel_id}, storage_id));
  // The lock service, through its model in the server table (sim/servers/table.hpp).
  const ServerModel& model = server_model(algorithm->server);
  ServiceBuild service{.world = world, .nodes = s.nodes, .first_id = first_node, .setup = s.lock.options->server()};
  if (s.lock.fencing == Fencing::Token) service.setup.token_key = s.lock.key + ":token";
  if (s.sentinel.present) {
    for (int i = 0; i < s.sentinel.sentinels; ++i) service.sentinels.names.push_back(s.sentinel.process_name(i));
    service.sentinels.clock = s.sentinel.clock;
    service.sentinels.settings.down_after = s.sentinel.down_after;
    service.sentinels.settings.ping_period = s.sentinel.ping_period;
    service.sentinels.settings.failover_timeout = s.sentinel.failover_timeout;
    service.sentinels.settings.quorum = s.sentinel.quorum_or_default();
  }
  build_service(model, service);
  world.add<Storage>(s.storage.name, s.storage.clock, s.storage.initial,
                     s.lock.fencing == Fencing::Token       ? StorageFencing::Token
                     : s.lock.fencing == Fencing::LockValue ? StorageFencing::LockValue
                                                            : StorageFencing::None);
  // The sentinels follow the storage, the first at sentinel_id.
  add_companions(model, service);

  FaultEngine faults(world, s);
  faults.arm();
  for (Client* c : clients) c->schedule_start();

  const Instant end = Instant::zero() + s.duration;
  result.budget_exhausted = !world.run_until(end, options.max_events);

  result.violations = judge->finish(world.now());
  for (const Violation& v : result.violations) result.verdict.insert(v.kind);

  result.stats = *tally;
  result.stats.events = trace.size();
  result.stats.queue_events = world.events_run();
  result.stats.messages = world.network().messages_sent();
  result.stats.sim_time = world.now();
  result.trace_hash = world.trace().hash_hex();
  return result;
}

}  // namespace

}  // namespace locksim
