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
  SetNx(ClientEnv& env, const LockTargets& targets, const LockConfig& config, const SingleNodeOptions& options)
      : env_(env), config_(config), node_(single_node(env, targets, options)), retries_(env, options) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = config_;
    for (int attempt = 0;; ++attempt) {
      const ProcId tried = node_.id();  // a failed call may move node_ to a new master
      const LockValue value = LockValue::random(env_.rng(), 20);
      if (RedisConnection::is_one(co_await node_.setnx(c.key, value)))
        co_return Grant{value.text(), -1, std::nullopt, node_.name()};
      if (retries_.spent(attempt)) co_return std::nullopt;
      co_await retries_.pause(tried);
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

std::shared_ptr<const AlgorithmOptions> parse_single_node(OptionReader& r, const LockConfig& common) {
  auto o = std::make_shared<SingleNodeOptions>();
  read_single_node(r, common, *o);
  return o;
}

std::unique_ptr<Lock> make_setnx(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                 const SingleNodeOptions& options) {
  return std::make_unique<SetNx>(env, targets, config, options);
}

}  // namespace locksim
