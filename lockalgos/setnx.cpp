// SETNX with no TTL, released with DEL: the naive pattern the SETNX page of
// the Redis documentation warns about.
//
//   acquire:  SETNX key <random value>    (retry every retry_delay)
//   release:  DEL key
//
// Assumes: the holder never crashes. If it does, its key stays forever and
// nobody gets the lock again (catalogue R1).
#include "lockalgos/redis_common.hpp"

namespace locksim {
namespace {

class SetNx final : public Lock {
 public:
  SetNx(ClientEnv& env, const LockTargets& targets, const LockConfig& config)
      : env_(env), config_(config), node_(single_node(env, targets, config)), retries_(env, config) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = config_;
    for (int attempt = 0;; ++attempt) {
      const std::string value = env_.rng().hex_token(20);
      if (RedisConnection::is_one(co_await node_.setnx(c.key, value)))
        co_return Grant{value, -1, std::nullopt, node_.name()};
      if (retries_.spent(attempt)) co_return std::nullopt;
      co_await retries_.pause();
    }
  }

  Task<bool> release(const Grant&) override {
    co_return RedisConnection::is_one(co_await node_.del(config_.key));
  }

 private:
  ClientEnv& env_;
  const LockConfig& config_;
  RedisConnection node_;
  Retries retries_;
};

}  // namespace

std::unique_ptr<Lock> make_setnx(ClientEnv& env, const LockTargets& targets, const LockConfig& config) {
  return std::make_unique<SetNx>(env, targets, config);
}

}  // namespace locksim
