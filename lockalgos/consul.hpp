// Consul's lock (consul.cpp): the Go client's api.Lock over a session and a
// KV key, and its options.
#pragma once

#include <memory>

#include "lockalgos/lock.hpp"
#include "lockalgos/options.hpp"

namespace locksim {

// What a key does when its session is invalidated (the session's Behavior).
enum class ConsulBehavior : std::uint8_t { Release, Delete };
// Which of the key's indexes the client hands the storage as its fencing token.
enum class ConsulToken : std::uint8_t { LockIndex, ModifyIndex };
// Who creates the session: the Go client's api.Lock, which cannot send a
// zero LockDelay, or a direct HTTP call, which sends it as given.
enum class ConsulClient : std::uint8_t { ApiLock, Http };

// The agent's LockDelay when the create's body has none
// (agent/session_endpoint.go:32-40 @079ae3376abc).
inline constexpr Duration kAgentDefaultLockDelay = Duration::s(15);
// agent/structs/structs.go MaxLockDelay: the leader applies no longer lock-delay.
inline constexpr Duration kConsulMaxLockDelay = Duration::s(60);

struct ConsulOptions : AlgorithmOptions {
  Duration session_ttl = Duration::s(15);     // api/lock.go:19 DefaultLockSessionTTL "15s"
  Duration lock_delay = Duration::s(15);      // api/lock.go:85 "defaults to 15s"; agent/session_endpoint.go:32-40
  Duration lock_wait_time = Duration::s(15);  // api/lock.go:24 DefaultLockWaitTime
  ConsulBehavior behavior = ConsulBehavior::Release;  // session_endpoint.go: Behavior release by default
  bool serf_check = true;                     // session_endpoint.go: Checks default to [serfHealth]
  ConsulToken token = ConsulToken::LockIndex;
  int ttl_multiplier = 2;                     // structs.go SessionTTLMultiplier
  std::int64_t first_token = 1;               // the Raft index the cluster starts from
  ConsulClient client = ConsulClient::ApiLock;  // the flavour
  Duration lease() const override { return session_ttl; }
  // The session's lock-delay: api.Lock's createSession puts LockDelay in a
  // SessionEntry (api/lock.go:353-369 @32759fd6dd1d), and Session.Create
  // leaves a zero one out of the body (api/session.go:83-85 @deb43fea6b7c),
  // so the agent's default applies; a direct HTTP call sends 0 as 0.
  Duration session_lock_delay() const {
    return client == ConsulClient::ApiLock && lock_delay == Duration::zero() ? kAgentDefaultLockDelay : lock_delay;
  }
  // The leader invalidates a silent session only after TTL x multiplier
  // (agent/consul/session_ttl.go:86-95 @6eb104f9ab9f, reset by each renew),
  // and the key is then kept from others for the lock-delay
  // (agent/consul/kvs_endpoint.go:75-92 @06d59c03b93e; at most MaxLockDelay,
  // as the leader caps it). tests/consul_test.cpp "handover()" pins it.
  Duration handover() const override { return session_ttl * ttl_multiplier + min(session_lock_delay(), kConsulMaxLockDelay); }
  ServerSetup server() const override { return {.first_token = first_token, .session_ttl_multiplier = ttl_multiplier}; }
};

std::shared_ptr<const AlgorithmOptions> parse_consul(OptionReader& r, const LockConfig& common);
std::unique_ptr<Lock> make_consul(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                  const ConsulOptions& options);

}  // namespace locksim
