// Redisson's RLock (RedissonLock.java, RedissonBaseLock.java at
// redisson-4.7.0) with its lock watchdog and its replication guard
// (docs/algorithms-redis.md §6).
//
//   acquire:  tryLock script: if the key is absent or ours, set it with the
//             lease and return nil; else return its PTTL. Not ours: SUBSCRIBE
//             to the lock's channel and wait min(PTTL, what is left of
//             wait_time) or until an unlock message arrives; try again.
//   lease:    lease_time if given; else watchdog_timeout (30 s), and a
//             watchdog inside the client renews it every third of that
//             (PEXPIRE if the field is still ours; if not, the renewal is
//             silently dropped and the watchdog stops).
//   release:  unlock script: not ours -> nil (IllegalMonitorStateException);
//             ours -> one hold less; the last -> DEL and PUBLISH to the channel.
//   guard:    on a replicated master every write is followed, in the same
//             batch, by WAIT <replicas> 1000; a lock no replica acknowledged
//             is unlocked and retried, then fails (replication_guard).
//
// RFencedLock (2022) is the same lock whose acquire script also INCRs a token
// key on the same master and returns the token: monotonic only as long as
// that one asynchronously replicated master does not fail over.
//
// Assumes: the watchdog keeps running while the lock is held. A stop-the-world
// pause stops it too (it is a timer thread of the same process), and the key
// expires 20-30 s after the last renewal while the holder sleeps.
#include <memory>
#include <optional>

#include "lockalgos/redisson.hpp"

#include "lockalgos/redis_common.hpp"
#include "lockalgos/wakeup.hpp"

namespace locksim {
namespace {

class RedissonLock final : public Lock {
 public:
  RedissonLock(ClientEnv& env, const LockTargets& targets, const LockConfig& config, const RedissonOptions& options,
               bool fenced)
      : env_(env),
        key_(config.key),
        options_(options),
        fenced_(fenced),
        sentinel_(targets.sentinel),
        node_(env, targets.nodes.front(), targets.sentinel, options.request_timeout),
        unlocked_(env) {}

  Task<std::optional<Grant>> acquire() override { return try_lock(options_.wait_time, options_.lease_time); }

  // tryLock(waitTime, leaseTime): nullopt waits forever (lock()); no lease: the watchdog's.
  Task<std::optional<Grant>> try_lock(std::optional<Duration> wait_time, std::optional<Duration> lease_time) {
    const RedissonOptions& o = options_;
    // The hash field: the client's UUID and the thread id.
    const LockValue value = LockValue::random(env_.rng(), 16, 1);  // UUID:threadId
    const Duration lease = lease_time.value_or(o.watchdog_timeout);
    lease_ = lease;
    // tryLock's wait budget is counted on the wall clock (System.currentTimeMillis).
    const std::optional<Instant> give_up =
        wait_time ? std::optional<Instant>(env_.wall_now() + *wait_time) : std::nullopt;
    bool subscribed = false;
    for (;;) {
      const Instant start = env_.mono_now();
      const Synced s = co_await try_acquire(value, lease);
      if (s.unsynced) co_return std::nullopt;  // NoSyncedSlavesException ends lock() and tryLock()
      const std::optional<redis::Reply>& r = s.reply;
      if (r && (r->is_nil() || r->is_ok())) {
        belief_.reset();
        if (!lease_time) start_watchdog(value);
        co_return Grant{value.text(), fenced_ ? r->integer : -1, start + lease, node_.name()};
      }
      Duration wait = r && r->kind == redis::Reply::Kind::Int && r->integer >= 0 ? Duration::ms(r->integer)
                                                                                  : Duration::ms(100);
      if (give_up) {
        const Duration left = *give_up - env_.wall_now();
        if (left <= Duration::zero()) co_return std::nullopt;
        wait = min(wait, left);
      }
      if (!subscribed) {
        subscribed = true;
        co_await node_.subscribe(key_);
        continue;  // try again at once: the lock may have been released meanwhile
      }
      co_await wait_for_unlock(wait);
    }
  }

  Task<bool> release(const Grant& grant) override {
    if (watchdog_ && cancels_renewal_before_unlock()) *watchdog_ = false;
    belief_.reset();
    // unlockInnerAsync (RedissonLock.java:347-371): synced like the lock.
    const Synced s = co_await synced(redis_cmd::make(redis::Op::RedissonUnlock, key_, grant.value, lease_));
    const bool released = !s.unsynced && RedisConnection::is_one(s.reply);  // nil: IllegalMonitorStateException
    if (watchdog_ && released) *watchdog_ = false;  // 2.11: the renewal stops only here
    co_return released;
  }

  // Redisson 2.11 (redisson-2.11.5 RedissonLock.java:470-497): unlockAsync
  // calls cancelExpirationRenewal() only when the unlock script returned
  // true; an unlock that failed (a timeout, a lost connection) leaves the
  // watchdog renewing a lock nobody will release (redisson#1602, fixed in
  // 2.13.1 by f5e3618b3). 4.7.0 cancels it whatever the unlock's outcome.
  bool cancels_renewal_before_unlock() const { return options_.version != RLockVersion::V2_11; }
  // Redisson 2.11 (redisson-2.11.5 RedissonLock.java:215-222): a renewal
  // that failed is logged and not rescheduled: the watchdog stops.
  bool failed_renewal_stops() const { return options_.version == RLockVersion::V2_11; }

  // PEXPIRE key lease (RedissonExpirable.expireAsync), as RedissonMultiLock does after lock(leaseTime).
  Task<bool> pexpire(Duration lease) {
    const auto r = co_await node_.call(redis_cmd::make(redis::Op::Pexpire, key_, {}, lease));
    co_return RedisConnection::is_one(r);
  }

  std::optional<Instant> believed_until(const Grant& grant) const override {
    return belief_ ? belief_ : grant.valid_until;
  }

  ProcId node() const { return node_.id(); }

  bool on_push(ProcId, const Payload& push) override {
    const auto* message = std::get_if<redis::Reply>(&push);
    if (!message || message->kind != redis::Reply::Kind::Str || message->str.rfind("unlocked ", 0) != 0) return false;
    unlocked_.fire();
    return true;
  }

 private:
  // A write as syncedEval sends it (CommandAsyncService.java:1095-1229 at
  // redisson-4.7.0): the command's reply, and whether Redisson threw
  // NoSyncedSlavesException.
  struct Synced {
    std::optional<redis::Reply> reply;
    bool unsynced = false;
  };
  Task<Synced> synced(redis::Request req);
  Task<Synced> try_acquire(const LockValue& value, Duration lease);

  // The semaphore wait of RedissonLock.lock(): an unlock message, or the timeout.
  Task<void> wait_for_unlock(Duration timeout) {
    const std::uint64_t generation = ++wait_generation_;
    env_.spawn(fire_after(timeout, generation));
    co_await unlocked_.wait();
  }
  Task<void> fire_after(Duration d, std::uint64_t generation) {
    co_await env_.sleep(d);
    if (generation == wait_generation_) unlocked_.fire();
  }

  void start_watchdog(const LockValue& value) {
    if (watchdog_) *watchdog_ = false;
    watchdog_ = std::make_shared<bool>(true);
    env_.spawn(renew_every_third(value, watchdog_));
  }

  Task<void> renew_every_third(LockValue value, std::shared_ptr<bool> active);
  // BaseConfig's retryDelay, EqualJitterDelay(1000 ms, 2 s).calcDelay(attempt):
  // half of min(1000 ms x 2^attempt, 2000 ms), plus a uniform draw from
  // [0, that half] in whole ms (EqualJitterDelay.java, redisson-4.7.0).
  Duration retry_delay(int attempt) {
    const std::int64_t d = attempt >= 1 ? 2000 : 1000;
    return Duration::ms(d / 2 + env_.rng().between(0, d / 2));
  }
  // BaseConfig.retryAttempts (BaseConfig.java:62).
  static constexpr int kRetryAttempts = 4;

  ClientEnv& env_;
  const std::string& key_;
  const RedissonOptions& options_;
  bool fenced_;
  ProcId sentinel_;
  RedisConnection node_;
  ClientWakeup unlocked_;
  std::uint64_t wait_generation_ = 0;
  std::shared_ptr<bool> watchdog_;
  Duration lease_ = Duration::zero();  // internalLockLeaseTime: the unlock script's PEXPIRE when re-entered
  std::optional<Instant> belief_;      // the lease as the renewals extended it (mono)
  // MasterSlaveEntry.availableSlaves (-1: unknown, ask INFO) and whether the
  // WAIT/WAITAOF probe has run (waitSupportedCommands).
  std::int64_t available_slaves_ = -1;
  bool probed_ = false;
};

// connected_slaves from INFO's text.
std::int64_t connected_slaves(const std::string& info) {
  const std::string label = "connected_slaves:";
  const auto at = info.find(label);
  if (at == std::string::npos) return 0;
  std::int64_t n = 0;
  for (std::size_t i = at + label.size(); i < info.size() && info[i] >= '0' && info[i] <= '9'; ++i)
    n = n * 10 + (info[i] - '0');
  return n;
}

redis::Request wait_request(std::int64_t numreplicas, Duration timeout) {
  redis::Request r = redis_cmd::make(redis::Op::Wait, {}, {}, timeout);
  r.offset = numreplicas;
  return r;
}

// syncedEval (CommandAsyncService.java:1095-1229, redisson-4.7.0). A single
// server (here: no Sentinel) sends the script alone (1097-1107). Else, the
// first time, a probe batch WAIT 0 0 + WAITAOF 0 0 0 (1110-1114; Redis 7.0
// knows WAIT only, so only WAIT is kept) and INFO for connected_slaves
// (1150-1181, cached in the MasterSlaveEntry); with replicas, the script and
// WAIT <replicas> <slavesSyncTimeout> go in one pipelined batch (1190-1196,
// CommandBatchService.java:444-453). A WAIT count other than expected asks
// INFO again next time (1213-1216); none at all with replicas expected is
// NoSyncedSlavesException when checkLockSyncedSlaves is on (1217-1224).
Task<RedissonLock::Synced> RedissonLock::synced(redis::Request req) {
  Synced out;
  if (options_.replication_guard == ReplicationGuard::None || sentinel_ == kNoProc) {
    out.reply = co_await node_.call(std::move(req));
    co_return out;
  }
  if (!probed_) {
    const auto probe = co_await node_.call(wait_request(0, Duration::zero()));
    if (!probe || probe->kind != redis::Reply::Kind::Int) co_return out;  // the command fails with it
    probed_ = true;
  }
  if (available_slaves_ < 0) {
    const auto info = co_await node_.call(redis_cmd::make(redis::Op::Info, {}));
    if (!info || info->kind != redis::Reply::Kind::Str) co_return out;
    available_slaves_ = connected_slaves(info->str);
  }
  const std::int64_t slaves = available_slaves_;
  if (slaves == 0) {  // BatchOptions.sync(0): no WAIT in the batch
    out.reply = co_await node_.call(std::move(req));
    co_return out;
  }
  std::vector<Call> batch;
  // The batch's response timeout: timeout + slavesSyncTimeout (BaseRedisBatchExecutor.java:68-77).
  // Its resends on a response timeout (the config's retryAttempts, :86-91)
  // are modelled for the renewal (renew_every_third), not for the lock and
  // unlock scripts' batches.
  const Duration timeout = options_.request_timeout + options_.slaves_sync_timeout;
  batch.emplace_back(node_.id(), Payload(std::move(req)), timeout);
  batch.emplace_back(node_.id(), Payload(wait_request(slaves, options_.slaves_sync_timeout)), timeout);
  Replies<redis::Reply> replies = co_await when_all<redis::Reply>(env_, std::move(batch));
  co_await node_.after_round(replies[1]);
  if (!replies[0] || !replies[1] || replies[1]->kind != redis::Reply::Kind::Int) co_return out;  // the batch failed
  const std::int64_t acked = replies[1]->integer;
  if (acked != slaves) available_slaves_ = -1;
  out.reply = std::move(replies[0]);
  out.unsynced = options_.replication_guard == ReplicationGuard::Check && acked == 0;
  co_return out;
}

// One tryAcquire (RedissonLock.java:186-202): the script, synced. When no
// replica acknowledged it, handleNoSync (RedissonBaseLock.java:281-283,
// CommandAsyncService.java:1039-1066) unlocks, and ServiceManager.execute
// (ServiceManager.java:618-645) tries again after retryDelay, up to
// retryAttempts = 4 more times (BaseConfig.java:62, 67; EqualJitterDelay:
// d/2 + U[0, d/2] with d = min(1000 ms x 2^k, 2000 ms)); then the exception.
// RFencedLock's acquisition has neither (RedissonFencedLock.java:84-118):
// the lock and its token stay, and the exception comes at once.
Task<RedissonLock::Synced> RedissonLock::try_acquire(const LockValue& value, Duration lease) {
  for (int attempt = 0;; ++attempt) {
    redis::Request req = fenced_ ? redis_cmd::redisson_fenced_trylock(key_, value, lease, key_ + ":token")
                                 : redis_cmd::make(redis::Op::RedissonTryLock, key_, value, lease);
    Synced s = co_await synced(std::move(req));
    if (!s.unsynced) co_return s;
    const bool again = !fenced_ && attempt < kRetryAttempts;
    const Duration delay = again ? retry_delay(attempt + 1) : Duration::zero();  // calcDelay(attempts, incremented)
    env_.note(Ev::AttemptFailed,
              {.detail = "no replica of " + node_.name() + " acknowledged the lock's write within " +
                         format_duration(options_.slaves_sync_timeout) + " (NoSyncedSlavesException); " +
                         (fenced_ ? std::string("RFencedLock keeps the lock and its token")
                                  : "it unlocks" + (again ? " and tries again in " + format_duration(delay)
                                                          : std::string(", and gives up")))});
    co_await env_.yield();
    if (!fenced_) co_await synced(redis_cmd::make(redis::Op::RedissonUnlock, key_, value, lease));
    if (!again) co_return s;
    co_await env_.sleep(delay);
  }
}

// The watchdog: LockTask (renewal/LockTask.java:82-95, redisson-4.7.0) every
// watchdog_timeout / 3: PEXPIRE the key if the field is still ours, synced
// like every lock write. Not ours: the renewal stops (cancelExpirationRenewal,
// LockTask.java:97-101). The renewal goes through the command executor
// (syncedEval with retry, CommandAsyncService.java:1080-1083, 1103-1104),
// which resends it while no response comes: after `timeout` (3 s) with no
// response, again retryInterval later (RedisExecutor.java:466-483), up to
// retryAttempts = 4 times (isResendAllowed, :500-504); a refused connection
// is tried again when the retry timer set as the attempt started fires
// (:278-374). retryInterval = EqualJitterDelay(1 s, 2 s).calcDelay(attempt)
// (:177; BaseConfig.java:58, 62, 67). Only when the command completes —
// answered, or failed after its last attempt (RedisResponseTimeoutException,
// logged) — is the next renewal scheduled, a third of the timeout on
// (RenewalTask.java:169-185, schedule() :62-69). A renewal extends the
// client's belief from the moment its answered attempt was sent: the key's
// new expiry is at least that late.
Task<void> RedissonLock::renew_every_third(LockValue value, std::shared_ptr<bool> active) {
  const Duration timeout = options_.watchdog_timeout;
  const Duration period = timeout / 3;
  while (*active) {
    co_await env_.sleep(period);
    if (!*active) co_return;
    for (int attempt = 0;; ++attempt) {
      const Instant sent = env_.mono_now();
      redis::Request req = redis_cmd::compare_and_pexpire(key_, value, timeout);
      const std::uint64_t applied = fingerprint(req) ^ (fingerprint(redis::Reply::of(1)) * 3);
      const Synced s = co_await synced(std::move(req));
      if (!*active) co_return;
      const auto& r = s.reply;
      if (r && r->kind == redis::Reply::Kind::Int && r->integer == 0) co_return;  // not ours any more: stop quietly
      if (RedisConnection::is_one(r) && !s.unsynced) {
        belief_ = sent + timeout;
        // content: the node's record of the PEXPIRE it applied, for the narrative.
        env_.note(Ev::Renewed, {.peer = node_.id(), .value = belief_->ns(), .content = applied,
                                .detail = "the watchdog sets the key's expiry " + format_duration(timeout) + " ahead"});
        co_await env_.yield();
      }
      if (r || s.unsynced || attempt == kRetryAttempts) {
        // Completed. Redisson 2.11 stops renewing after a renewal that failed
        // (an error, or no answer to its last attempt); 4.7 schedules the next.
        if ((!r || r->kind == redis::Reply::Kind::Err) && failed_renewal_stops()) co_return;
        break;  // the next renewal is scheduled
      }
      const Duration delay = retry_delay(attempt);
      const bool refused = env_.mono_now() - sent < options_.request_timeout;
      const Instant again = (refused ? sent : env_.mono_now()) + delay;
      if (again > env_.mono_now()) co_await env_.sleep(again - env_.mono_now());
      if (!*active) co_return;
    }
  }
}

// RedissonMultiLock and RedissonRedLock (deprecated since 2023), redisson-4.7.0
// RedissonMultiLock.java and RedissonRedLock.java: one RLock per node, taken
// one after another. MultiLock needs every one; RedLock a majority
// (failedLocksLimit = n - (n/2 + 1), RedissonRedLock.java:44-51) and gives
// each lock max(waitTime / n, 1 ms) of the budget (calcLockWaitTime, 53-56).
class RedissonMultiLock final : public Lock {
 public:
  RedissonMultiLock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                    const RedissonOptions& options, bool majority)
      : env_(env), majority_(majority), wait_time_(options.wait_time), lease_time_(options.lease_time) {
    for (ProcId n : targets.nodes) {
      const LockTargets one{{n}, targets.sentinel};
      locks_.push_back(std::make_unique<RedissonLock>(env_, one, config, options, false));
    }
  }

  // tryLock(waitTime, leaseTime) if a wait time is given; else lock() or
  // lock(leaseTime): lockInterruptibly (RedissonMultiLock.java:242-264) calls
  // tryLock over and over, with n x 1500 ms each time, or with a lease, a
  // wait drawn from [lease/2, lease) (lease <= n x 1500 ms) or [n x 1500 ms, lease).
  Task<std::optional<Grant>> acquire() override {
    if (wait_time_) {
      std::optional<Grant> g = co_await try_lock(*wait_time_, lease_time_);
      co_return g;
    }
    const Duration base = Duration::ms(1500) * static_cast<std::int64_t>(locks_.size());
    for (;;) {
      Duration wait = base;
      if (lease_time_) {
        const std::int64_t lease = lease_time_->whole_ms();
        const std::int64_t lo = lease <= base.whole_ms() ? lease / 2 : base.whole_ms();
        wait = Duration::ms(lo < lease ? env_.rng().between(lo, lease - 1) : lease);
      }
      std::optional<Grant> g = co_await try_lock(wait, lease_time_);
      if (g) co_return g;
    }
  }

  Task<bool> release(const Grant&) override {
    // Errors are swallowed (RedissonMultiLock.unlockInner, 277-287): released iff every lock said so.
    bool all = true;
    std::vector<std::pair<std::size_t, Grant>> held = std::move(held_);
    held_.clear();
    for (auto& [i, g] : held) all = co_await locks_[i]->release(g) && all;
    co_return all;
  }

  std::optional<Instant> believed_until(const Grant& grant) const override {
    if (lease_time_) return grant.valid_until;  // no watchdog: what the PEXPIREs set
    std::optional<Instant> until;
    for (const auto& [i, g] : held_)
      if (const auto b = locks_[i]->believed_until(g)) until = until ? min(*until, *b) : *b;
    return until ? until : grant.valid_until;
  }

  bool on_push(ProcId from, const Payload& push) override {
    for (auto& l : locks_)
      if (l->node() == from) return l->on_push(from, push);
    return false;
  }

 private:
  std::size_t failed_locks_limit() const { return majority_ ? locks_.size() - (locks_.size() / 2 + 1) : 0; }

  Task<std::optional<Grant>> try_lock(Duration wait, std::optional<Duration> lease);
  Task<void> give_up_pass(std::vector<std::pair<std::size_t, Grant>>& held, bool restart);
  Grant combine(std::vector<std::pair<std::size_t, Grant>>&& held, std::optional<Instant> lease_until);

  ClientEnv& env_;
  bool majority_;
  std::optional<Duration> wait_time_;
  std::optional<Duration> lease_time_;
  std::vector<std::unique_ptr<RedissonLock>> locks_;
  std::vector<std::pair<std::size_t, Grant>> held_;
};

// tryLock(waitTime, leaseTime) (RedissonMultiLock.java:306-388): with a
// lease, each RLock is taken for 2 x waitTime (312-319) and, once enough are
// held, PEXPIREd to the lease (380-385). A lock that fails when no failure
// is left releases what the pass took and, while the budget lasts, starts a
// new pass from the first lock (350-368); the budget is checked after every
// lock, on the wall clock (370-377).
Task<std::optional<Grant>> RedissonMultiLock::try_lock(Duration wait, std::optional<Duration> lease) {
  const std::size_t n = locks_.size();
  const bool waits = wait > Duration::zero();
  std::optional<Duration> per_lock_lease;
  if (lease) per_lock_lease = waits ? wait * 2 : *lease;
  Instant time = env_.wall_now();
  Duration remain = waits ? wait : Duration::zero();
  const Duration lock_wait = majority_ ? max(remain / static_cast<std::int64_t>(n), Duration::ms(1)) : remain;
  std::size_t failures_left = failed_locks_limit();
  std::vector<std::pair<std::size_t, Grant>> held;
  for (std::size_t i = 0; i < n; ++i) {
    // tryLock() when neither is given (334-335): one try, no wait.
    const Duration await_time = waits ? min(lock_wait, remain) : Duration::zero();
    std::optional<Grant> g = co_await locks_[i]->try_lock(await_time, per_lock_lease);
    if (g) {
      held.emplace_back(i, std::move(*g));
    } else if (n - held.size() == failed_locks_limit()) {
      break;  // enough are held already
    } else if (failures_left == 0) {
      co_await give_up_pass(held, waits);
      if (!waits) co_return std::nullopt;
      failures_left = failed_locks_limit();
      held.clear();
      i = static_cast<std::size_t>(-1);  // the next lock is the first again
    } else {
      --failures_left;
    }
    if (waits) {
      remain = remain - (env_.wall_now() - time);
      time = env_.wall_now();
      if (remain <= Duration::zero()) {
        co_await give_up_pass(held, false);
        co_return std::nullopt;
      }
    }
  }
  if (held.empty()) co_return std::nullopt;
  std::optional<Instant> lease_until;
  if (lease) {
    for (auto& [i, g] : held) {
      const Instant sent = env_.mono_now();
      co_await locks_[i]->pexpire(*lease);
      lease_until = lease_until ? min(*lease_until, sent + *lease) : sent + *lease;
    }
  }
  co_return combine(std::move(held), lease_until);
}

Task<void> RedissonMultiLock::give_up_pass(std::vector<std::pair<std::size_t, Grant>>& held, bool restart) {
  if (held.empty() && !restart) co_return;  // a budget spent with nothing held: nothing to tell or release
  env_.note(Ev::AttemptFailed, {.detail = std::to_string(held.size()) + " of " + std::to_string(locks_.size()) +
                                          " locks taken (" + (majority_ ? "a majority" : "all") +
                                          " needed); it releases them" + (restart ? " and starts again" : "")});
  co_await env_.yield();
  for (auto& [i, g] : held) co_await locks_[i]->release(g);
}

Grant RedissonMultiLock::combine(std::vector<std::pair<std::size_t, Grant>>&& held, std::optional<Instant> lease_until) {
  Grant all;
  all.valid_until = held.front().second.valid_until;
  for (auto& [i, g] : held) {
    all.value += (all.value.empty() ? "" : ",") + g.value;
    all.where += (all.where.empty() ? "" : ",") + env_.name_of(locks_[i]->node());
    if (g.valid_until && all.valid_until) all.valid_until = min(*all.valid_until, *g.valid_until);
  }
  if (lease_until) all.valid_until = lease_until;
  held_ = std::move(held);
  return all;
}

}  // namespace

void read_redisson(OptionReader& r, RedissonOptions& o) {
  if (auto v = r.duration("request_timeout", Sign::Positive)) o.request_timeout = *v;
  if (auto v = r.integer("first_token", 0, INT64_MAX / 2)) o.first_token = *v;
  if (auto v = r.duration("watchdog_timeout", Sign::Positive)) o.watchdog_timeout = *v;
  o.lease_time = r.duration("lease_time", Sign::Positive);
  o.wait_time = r.duration("wait_time", Sign::NonNegative);
  if (auto v = r.choice<ReplicationGuard>("replication_guard", {{"check", ReplicationGuard::Check},
                                                                {"wait", ReplicationGuard::Wait},
                                                                {"none", ReplicationGuard::None}}))
    o.replication_guard = *v;
  if (auto v = r.duration("slaves_sync_timeout", Sign::Positive)) o.slaves_sync_timeout = *v;
  if (auto v = r.choice<RLockVersion>("version", {{"4.7", RLockVersion::V4_7}, {"2.11", RLockVersion::V2_11}})) o.version = *v;
}

std::shared_ptr<const AlgorithmOptions> parse_redisson(OptionReader& r, const LockConfig&) {
  auto o = std::make_shared<RedissonOptions>();
  read_redisson(r, *o);
  return o;
}

std::unique_ptr<Lock> make_redisson_multilock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                              const RedissonOptions& options) {
  return std::make_unique<RedissonMultiLock>(env, targets, config, options, false);
}
std::unique_ptr<Lock> make_redisson_redlock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                            const RedissonOptions& options) {
  return std::make_unique<RedissonMultiLock>(env, targets, config, options, true);
}

std::unique_ptr<Lock> make_redisson(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                    const RedissonOptions& options) {
  return std::make_unique<RedissonLock>(env, targets, config, options, false);
}
std::unique_ptr<Lock> make_redisson_fenced(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                           const RedissonOptions& options) {
  return std::make_unique<RedissonLock>(env, targets, config, options, true);
}

}  // namespace locksim
