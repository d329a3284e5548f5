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
  explicit SetNx(LockEnv env) : env_(std::move(env)), node_(env_, env_.nodes.front()) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = env_.config;
    for (int attempt = 0;; ++attempt) {
      const std::string value = env_.self.rng().hex_token(20);
      if (RedisConnection::is_one(co_await node_.setnx(c.key, value)))
        co_return Grant{value, -1, std::nullopt, node_.name()};
      if (retries_.spent(attempt)) co_return std::nullopt;
      co_await retries_.pause();
    }
  }

  Task<bool> release(const Grant&) override {
    co_return RedisConnection::is_one(co_await node_.del(env_.config.key));
  }

 private:
  LockEnv env_;
  RedisConnection node_;
  Retries retries_{env_};
};

}  // namespace

std::unique_ptr<Lock> make_setnx(LockEnv env) { return std::make_unique<SetNx>(std::move(env)); }

}  // namespace locksim
