// The etcd server model: the cluster as one EtcdServer per node.
#include "sim/servers/etcd/server.hpp"
#include "sim/servers/table.hpp"

namespace locksim {

namespace {

Process& build(ServiceBuild& b, std::size_t i) {
  const NodeConfig& n = b.nodes[i];
  return b.world.add<EtcdServer>(n.name, n.clock, b.setup.first_token, b.setup.election_timeout);
}

}  // namespace

const ServerModel kEtcdServer{.kind = ServerKind::Etcd, .name = "etcd", .node_prefix = "etcd", .build = build};

}  // namespace locksim
