// GET, then SET if nil: the seeds' Go example. Not atomic, no TTL; released
// with DEL.
//
//   acquire:  if GET key == nil then SET key <value>    (retry every retry_delay)
//   release:  DEL key
//
// Assumes: nobody else runs between our GET and our SET. Two clients that
// both GET nil both SET and both proceed (catalogue R4).
#include "lockalgos/redis_common.hpp"

namespace locksim {
namespace {

class GetSet final : public Lock {
 public:
  GetSet(ClientEnv& env, const LockTargets& targets, const LockConfig& config, const SingleNodeOptions& options)
      : env_(env), config_(config), node_(single_node(env, targets, options)), retries_(env, options) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = config_;
    for (int attempt = 0;; ++attempt) {
      const ProcId tried = node_.id();  // a failed call may move node_ to a new master
      const auto current = co_await node_.get(c.key);
      if (current && current->is_nil()) {
        const LockValue value = LockValue::random(env_.rng(), 16);
        // Anything may happen between the GET and the SET.
        const auto set = co_await node_.set(c.key, value);
        if (set && set->is_ok()) co_return Grant{value.text(), -1, std::nullopt, node_.name()};
      }
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

std::unique_ptr<Lock> make_getset(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                  const SingleNodeOptions& options) {
  return std::make_unique<GetSet>(env, targets, config, options);
}

}  // namespace locksim
