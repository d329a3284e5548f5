// The server models: the table. Each model is one folder here, whose
// model.cpp defines its ServerModel (redis/model.cpp: kRedisServer), and one
// X(...) line in kind.hpp; what several models share sits beside the table
// (coordination_server.hpp: ZooKeeper, etcd, Chubby and Consul). The harness
// builds every lock service through it (harness/run.cpp), the loader asks it
// what a model's nodes accept, and an algorithm names the model it talks to
// (lockalgos/registry.cpp AlgorithmInfo::server).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/node_config.hpp"
#include "sim/servers/kind.hpp"
#include "sim/servers/redis/sentinel.hpp"
#include "sim/world.hpp"

namespace locksim {

// [sentinel], for a model that replicates: the processes to add after the storage.
struct SentinelPlan {
  std::vector<std::string> names;  // empty: no sentinels
  ClockSpec clock;
  SentinelSettings settings;
};

// One lock service being built: the scenario's [[node]]s (their processes
// get consecutive ids from `first_id`, in order) and what was built so far.
struct ServiceBuild {
  World& world;
  std::span<const NodeConfig> nodes;
  ProcId first_id = 0;
  ServerSetup setup;
  SentinelPlan sentinels;
  std::vector<Process*> built;  // one per node once every node is built

  // The index in `nodes` of the node named `name` (the loader checked it exists).
  std::size_t index_of(const std::string& name) const;
};

struct ServerModel {
  ServerKind kind;
  std::string_view name;         // "redis", "zookeeper", ...
  std::string_view node_prefix;  // what `locksim new` names its nodes ("zk", "zk1", ...)
  bool replicates = false;       // its nodes accept replica_of, and a [sentinel] may watch them
  // The process for nodes[i], added to the world now.
  Process& (*build)(ServiceBuild& b, std::size_t i) = nullptr;
  // After every node is built, before the storage: links between the nodes
  // (replication), state the service starts with (a token counter).
  void (*wire)(ServiceBuild& b) = nullptr;
  // After the storage: processes of the service's own (sentinels).
  void (*companions)(ServiceBuild& b) = nullptr;
};

#define LOCKSIM_SERVER_DECLARE(Name) extern const ServerModel k##Name##Server;
LOCKSIM_SERVER_MODELS(LOCKSIM_SERVER_DECLARE)
#undef LOCKSIM_SERVER_DECLARE

std::span<const ServerModel* const> server_models();
const ServerModel& server_model(ServerKind k);

// Build the service: every node, then wire. The caller adds the storage and
// then calls add_companions.
void build_service(const ServerModel& model, ServiceBuild& b);
void add_companions(const ServerModel& model, ServiceBuild& b);

}  // namespace locksim
