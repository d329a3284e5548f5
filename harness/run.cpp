#include "harness/run.hpp"

#include "harness/client.hpp"
#include "harness/faults.hpp"
#include "lockalgos/registry.hpp"
#include "sim/redis.hpp"
#include "sim/storage.hpp"

namespace locksim {

bool RunResult::as_expected() const {
  if (!scenario->expect.present) return verdict.empty();
  return verdict == scenario->expect.violations;
}

RunResult run_scenario(const Scenario& s, const RunOptions& options) {
  RunResult result;
  result.scenario = &s;
  result.seed = options.seed.value_or(s.seed);
  result.world = std::make_unique<World>(result.seed);
  World& world = *result.world;
  world.network().configure(s.network);

  const AlgorithmInfo* algorithm = find_algorithm(s.lock.algorithm);
  if (!algorithm) throw ScenarioError(s.path + ": unknown algorithm " + s.lock.algorithm);

  // Lanes in the order a reader expects: clients, then the lock service, then storage.
  std::vector<Client*> clients;
  // Clients need the ids of nodes and storage before those exist: ids are
  // assigned in creation order, so compute them.
  const auto first_node = static_cast<ProcId>(s.clients.size());
  std::vector<ProcId> node_ids;
  for (std::size_t i = 0; i < s.nodes.size(); ++i) node_ids.push_back(first_node + static_cast<ProcId>(i));
  const auto storage_id = static_cast<ProcId>(first_node + s.nodes.size());

  for (const ClientConfig& c : s.clients)
    clients.push_back(&world.add<Client>(c, *algorithm, s.lock, node_ids, storage_id));
  for (const NodeConfig& n : s.nodes) {
    if (algorithm->make_node) {
      algorithm->make_node(world, n, s.lock);
      continue;
    }
    RedisConfig rc;
    rc.aof_always = n.persistence == Persistence::AofAlways;
    auto& node = world.add<RedisNode>(n.name, n.clock, rc);
    if (s.lock.fencing == Fencing::Token && s.lock.first_token != 1)
      node.execute({.op = redis::Op::Set, .key = s.lock.key + ":token",
                    .value = std::to_string(s.lock.first_token - 1)}, kNoProc);
  }
  world.add<Storage>(s.storage.name, s.storage.clock, s.storage.initial,
                     s.lock.fencing == Fencing::Token ? StorageFencing::Token : StorageFencing::None);

  FaultEngine faults(world, s);
  faults.arm();
  for (Client* c : clients) c->schedule_start();

  const Instant end = Instant::zero() + s.duration;
  result.budget_exhausted = !world.run_until(end, options.max_events);

  CheckOptions check;
  check.run_end = world.now();
  check.ttl = s.lock.ttl;
  check.liveness_window = s.expect.liveness_window;
  result.violations = check_trace(world.trace(), check);
  for (const Violation& v : result.violations) result.verdict.insert(v.kind);

  result.stats.events = world.trace().size();
  result.stats.messages = world.network().messages_sent();
  for (const TraceEvent& e : world.trace().events())
    if (e.kind == Ev::Acquired) ++result.stats.acquisitions;
  result.stats.sim_time = world.now();
  result.trace_hash = world.trace().hash_hex();
  return result;
}

}  // namespace locksim
