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
  explicit SetNxTimestamp(LockEnv env) : env_(std::move(env)), node_(env_, env_.nodes.front()) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = env_.config;
    for (int attempt = 0;; ++attempt) {
      const Instant start = env_.self.mono_now();
      std::string expires = timestamp(env_.self.wall_now() + *c.ttl + Duration::ms(1));
      if (RedisConnection::is_one(co_await node_.setnx(c.key, expires))) co_return grant(expires, start);
      const auto current = co_await node_.get(c.key);
      if (current && current->kind == redis::Reply::Kind::Str && parse(current->str) < env_.self.wall_now()) {
        // The holder's time is up (it crashed, we assume): take the lock over.
        env_.self.note(Ev::AttemptFailed, {.detail = "the lock's timestamp has passed; it deletes the key"});
        co_await env_.self.yield();
        co_await node_.del(c.key);
        expires = timestamp(env_.self.wall_now() + *c.ttl + Duration::ms(1));
        if (RedisConnection::is_one(co_await node_.setnx(c.key, expires))) co_return grant(expires, start);
      }
      if (retries_.spent(attempt)) co_return std::nullopt;
      co_await retries_.pause();
    }
  }

  Task<bool> release(const Grant& grant) override {
    if (parse(grant.value) < env_.self.wall_now()) co_return false;  // the page: don't DEL an expired lock
    co_return RedisConnection::is_one(co_await node_.del(env_.config.key));
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
    return Grant{expires, -1, start + *env_.config.ttl, node_.name()};
  }

  LockEnv env_;
  RedisConnection node_;
  Retries retries_{env_};
};

}  // namespace

std::unique_ptr<Lock> make_setnx_timestamp(LockEnv env) { return std::make_unique<SetNxTimestamp>(std::move(env)); }

}  // namespace locksim
