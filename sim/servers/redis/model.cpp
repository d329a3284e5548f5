// The Redis server model: a RedisNode per node, masters and their replicas,
// the fencing counter's starting value, and the sentinels watching every
// master that has a replica.
#include "sim/servers/redis/node.hpp"
#include "sim/servers/redis/sentinel.hpp"
#include "sim/servers/table.hpp"

namespace locksim {

namespace {

// The master at the top of nodes[i]'s replication chain.
std::size_t group_of(const ServiceBuild& b, std::size_t i) {
  while (!b.nodes[i].replica_of.empty()) i = b.index_of(b.nodes[i].replica_of);
  return i;
}

Process& build(ServiceBuild& b, std::size_t i) {
  const NodeConfig& n = b.nodes[i];
  RedisConfig rc;
  rc.aof_always = n.persistence == Persistence::AofAlways;
  rc.aof_everysec = n.persistence == Persistence::AofEverysec;
  rc.replica_priority = n.replica_priority;
  rc.replication_lag = n.replication_lag;
  // A master and its replicas run one Redis version: a replica's
  // expiry_propagation = "px" (6.x) holds for whichever of them is master.
  for (std::size_t j = 0; j < b.nodes.size(); ++j)
    if (group_of(b, j) == group_of(b, i) && !b.nodes[j].expiry_as_pxat) rc.expiry_as_pxat = false;
  return b.world.add<RedisNode>(n.name, n.clock, rc);
}

RedisNode& node(ServiceBuild& b, std::size_t i) { return static_cast<RedisNode&>(*b.built[i]); }

void wire(ServiceBuild& b) {
  for (std::size_t i = 0; i < b.nodes.size(); ++i) {
    const NodeConfig& n = b.nodes[i];
    if (n.replica_of.empty()) continue;
    RedisNode& master = node(b, b.index_of(n.replica_of));
    master.add_replica(node(b, i).id(), n.replication_lag, master.config().expiry_as_pxat);
    node(b, i).replicate_from(master.id());
  }
  // The fencing counter's history (first_token), as an operator's earlier use left it.
  if (!b.setup.token_key.empty() && b.setup.first_token != 1)
    for (std::size_t i = 0; i < b.nodes.size(); ++i)
      if (!node(b, i).is_replica())
        node(b, i).execute({.op = redis::Op::Set, .key = b.setup.token_key,
                            .value = std::to_string(b.setup.first_token - 1)}, kNoProc);
}

// The sentinels, each watching every master that has a replica.
void companions(ServiceBuild& b) {
  if (b.sentinels.names.empty()) return;
  std::vector<Sentinel*> sentinels;
  std::vector<ProcId> sentinel_ids;
  for (const std::string& name : b.sentinels.names) {
    sentinels.push_back(&b.world.add<Sentinel>(name, b.sentinels.clock, b.sentinels.settings));
    sentinel_ids.push_back(sentinels.back()->id());
  }
  for (std::size_t m = 0; m < b.nodes.size(); ++m) {
    if (!b.nodes[m].replica_of.empty()) continue;
    Sentinel::Group g{b.nodes[m].name, b.built[m]->id(), {}};
    for (std::size_t i = 0; i < b.nodes.size(); ++i)
      if (b.nodes[i].replica_of == g.name) g.replicas.push_back(b.built[i]->id());
    if (g.replicas.empty()) continue;
    for (Sentinel* sentinel : sentinels) sentinel->monitor(g, sentinel_ids);
  }
}

}  // namespace

const ServerModel kRedisServer{.kind = ServerKind::Redis, .name = "redis", .node_prefix = "redis", .replicates = true,
                               .build = build, .wire = wire, .companions = companions};

}  // namespace locksim
