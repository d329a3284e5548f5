// The ZooKeeper server model: the ensemble as one ZooKeeperServer per node.
#include "sim/servers/table.hpp"
#include "sim/servers/zookeeper/server.hpp"

namespace locksim {

namespace {

Process& build(ServiceBuild& b, std::size_t i) {
  const NodeConfig& n = b.nodes[i];
  return b.world.add<ZooKeeperServer>(n.name, n.clock, b.setup.tick_time, b.setup.first_token);
}

}  // namespace

const ServerModel kZooKeeperServer{.kind = ServerKind::ZooKeeper, .name = "zookeeper", .node_prefix = "zk", .build = build};

}  // namespace locksim
