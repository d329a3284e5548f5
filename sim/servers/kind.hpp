// The server models' names and how the lock service starts: the vocabulary
// an algorithm needs to say which model it talks to (lockalgos/registry.cpp
// AlgorithmInfo::server) without seeing the simulator. The models themselves
// are in table.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "sim/time.hpp"

// X(Name): ServerKind::Name, described by kNameServer.
#define LOCKSIM_SERVER_MODELS(X) \
  X(Redis)                       \
  X(ZooKeeper)                   \
  X(Etcd)                        \
  X(Chubby)                      \
  X(Consul)                      \
  /* a new model: one line above this one */

namespace locksim {

enum class ServerKind : std::uint8_t {
#define LOCKSIM_SERVER_ENUMERATOR(Name) Name,
  LOCKSIM_SERVER_MODELS(LOCKSIM_SERVER_ENUMERATOR)
#undef LOCKSIM_SERVER_ENUMERATOR
};

// How the lock service's servers start, as the algorithm's options say.
struct ServerSetup {
  std::int64_t first_token = 1;         // the first fencing token (zxid, revision, index) the service issues
  Duration tick_time = Duration::s(2);  // ZooKeeper's tick
  Duration election_timeout = Duration::s(1);  // etcd's --election-timeout (v3.6.14 server/embed/config.go:672)
  int session_ttl_multiplier = 2;  // Consul's SessionTTLMultiplier (agent/structs/structs.go): TTL sessions end after TTL x it
  // A counter the lock keeps on the service for fencing tokens ("": none),
  // seeded so that its first INCR gives first_token.
  std::string token_key;
};

}  // namespace locksim
