// etcd's concurrency.Mutex (etcd.cpp), and its options.
#pragma once

#include <memory>
#include <optional>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"

namespace locksim {

// 3.4 (v3.4.3 .. v3.4.30) does not re-check its key after waiting (#11456); 3.5 does.
enum class EtcdVersion : std::uint8_t { V3_4, V3_5 };

// Whose lock: Go's concurrency.Mutex (etcdctl lock) | python-etcd3 0.12.0's Lock | etcd3 1.1.2's Lock for Node.
enum class EtcdFlavour : std::uint8_t { Mutex, PythonEtcd3, Etcd3Node };

struct EtcdOptions : AlgorithmOptions {
  EtcdFlavour flavour = EtcdFlavour::Mutex;
  Duration retry_delay = Duration::ms(100);      // python-etcd3, etcd3-node: the application's next try
  std::optional<Duration> refresh_interval;      // python-etcd3: the application's refresh thread
  Duration lease_ttl = Duration::s(10);     // the session lease, etcdctl lock's
  EtcdVersion version = EtcdVersion::V3_5;
  Duration request_timeout = Duration::s(5);
  std::int64_t first_token = 1;             // the revision the store starts from
  Duration election_timeout = Duration::s(1);  // the cluster's: sets the minimum TTL and Promote's extension
  Duration lease() const override { return lease_ttl; }
  ServerSetup server() const override { return {.first_token = first_token, .election_timeout = election_timeout}; }
};

std::shared_ptr<const AlgorithmOptions> parse_etcd(OptionReader& r, const LockConfig& common);
std::unique_ptr<Lock> make_etcd(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                const EtcdOptions& options);

}  // namespace locksim
