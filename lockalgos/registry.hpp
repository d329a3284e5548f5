// The catalogue of algorithms: names, one-line help, the [lock] keys each
// accepts, and how to make one. `locksim list` and the scenario loader read it.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"

namespace locksim {

struct OptionInfo {
  std::string_view key;   // as written under [lock]
  std::string_view help;  // one line, with the default
};

struct AlgorithmInfo {
  std::string_view name;
  std::string_view help;                 // one line
  std::string_view source;               // where its behaviour comes from
  std::vector<OptionInfo> options;       // [lock] keys beyond algorithm, flavour, fencing
  std::vector<OptionInfo> flavours;       // name and one line of help; the first is the default
  bool needs_ttl = false;                // `ttl` must be given
  bool takes_ttl = true;                 // `ttl` may be given at all
  bool monotonic_token = false;          // can issue fencing tokens (fencing = "token")
  // Its own options, from the [lock] table (`common`: the part the loader
  // parsed). The reader offers only the keys listed in `options`.
  std::shared_ptr<const AlgorithmOptions> (*parse)(OptionReader& reader, const LockConfig& common) = nullptr;
  // A lock for one client, with `config.options` as `parse` made them: its
  // environment is all it may use.
  std::unique_ptr<Lock> (*make)(ClientEnv& env, const LockTargets& targets, const LockConfig& config) = nullptr;
  ServerKind server = ServerKind::Redis;  // the server model its [[node]]s are (sim/servers/table.hpp)
  // How many of its `nodes` lock nodes (Redis: the masters) must hold a
  // client's entry for the client's acquire to be a grant; nullptr: one.
  std::size_t (*grant_quorum)(std::size_t nodes) = nullptr;
  // How many [[node]]s a starting scenario (`locksim new`) gives it; one for
  // most (ZooKeeper and etcd model their ensemble as one service).
  int starting_nodes = 1;
};

// The algorithm's grant quorum over `nodes` lock nodes (one if it names none).
std::size_t grant_quorum(const AlgorithmInfo& a, std::size_t nodes);

std::span<const AlgorithmInfo> algorithms();
const AlgorithmInfo* find_algorithm(std::string_view name);

}  // namespace locksim
