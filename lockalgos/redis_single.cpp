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
// Flavour "redis-py": redis-py 4.3.4's Lock (Debian python3-redis,
// /usr/lib/python3/dist-packages/redis/lock.py), the same recipe as the
// library ships it:
//   :194-195   the token: uuid.uuid1().hex, one per acquire()
//   :206-215   SET name token NX PX timeout; blocking: sleep 0.1 s and again,
//              for ever (blocking_timeout None)
//   :217-225   do_acquire: PX int(timeout * 1000)
//   :233-243   owned(): GET name == our token, a round trip (check = "owned")
//   :245-259   release(): the Lua compare-and-delete; 0 raises LockNotOwnedError
//   nothing keeps a deadline: the Lock never compares the time with anything,
//   so check_before_write has nothing to read, and nothing renews it
//   (extend() and reacquire() are the application's to call)
//   redis.Redis(): socket_timeout None, a command waits as long as it takes
//
// Assumes: the holder finishes within the TTL (no long pauses, no delayed
// messages), the node's wall clock does not jump, the node keeps its keys.
#include "lockalgos/redis_common.hpp"

namespace locksim {
namespace {

constexpr std::string_view kRedisPy = "redis-py";  // the flavour's name in the registry

class RedisSingle final : public Lock {
 public:
  RedisSingle(ClientEnv& env, const LockTargets& targets, const LockConfig& config, const RedisSingleOptions& options)
      : env_(env), config_(config), options_(options), node_(single_node(env, targets, options)), retries_(env, options) {}

  Task<std::optional<Grant>> acquire() override {
    const LockConfig& c = config_;
    const bool fenced = c.fencing == Fencing::Token;
    const bool py = options_.flavour == SingleFlavour::RedisPy;
    for (int attempt = 0;; ++attempt) {
      const LockValue value = LockValue::random(env_.rng(), py ? 16 : 20);
      const Instant start = env_.mono_now();
      std::optional<redis::Reply> reply;
      if (fenced) reply = co_await node_.acquire_with_token(c.key, value, *c.ttl, c.key + ":token");
      else reply = co_await node_.set_nx_px(c.key, value, *c.ttl);
      const bool granted = reply && (fenced ? reply->kind == redis::Reply::Kind::Int : reply->is_ok());
      if (granted) {
        // Validity counts from before the request was sent: the key may have been
        // set at any moment after that.
        if (py) co_return Grant{value.text(), -1, std::nullopt, node_.name()};  // it keeps no deadline
        co_return Grant{value.text(), fenced ? reply->integer : -1, start + *c.ttl, node_.name()};
      }
      if (retries_.spent(attempt)) co_return std::nullopt;
      co_await retries_.pause();
    }
  }

  Task<bool> release(const Grant& grant) override {
    const LockConfig& c = config_;
    if (options_.release == Release::Del) co_return RedisConnection::is_one(co_await node_.del(c.key));
    if (options_.release == Release::GetThenDel) {
      const auto current = co_await node_.get(c.key);
      if (!current || current->kind != redis::Reply::Kind::Str || current->str != grant.value) co_return false;
      env_.note(Ev::OwnerChecked, {.key = grant.value});
      co_await env_.yield();
      // Anything may happen between the GET and the DEL.
      co_return RedisConnection::is_one(co_await node_.del(c.key));
    }
    co_return RedisConnection::is_one(co_await node_.compare_and_delete(c.key, grant.value));
  }

  // redis-py's owned() (lock.py:233-243): GET the key, compare with our token.
  Task<bool> check(LibraryCheck, const Grant& grant) override {
    const auto stored = co_await node_.get(config_.key);
    const bool owned = stored && stored->kind == redis::Reply::Kind::Str && stored->str == grant.value;
    if (owned) env_.note(Ev::Checked, {.detail = "owned(): the key still holds its token"});
    else env_.note(Ev::Lost, {.detail = stored ? "owned() is False: the key holds another token, or none; it abandons the write"
                                               : "owned() raised: no answer from Redis; it abandons the write"});
    co_await env_.yield();
    co_return owned;
  }

 private:
  ClientEnv& env_;
  const LockConfig& config_;
  const RedisSingleOptions& options_;
  RedisConnection node_;
  Retries retries_;
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_redis_single(OptionReader& r, const LockConfig& common) {
  auto o = std::make_shared<RedisSingleOptions>();
  if (common.flavour == kRedisPy) {
    o->flavour = SingleFlavour::RedisPy;
    o->request_timeout = Duration::zero();  // redis.Redis(): socket_timeout None
    if (common.fencing == Fencing::Token)
      r.fail("fencing", "redis-py's Lock issues no fencing token (its token is a random uuid1): use fencing = \"none\"");
  }
  if (auto v = r.choice<Release>("release", {{"compare-and-delete", Release::CompareAndDelete},
                                             {"del", Release::Del},
                                             {"get-then-del", Release::GetThenDel}}))
    o->release = *v;
  read_single_node(r, common, *o);
  if (auto v = r.integer("first_token", 0, INT64_MAX / 2)) o->first_token = *v;
  return o;
}

std::unique_ptr<Lock> make_redis_single(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                        const RedisSingleOptions& options) {
  return std::make_unique<RedisSingle>(env, targets, config, options);
}

}  // namespace locksim
