// The single-instance Redis lock (redis.io, "Distributed locks with Redis",
// "Correct implementation with a single instance").
//
//   acquire:  SET key <random value> NX PX ttl        (retry every retry_delay)
//   release:  if GET(key) == value then DEL(key)       (one Lua script)
//
// With fencing, the acquire script also INCRs a token key and returns the
// token. Broken variants from the catalogue: release = "del" (plain DEL, may
// delete another client's lock) and "get-then-del" (GET, compare, DEL as two
// commands: the key can change hands in between).
//
// Assumes: the holder finishes within the TTL (no long pauses, no delayed
// messages), the node's wall clock does not jump, the node keeps its keys.
#include "lockalgos/redis_common.hpp"

namespace locksim {
namespace {

class RedisSingle final : public Lock {
 public:
  explicit RedisSingle(LockEnv env) : env_(std::move(env)), node_(env_, env_.nodes.front()) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = env_.config;
    const bool fenced = c.fencing == Fencing::Token;
    for (int attempt = 0;; ++attempt) {
      const std::string value = env_.self.rng().hex_token(20);
      const Instant start = env_.self.mono_now();
      std::optional<redis::Reply> reply;
      if (fenced) reply = co_await node_.acquire_with_token(c.key, value, *c.ttl, c.key + ":token");
      else reply = co_await node_.set_nx_px(c.key, value, *c.ttl);
      const bool granted = reply && (fenced ? reply->kind == redis::Reply::Kind::Int : reply->is_ok());
      if (granted) {
        // Validity counts from before the request was sent: the key may have been
        // set at any moment after that.
        co_return Grant{value, fenced ? reply->integer : -1, start + *c.ttl, node_.name()};
      }
      if (retries_.spent(attempt)) co_return std::nullopt;
      co_await retries_.pause();
    }
  }

  Task<bool> release(const Grant& grant) override {
    const LockConfig& c = env_.config;
    if (c.release == "del") co_return RedisConnection::is_one(co_await node_.del(c.key));
    if (c.release == "get-then-del") {
      const auto current = co_await node_.get(c.key);
      if (!current || current->kind != redis::Reply::Kind::Str || current->str != grant.value) co_return false;
      env_.self.note(Ev::OwnerChecked, {.key = grant.value});
      co_await env_.self.yield();
      // Anything may happen between the GET and the DEL.
      co_return RedisConnection::is_one(co_await node_.del(c.key));
    }
    co_return RedisConnection::is_one(co_await node_.compare_and_delete(c.key, grant.value));
  }

 private:
  LockEnv env_;
  RedisConnection node_;
  Retries retries_{env_};
};

}  // namespace

std::unique_ptr<Lock> make_redis_single(LockEnv env) { return std::make_unique<RedisSingle>(std::move(env)); }

}  // namespace locksim
