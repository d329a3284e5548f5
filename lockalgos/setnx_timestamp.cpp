// The old SETNX-with-timestamp recipe (the SETNX page of the Redis
// documentation, before SET NX PX): the value is the lock's expiry time as
// the client's wall clock sees it; a client that finds an expired timestamp
// deletes the key and tries SETNX again.
//
//   acquire:  SETNX key <now + ttl + 1>            -> 1: ours
//             else GET key; if it is in the past:  DEL key; SETNX key <now + ttl + 1>
//             (retry every retry_delay)
//   release:  DEL key, if our timestamp has not passed yet
//
// Assumes: only one client at a time finds the timestamp expired. Two that
// both do both DEL and both SETNX: the second DEL deletes the first one's
// fresh lock (catalogue R5; the page fixes it with GETSET). It also assumes
// every client's wall clock agrees.
#include "lockalgos/redis_common.hpp"

namespace locksim {
namespace {

class SetNxTimestamp final : public Lock {
 public:
  SetNxTimestamp(ClientEnv& env, const LockTargets& targets, const LockConfig& config, const SingleNodeOptions& options)
      : env_(env), config_(config), node_(single_node(env, targets, options)), retries_(env, options) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = config_;
    for (int attempt = 0;; ++attempt) {
      const ProcId tried = node_.id();  // a failed call may move node_ to a new master
      const Instant start = env_.mono_now();
      std::string expires = timestamp(env_.wall_now() + *c.ttl + Duration::ms(1));
      if (RedisConnection::is_one(co_await node_.setnx(c.key, expires))) co_return grant(expires, start);
      const auto current = co_await node_.get(c.key);
      if (current && current->kind == redis::Reply::Kind::Str && parse(current->str) < env_.wall_now()) {
        // The holder's time is up (it crashed, we assume): take the lock over.
        env_.note(Ev::AttemptFailed, {.detail = "the lock's timestamp has passed; it deletes the key"});
        co_await env_.yield();
        co_await node_.del(c.key);
        expires = timestamp(env_.wall_now() + *c.ttl + Duration::ms(1));
        if (RedisConnection::is_one(co_await node_.setnx(c.key, expires))) co_return grant(expires, start);
      }
      if (retries_.spent(attempt)) co_return std::nullopt;
      co_await retries_.pause(tried);
    }
  }

  Task<bool> release(const Grant& grant) override {
    if (parse(grant.value) < env_.wall_now()) co_return false;  // the page: don't DEL an expired lock
    co_return RedisConnection::is_one(co_await node_.del(config_.key));
  }

 private:
  // Unix-style milliseconds on the client's wall clock.
  static std::string timestamp(Instant wall) { return std::to_string(wall.ns() / 1'000'000); }
  static Instant parse(const std::string& s) {
    try {
      return Instant::from_ns(std::stoll(s) * 1'000'000);
    } catch (const std::exception&) {
      return Instant::zero();
    }
  }
  Grant grant(const std::string& expires, Instant start) const {
    return Grant{expires, -1, start + *config_.ttl, node_.name()};
  }

  ClientEnv& env_;
  const LockConfig& config_;
  RedisConnection node_;
  Retries retries_;
};

}  // namespace

std::unique_ptr<Lock> make_setnx_timestamp(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                           const SingleNodeOptions& options) {
  return std::make_unique<SetNxTimestamp>(env, targets, config, options);
}

}  // namespace locksim
