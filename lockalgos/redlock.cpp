// Redlock (redis.io, "Distributed locks with Redis", the Redlock algorithm),
// with the reference libraries' differences as flavours (algorithms.md §2):
//
//   1. read the time T1
//   2. SET key value NX PX ttl on each of N independent masters
//   3. held iff a majority said OK and the lock is still valid:
//      validity = ttl - (T2 - T1) - drift
//   4. on failure, unlock every instance; retry after a random delay
//   extension (redsync, node-redlock): PEXPIRE each key if it still holds our
//   value; extended iff a majority did so while the lock was still valid
//
// Assumes (and the catalogue breaks): clocks run at nearly the same rate and
// never jump, processes do not pause for long, messages are not held back,
// nodes keep their keys across restarts.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <string_view>
#include <utility>

#include "lockalgos/redlock.hpp"

#include "lockalgos/redis_common.hpp"

namespace locksim {
namespace {

enum class UnlockOnFail : std::uint8_t { EachTry, AtEnd };
// Which replies end a parallel round early as a quorum against.
enum class Against : std::uint8_t {
  Never,
  NotOk,  // any reply but OK, or none (node-redlock v5's votesAgainst)
  Taken,  // a nil reply: the key is someone else's (redsync's failFast ErrTaken; errors do not count)
};

struct Flavour {
  RedlockFlavour id;
  bool drift_plus_2ms;          // drift = ttl * factor (+ 2 ms)
  bool drift_rounds;            // round (node-redlock) rather than floor (redlock-rb, -py)
  bool drift_added;             // validity = ttl - (elapsed - drift): the drift added (redlock-py 1.0.2)
  bool checks_validity;         // node-redlock v5 never does, at acquire
  bool validity_zero_ok;        // validity >= 0 is enough (redlock-rb 2.x), else > 0
  bool wall_clock;              // T1, T2 from the wall clock (Time.now, time.time, Date.now)
  bool start_once;              // T1 read once, before every try (node-redlock v5)
  Fanout fanout;
  bool resolves_at_quorum;      // stop waiting once a majority said OK
  Against against;              // ... or once a majority said no
  std::optional<Duration> node_timeout;  // per command; nullopt: none at all
  bool node_timeout_from_ttl;   // redsync: 5% of the expiry per round
  int tries;
  DurationRange retry_delay;
  UnlockOnFail unlock;
  bool new_value_each_try;      // else one value for every try of an acquire
  bool sleeps_after_last;       // the retry pause follows the last failed try too
  bool raises_on_error;         // a node's error fails a try that won a quorum (redlock-py)
  int value_bytes;
};

// From the libraries' code (algorithms.md §2, its sources [RB] [PY] [GO] [NODE]).
constexpr Duration ms(std::int64_t n) { return Duration::ms(n); }
const Flavour kFlavours[] = {
    // redlock-rb, the maintained gem `redlock` 2.0.6 (lib/redlock/client.rb):
    //   :21,49-52  every command times out after redis_timeout 0.1 s
    //   :22-24,286-297 retry_count 3, retry_delay 200 ms + rand(retry_jitter 50) whole ms
    //   :28-37,368-371 time from CLOCK_MONOTONIC (since 1.0.0, commit b823334, 2018)
    //   :266-279   retry_count + 1 tries
    //   :301       a new value (SecureRandom.uuid) for each try
    //   :305-312   SET NX PX on each server in turn
    //   :314-319   held iff a quorum and validity >= 0; else unlock every server
    //   :361-366   drift = (ttl * 0.01).to_i + 2
    {RedlockFlavour::RedlockRb, true, false, false, true, true, false, false, Fanout::Sequential, false, Against::Never,
     ms(100), false, 4, {ms(200), ms(249)}, UnlockOnFail::EachTry, true, false, false, 16},
    // redlock-rb as antirez wrote it in 2014: redlock.rb at the root of the
    // repository's first commits (leandromoreira/redlock-rb 769e806, 2014-05-16,
    // the same file as antirez/redlock-rb; the gem 0.0.1 of 2014-11 behaves alike):
    //   :4-5,57    DefaultRetryCount 3: three tries in all
    //   :46-56     one value (20 bytes of /dev/urandom) for every try
    //   :59,67     time from Time.now, the wall clock
    //   :66-68     drift (ttl * 0.01).to_i + 2; held iff a quorum and validity > 0
    //   :75-80     unlock every server, then sleep rand(200) whole ms, after the last try too
    //   :17        Redis.new(:url): redis-rb 3.x's default 5 s timeout
    {RedlockFlavour::RedlockRb2014, true, false, false, true, false, true, false, Fanout::Sequential, false, Against::Never,
     Duration::s(5), false, 3, {ms(0), ms(199)}, UnlockOnFail::EachTry, false, true, false, 20},
    // redlock-py 1.0.8 (SPSCommerce/redlock-py, commit 42ef491, redlock/__init__.py):
    //   :40-42     retry_count 3 (three tries), retry_delay 0.2 s, drift factor 0.01
    //   :50-60     redis.StrictRedis: no socket timeout
    //   :84-90     one value (22 letters and digits) for every try
    //   :95        drift = int(ttl * 0.01) + 2
    //   :100,108   time from time.time(), the wall clock
    //   :102-107   SET NX PX on each server in turn; a RedisError is kept, not a yes
    //   :110-113   held iff validity > 0 and a quorum, but any RedisError raises
    //              MultipleRedlockException instead: no unlock, no further try
    //              (since 1.0.7, commit e9e9a97; until 1.0.6 lock_instance took
    //              every exception for a no: redis_errors = "ignore")
    //   :114-121   else unlock every server, then sleep 0.2 s, after the last try too
    {RedlockFlavour::RedlockPy, true, false, false, true, false, true, false, Fanout::Sequential, false, Against::Never,
     std::nullopt, false, 3, DurationRange::fixed(ms(200)), UnlockOnFail::EachTry, false, true, true, 11},
    // redlock-py 1.0.2 (SPSCommerce/redlock-py 169f291, 2015-02-27, redlock/__init__.py),
    // before PR #3 (1ab1090, "By substracting twice, we accidentally *added* the
    // drift to the final validity value"), released as 1.0.4:
    //   :14-15,58,74 three tries, time.sleep(0.2) after each failed one, the last too
    //   :39-43    lock_instance takes any exception for a no (1.0.6's redis_errors = "ignore")
    //   :57       one value (22 letters and digits) for every try
    //   :60,65    time from datetime.utcnow(), the wall clock
    //   :64       drift = ttl * 0.01 + 2, in (fractional) milliseconds
    //   :66-67    validity = ttl - ((now - start) - drift): ttl - elapsed + drift
    //   :68       held iff validity > 0 and a quorum; else unlock every server
    {RedlockFlavour::RedlockPy102, true, false, true, true, false, true, false, Fanout::Sequential, false, Against::Never,
     std::nullopt, false, 3, DurationRange::fixed(ms(200)), UnlockOnFail::EachTry, false, true, false, 11},
    // redsync v4.17.0 (mutex.go, redsync.go):
    //   mutex.go:80,86   one value for every try of a Lock()
    //   mutex.go:104-116 time.Now() (monotonic) around each round; held iff n >= quorum
    //                    and now is before until = now + expiry - elapsed - expiry*driftFactor
    //   mutex.go:107,122 each round's context times out at expiry * timeoutFactor (0.05)
    //   mutex.go:117-123 a failed try releases on every node
    //   mutex.go:269-321 actOnPoolsAsync reads every reply; only with failFast (off by
    //                    default, redsync.go:141-149) does it return at a quorum of OKs
    //                    or a quorum taken (collect = "quorum")
    //   redsync.go:33-39 32 tries, rand.Intn(250-50)+50 ms apart, driftFactor 0.01
    {RedlockFlavour::Redsync, false, false, false, true, false, false, false, Fanout::Parallel, false, Against::Never,
     std::nullopt, true, 32, {ms(50), ms(249)}, UnlockOnFail::EachTry, false, false, false, 16},
    // node-redlock v5 (redlock@5.0.0-beta.2, dist/cjs/index.js):
    //   :210,217  acquire() reads Date.now() once, before _execute's tries; the
    //             lock's expiration is start + duration - drift, whatever the
    //             tries took; nothing compares it with the time (no validity check)
    //   :216      drift = round(driftFactor * duration) + 2
    //   :279-297  retryCount 10 (11 tries), retryDelay 200 + floor((r*2-1) * 100) ms
    //   :326-339  a round resolves at a quorum for, or at a quorum against
    //   :211,218-227  one value per acquire(); released once, after the last try
    {RedlockFlavour::NodeRedlockV5, true, true, false, false, false, true, true, Fanout::Parallel, true, Against::NotOk,
     std::nullopt, false, 11, {ms(100), ms(299)}, UnlockOnFail::AtEnd, false, false, false, 16},
    // node-redlock v4 (redlock@4.2.0, redlock.js; what `npm install redlock` gives):
    //   :59-62    driftFactor 0.01, retryCount 10, retryDelay 200, retryJitter 100
    //   :366-367  one value (16 random bytes, hex, :449) for every try of a _lock()
    //   :397      start = Date.now() read again at each try (v5 reads it once)
    //   :411      a round waits for every server's callback (no command timeout)
    //   :415-419  expiration = start + ttl - (round(0.01 * ttl) + 2); held iff a
    //             quorum and expiration > Date.now(): validity > 0 (v5 never checks)
    //   :424-428  a failed try unlocks every server, waits for them, then retries
    //             after max(0, 200 + floor((r*2-1) * 100)) ms while attempts <= 10
    {RedlockFlavour::NodeRedlockV4, true, true, false, true, false, true, false, Fanout::Parallel, false, Against::Never,
     std::nullopt, false, 11, {ms(100), ms(299)}, UnlockOnFail::EachTry, false, false, false, 16},
};

// The flavour, with the scenario's fanout / collect overrides applied.
Flavour flavour_for(const RedlockOptions& o) {
  Flavour f = kFlavours[0];
  for (const Flavour& known : kFlavours)
    if (known.id == o.flavour) f = known;
  if (o.fanout) f.fanout = *o.fanout;
  if (o.collect) f.resolves_at_quorum = *o.collect == Collect::Quorum;
  if (o.redis_errors) f.raises_on_error = *o.redis_errors == RedisErrors::Raise;
  // redsync's WithFailFast(true) (mutex.go:304-314): a quorum taken ends the round too.
  if (f.id == RedlockFlavour::Redsync) f.against = f.resolves_at_quorum ? Against::Taken : Against::Never;
  return f;
}

// [lock] flavour's names (the registry lists the same, with their help).
constexpr std::pair<std::string_view, RedlockFlavour> kFlavourNames[] = {
    {"redlock-rb", RedlockFlavour::RedlockRb},
    {"redlock-rb-2014", RedlockFlavour::RedlockRb2014},
    {"redlock-py", RedlockFlavour::RedlockPy},
    {"redlock-py-1.0.2", RedlockFlavour::RedlockPy102},
    {"redsync", RedlockFlavour::Redsync},
    {"node-redlock-v5", RedlockFlavour::NodeRedlockV5},
    {"node-redlock-v4", RedlockFlavour::NodeRedlockV4},
    {"redisson", RedlockFlavour::Redisson},
};

std::string_view flavour_name(RedlockFlavour f) {
  for (const auto& [name, id] : kFlavourNames)
    if (id == f) return name;
  return "?";
}

// The flavours that extend a lock, and that fan out in parallel by default.
bool parallel_flavour(RedlockFlavour f) {
  return f == RedlockFlavour::Redsync || f == RedlockFlavour::NodeRedlockV5 || f == RedlockFlavour::NodeRedlockV4;
}
bool node_redlock(RedlockFlavour f) { return f == RedlockFlavour::NodeRedlockV5 || f == RedlockFlavour::NodeRedlockV4; }

bool is_ok(const redis::Reply& r) { return r.is_ok(); }
bool is_one(const redis::Reply& r) { return r.kind == redis::Reply::Kind::Int && r.integer == 1; }
bool is_taken(const std::optional<redis::Reply>& r) { return r && (r->is_nil() || (r->kind == redis::Reply::Kind::Int && r->integer == 0)); }

class Redlock final : public Lock {
 public:
  Redlock(ClientEnv& env, const LockTargets& targets, const LockConfig& config, const RedlockOptions& options)
      : env_(env),
        config_(config),
        options_(options),
        f_(flavour_for(options)),
        sentinel_(targets.sentinel != kNoProc) {
    const Duration timeout = options_.request_timeout.value_or(
        f_.node_timeout_from_ttl ? options_.ttl / 20 : f_.node_timeout.value_or(Duration::zero()));
    for (ProcId n : targets.nodes) nodes_.emplace_back(env_, n, targets.sentinel, timeout);
  }

  Task<std::optional<Grant>> acquire() override {
    const RedlockOptions& o = options_;
    const int tries = o.retry_count ? (*o.retry_count == kForever ? kForever : *o.retry_count + 1) : f_.tries;
    // node-redlock draws one value per acquire() call; the others one per try.
    LockValue value = LockValue::random(env_.rng(), f_.value_bytes);
    const Instant first_start = now();
    for (int attempt = 0; tries == kForever || attempt < tries; ++attempt) {
      if (attempt > 0) {
        co_await env_.sleep(retry_delay());
        if (f_.new_value_each_try) value = LockValue::random(env_.rng(), f_.value_bytes);
      }
      const Instant start = f_.start_once ? first_start : now();
      const std::vector<bool> ok = co_await lock_instances(value);
      // The awaits took time, and we may have been paused: measure, don't assume.
      const Duration elapsed = now() - start;
      const Duration validity = f_.drift_added ? o.ttl - (elapsed - drift()) : o.ttl - elapsed - drift();
      const std::size_t granted = static_cast<std::size_t>(std::count(ok.begin(), ok.end(), true));
      const bool valid = validity > Duration::zero() || (f_.validity_zero_ok && validity == Duration::zero());
      if (granted >= quorum() && (!f_.checks_validity || valid) && round_errors_ > 0 && f_.raises_on_error) {
        // redlock-py 1.0.8 __init__.py:110-113: MultipleRedlockException, out of lock().
        env_.note(Ev::AttemptFailed, {.value = static_cast<std::int64_t>(granted),
                                      .detail = std::to_string(round_errors_) +
                                                " nodes failed with a RedisError: MultipleRedlockException, "
                                                "it gives up without unlocking"});
        co_return std::nullopt;
      }
      if (granted >= quorum() && (!f_.checks_validity || valid)) {
        std::string where;
        for (std::size_t i = 0; i < ok.size(); ++i)
          if (ok[i]) where += (where.empty() ? "" : ",") + nodes_[i].name();
        Grant g{value.text(), -1, env_.mono_now() + validity, where};
        valid_until_ = *g.valid_until;
        holding_ = std::make_shared<bool>(true);
        lost_ = false;
        if (node_redlock(f_.id)) {
          // node-redlock keeps the Lock's expiration on Date.now()'s clock
          // (v5 index.js:217, v4 redlock.js:416): start + ttl - drift.
          expiration_ = start + o.ttl - drift();
          if (o.auto_extend || using_) env_.spawn(node_extend_while_held(value, holding_));
        } else if (o.auto_extend) {
          env_.spawn(extend_while_held(value, holding_));
        }
        co_return g;
      }
      TraceEvent failed{.value = static_cast<std::int64_t>(granted)};
      if (env_.detailed())
        failed.detail = std::to_string(granted) + " of " + std::to_string(nodes_.size()) + " nodes granted it (" +
                        std::to_string(quorum()) + " needed), validity " + format_duration(validity) +
                        (f_.unlock == UnlockOnFail::EachTry ? "; it unlocks every node" : "");
      env_.note(Ev::AttemptFailed, std::move(failed));
      co_await env_.yield();
      if (f_.unlock == UnlockOnFail::EachTry) co_await unlock_all(value);
    }
    if (f_.unlock == UnlockOnFail::AtEnd) co_await unlock_all(value);
    if (f_.sleeps_after_last) co_await env_.sleep(retry_delay());
    co_return std::nullopt;
  }

  Task<bool> release(const Grant& grant) override {
    if (holding_) *holding_ = false;
    const LockValue value(grant.value);
    const std::size_t removed = co_await unlock_all(value);
    co_return !wait_for_unlock_ || removed >= quorum();
  }

  bool still_held() const override { return !lost_; }

  // redsync's Valid() (v4.17.0 mutex.go:175-211, the same since v4.3.0 and
  // deprecated since v4.4.1 for go-redsync/redsync#72): GET the key on every
  // node through actOnPoolsAsync — every reply awaited (mutex.go:269-321),
  // with no deadline of its own (ctx: context.Background()), each command
  // bounded only by its connection's timeout — and true iff at least a quorum
  // held our value. Nothing compares the time with the lock's validity.
  Task<std::optional<bool>> confirm(const Grant& grant) override {
    if (options_.check != ValidityCheck::Valid) co_return std::nullopt;
    std::vector<Call> calls = to_every_node([&] { return redis_cmd::make(redis::Op::Get, config_.key); });
    const Replies<redis::Reply> replies = co_await when_quorum(env_, std::move(calls), Quorum<redis::Reply>{});
    const auto held = static_cast<std::size_t>(std::count_if(replies.begin(), replies.end(), [&](const auto& r) {
      return r && r->kind == redis::Reply::Kind::Str && r->str == grant.value;
    }));
    if (sentinel_) co_await rediscover_failed(replies);
    const bool valid = held >= quorum();
    // key "Valid()": the check asked the nodes, not the clock (the story says so).
    env_.note(valid ? Ev::Checked : Ev::Lost,
              {.value = static_cast<std::int64_t>(held), .key = "Valid()",
               .detail = std::to_string(held) + " of " + std::to_string(nodes_.size()) + " nodes hold its value (" +
                         std::to_string(quorum()) + " needed)"});
    if (!valid) lost_ = true;
    co_await env_.yield();
    co_return valid;
  }

  // node-redlock: lock.expiration > Date.now(), on the wall clock as it reads now.
  std::optional<Instant> believed_until(const Grant& grant) const override {
    if (!node_redlock(f_.id)) return grant.valid_until;
    return env_.mono_now() + (expiration_ - env_.wall_now());
  }

  // node-redlock's using() (a library scenario's using = true): acquire()
  // then extend automatically; the routine reads signal.aborted.
  void use(const LibraryUse& use) override { using_ = use.using_routine; }
  Task<bool> check(LibraryCheck, const Grant&) override { co_return !lost_; }

 private:
  std::size_t quorum() const { return nodes_.size() / 2 + 1; }

  Instant now() const { return f_.wall_clock ? env_.wall_now() : env_.mono_now(); }

  // The pause before a retry: the scenario's retry_delay, or the flavour's
  // (drawn in whole milliseconds, as each library does).
  Duration retry_delay() {
    if (options_.retry_delay) return options_.retry_delay->draw(env_.rng());
    return Duration::ms(env_.rng().between(f_.retry_delay.lo.whole_ms(), f_.retry_delay.hi.whole_ms()));
  }

  // When a parallel round may end before every reply (Flavour's
  // resolves_at_quorum, rejects_at_quorum), counting replies `accept` takes.
  Quorum<redis::Reply> round_end(bool (*accept)(const redis::Reply&)) const {
    Quorum<redis::Reply> until;
    if (f_.resolves_at_quorum) until = {.need = quorum(), .accept = accept};
    if (f_.against != Against::Never) until.against_need = quorum();
    if (f_.against == Against::Taken) until.against = is_taken;
    return until;
  }

  Duration drift() const {
    const double factor = options_.drift_factor.value_or(0.01);
    const Duration ttl = options_.ttl;
    if (f_.drift_added)  // redlock-py 1.0.2 :64: ttl * 0.01 + 2, a float of milliseconds, not rounded
      return Duration::ns(static_cast<std::int64_t>(static_cast<double>(ttl.count_ns()) * factor)) + Duration::ms(2);
    if (!f_.drift_plus_2ms)  // redsync: expiry * factor, at nanosecond precision
      return Duration::ns(static_cast<std::int64_t>(static_cast<double>(ttl.count_ns()) * factor));
    const double ms = static_cast<double>(ttl.whole_ms()) * factor;
    const auto whole = static_cast<std::int64_t>(f_.drift_rounds ? std::llround(ms) : static_cast<std::int64_t>(ms));
    return Duration::ms(whole + 2);
  }

  // One command to every node, all at once (a parallel fan-out's round).
  template <typename MakeRequest>
  std::vector<Call> to_every_node(MakeRequest&& make) const {
    std::vector<Call> calls;
    calls.reserve(nodes_.size());
    for (const RedisConnection& n : nodes_) n.add_request(calls, make());
    return calls;
  }
  // The same, each request written where it leaves by `fill(redis::Request&)`.
  template <typename Fill>
  std::vector<Call> to_every_node_staged(Fill&& fill) const {
    std::vector<Call> calls;
    calls.reserve(nodes_.size());
    for (const RedisConnection& n : nodes_) n.add_staged_request(calls, fill);
    return calls;
  }

  // After a parallel round: nodes that failed ask the sentinel for their
  // master (RedisConnection::call does it after each command; a round, once
  // it is over, for the failed nodes only).
  Task<void> rediscover_failed(const Replies<redis::Reply>& replies) {
    for (std::size_t i = 0; i < nodes_.size(); ++i) co_await nodes_[i].after_round(replies[i]);
  }

  // SET NX PX on every node; which ones said OK.
  Task<std::vector<bool>> lock_instances(const LockValue& value) {
    const std::string& key = config_.key;
    const Duration ttl = options_.ttl;
    std::vector<bool> ok(nodes_.size(), false);
    // A node that answered an error, or did not answer (refused, timed out).
    auto failed = [](const std::optional<redis::Reply>& r) { return !r || r->kind == redis::Reply::Kind::Err; };
    round_errors_ = 0;
    if (f_.fanout == Fanout::Sequential) {
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        const auto r = co_await nodes_[i].set_nx_px(key, value, ttl);
        ok[i] = r && r->is_ok();
        round_errors_ += failed(r);
      }
      co_return ok;
    }
    std::vector<Call> calls =
        to_every_node_staged([&](redis::Request& r) { redis_cmd::write_set_nx_px(r, key, value, ttl); });
    const Replies<redis::Reply> replies = co_await when_quorum(env_, std::move(calls), round_end(is_ok));
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      ok[i] = replies[i] && replies[i]->is_ok();
      round_errors_ += failed(replies[i]);  // with collect = "quorum", so do calls cut off
    }
    if (sentinel_) co_await rediscover_failed(replies);
    co_return ok;
  }

  // Compare-and-delete on every node; how many removed our entry (with
  // unlock = "no-wait": sent to every node, nobody known to have removed it).
  Task<std::size_t> unlock_all(const LockValue& value) {
    std::size_t removed = 0;
    if (!wait_for_unlock_) {
      for (RedisConnection& n : nodes_) n.compare_and_delete_no_reply(config_.key, value);
      co_return removed;
    }
    if (f_.fanout == Fanout::Sequential) {
      for (RedisConnection& n : nodes_) removed += RedisConnection::is_one(co_await n.compare_and_delete(config_.key, value));
      co_return removed;
    }
    std::vector<Call> calls = to_every_node([&] { return redis_cmd::compare_and_delete(config_.key, value); });
    // node-redlock v5 releases in one round that ends at a quorum for or
    // against (index.js:222-226 with retryCount 0, :326-339), redsync with
    // failFast likewise (mutex.go:117-123 through actOnPoolsAsync); the
    // others wait for every node.
    const Quorum<redis::Reply> until = f_.against != Against::Never ? round_end(is_one) : Quorum<redis::Reply>{};
    const Replies<redis::Reply> replies = co_await when_quorum(env_, std::move(calls), until);
    for (const auto& r : replies) removed += RedisConnection::is_one(r);
    if (sentinel_) co_await rediscover_failed(replies);
    co_return removed;
  }

  // node-redlock's using() / an application calling redsync's Extend(): when
  // only auto_extend of validity is left, extend; a failed extension means the
  // lock is lost, and the holder is told (its AbortSignal).
  Task<void> extend_while_held(LockValue value, std::shared_ptr<bool> held) {
    const std::string& key = config_.key;
    const Duration ttl = options_.ttl;
    while (*held) {
      const Duration wait = valid_until_ - extension_threshold() - env_.mono_now();
      if (wait > Duration::zero()) co_await env_.sleep(wait);
      if (!*held) co_return;
      if (env_.mono_now() >= valid_until_) {  // node-redlock refuses to extend an expired lock
        lose("its lock expired before it could extend it");
        co_return;
      }
      const Instant start = now();
      std::vector<Call> calls = to_every_node([&] { return redis_cmd::compare_and_pexpire(key, value, ttl); });
      // redsync's Extend waits for every reply as its Lock does (mutex.go:158-172,
      // actOnPoolsAsync); node-redlock's extend() is a round like its acquire's.
      const Replies<redis::Reply> replies = co_await when_quorum(env_, std::move(calls), round_end(is_one));
      const auto granted = static_cast<std::size_t>(
          std::count_if(replies.begin(), replies.end(), [](const auto& r) { return RedisConnection::is_one(r); }));
      if (sentinel_) co_await rediscover_failed(replies);
      if (!*held) co_return;
      const Duration validity = ttl - (now() - start) - drift();
      if (granted < quorum() || validity <= Duration::zero()) {
        lose("its extension reached " + std::to_string(granted) + " of " + std::to_string(nodes_.size()) +
             " nodes (" + std::to_string(quorum()) + " needed)");
        co_return;
      }
      valid_until_ = env_.mono_now() + validity;
      env_.note(Ev::Renewed, {.value = valid_until_.ns(),
                              .detail = "PEXPIRE on " + std::to_string(granted) + " nodes; valid for " +
                                        format_duration(validity) + " more"});
      co_await env_.yield();
    }
  }

  // node-redlock's extension, as using() runs it (v5 index.js:432-451) or an
  // application calling lock.extend(ttl) auto_extend before expiry (v4):
  //   queue():  setTimeout(extend, lock.expiration - Date.now() - threshold):
  //             the delay is read on the wall clock, then timed on the
  //             monotonic one; Node fires a delay below 1 ms after 1 ms
  //   extend(): v5 :253 / v4 :298: lock.expiration < Date.now() -> "already
  //             expired", an error; else the extend script on every server
  //             (if GET == value, SET value PX ttl) with _execute's retries
  //   v5 :256-262: a round ends at a quorum for or against; up to 11 rounds,
  //             200 +- 100 ms apart; the new expiration is the start + ttl -
  //             drift, never compared with the time
  //   v4 :302 -> _lock() :393-428: every reply awaited, expiration > now
  //             needed, and a failed try UNLOCKS every server before retrying
  //   v5 :441-449: on an error, if lock.expiration > Date.now() extend again
  //             at once, else signal.error and controller.abort()
  Task<void> node_extend_while_held(LockValue value, std::shared_ptr<bool> held) {
    const std::string& key = config_.key;
    const Duration ttl = options_.ttl;
    const bool v5 = f_.id == RedlockFlavour::NodeRedlockV5;
    while (*held) {
      co_await env_.sleep(max(Duration::ms(1), expiration_ - env_.wall_now() - extension_threshold()));
      if (!*held) co_return;
      for (;;) {  // extend(), and again while the old expiration has not passed (v5 :445-446)
        if (expiration_ < env_.wall_now()) {
          lose("Cannot extend an already-expired lock: its expiration passed " +
               format_duration(env_.wall_now() - expiration_) + " ago on its wall clock; the signal aborts");
          co_return;
        }
        const std::optional<Instant> extended = co_await node_extend_rounds(key, value, ttl, v5, held);
        if (!*held) co_return;
        if (extended) {
          expiration_ = *extended;
          valid_until_ = env_.mono_now() + (expiration_ - env_.wall_now());
          env_.note(Ev::Renewed, {.value = valid_until_.ns(),
                                  .detail = "extended until " + format_duration(expiration_ - Instant::zero()) +
                                            " on its wall clock"});
          co_await env_.yield();
          break;
        }
        if (!v5 || !(expiration_ > env_.wall_now())) {
          lose("its extension failed on every try: the signal aborts");
          co_return;
        }
      }
    }
  }

  // _execute(extendScript) with its retries: the new expiration, or nullopt
  // (ExecutionError).
  Task<std::optional<Instant>> node_extend_rounds(const std::string& key, const LockValue& value, Duration ttl, bool v5,
                                                  std::shared_ptr<bool> held) {
    const int tries = options_.retry_count ? (*options_.retry_count == kForever ? kForever : *options_.retry_count + 1)
                                           : f_.tries;
    for (int attempt = 0; tries == kForever || attempt < tries; ++attempt) {
      if (attempt > 0) co_await env_.sleep(retry_delay());
      if (!*held) co_return std::nullopt;
      const Instant start = env_.wall_now();
      std::vector<Call> calls = to_every_node([&] { return redis_cmd::compare_and_pexpire(key, value, ttl); });
      const Replies<redis::Reply> replies = co_await when_quorum(env_, std::move(calls), round_end(is_one));
      const auto granted = static_cast<std::size_t>(
          std::count_if(replies.begin(), replies.end(), [](const auto& r) { return RedisConnection::is_one(r); }));
      const Instant expiration = start + ttl - drift();
      if (granted >= quorum() && (v5 || expiration > env_.wall_now())) co_return expiration;
      if (!v5 && *held) co_await unlock_all(value);  // redlock.js:424: lock.unlock() on the failed try
    }
    co_return std::nullopt;
  }

  // How much validity is left when the lock is extended: auto_extend, or
  // using()'s automaticExtensionThreshold, 500 ms (index.js:61).
  Duration extension_threshold() const { return options_.auto_extend.value_or(Duration::ms(500)); }

  void lose(const std::string& why) {
    if (lost_) return;
    lost_ = true;
    env_.note(Ev::Lost, {.detail = why});
  }

  ClientEnv& env_;
  const LockConfig& config_;
  const RedlockOptions& options_;
  const Flavour f_;
  const bool sentinel_;  // a sentinel watches the masters
  std::vector<RedisConnection> nodes_;
  Instant valid_until_;
  Instant expiration_;  // node-redlock: the Lock's expiration, on the wall clock
  std::shared_ptr<bool> holding_;
  bool lost_ = false;
  bool using_ = false;  // node-redlock's using(): extend automatically
  std::size_t round_errors_ = 0;  // nodes that failed in the last lock_instances
  const bool wait_for_unlock_ = options_.unlock == Unlock::Wait;
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_redlock(OptionReader& r, const LockConfig& common) {
  auto o = std::make_shared<RedlockOptions>();
  o->ttl = *common.ttl;  // required: the loader checked
  if (!common.flavour.empty()) {  // the loader checked it against the registry's list; this is the same list
    const auto* known = std::find_if(std::begin(kFlavourNames), std::end(kFlavourNames),
                                     [&](const auto& n) { return n.first == common.flavour; });
    if (known == std::end(kFlavourNames)) r.fail("flavour", "\"" + common.flavour + "\" is not a flavour of redlock");
    o->flavour = known->second;
  }
  o->retry_delay = r.range("retry_delay");
  o->retry_count = r.count("retry_count", 0);
  o->request_timeout = r.duration("request_timeout", Sign::Positive);
  o->drift_factor = r.number("drift_factor");
  if (o->drift_factor && !(*o->drift_factor >= 0.0 && *o->drift_factor < 1.0))
    r.fail("drift_factor", "a fraction of the ttl, from 0 up to 1");
  o->auto_extend = r.duration("auto_extend", Sign::Positive);
  if (o->auto_extend && !parallel_flavour(o->flavour))
    r.fail("auto_extend", "only the redsync and node-redlock flavours extend a lock (" +
                              std::string(flavour_name(o->flavour)) + " has no extension)");
  o->fanout = r.choice<Fanout>("fanout", {{"sequential", Fanout::Sequential}, {"parallel", Fanout::Parallel}});
  o->collect = r.choice<Collect>("collect", {{"quorum", Collect::Quorum}, {"all", Collect::All}});
  if (o->collect && (o->fanout == Fanout::Sequential || (!o->fanout && !parallel_flavour(o->flavour))))
    r.fail("collect", "applies to a parallel fan-out (fanout = \"parallel\")");
  if (auto v = r.choice<Unlock>("unlock", {{"wait", Unlock::Wait}, {"no-wait", Unlock::NoWait}})) o->unlock = *v;
  if (auto v = r.choice<ValidityCheck>("check", {{"until", ValidityCheck::Until}, {"valid", ValidityCheck::Valid}})) {
    if (o->flavour != RedlockFlavour::Redsync)
      r.fail("check", "an option of the redsync flavour (" + std::string(flavour_name(o->flavour)) + " has no Valid())");
    o->check = *v;
  }
  o->redis_errors = r.choice<RedisErrors>("redis_errors", {{"raise", RedisErrors::Raise}, {"ignore", RedisErrors::Ignore}});
  if (o->redis_errors && o->flavour != RedlockFlavour::RedlockPy)
    r.fail("redis_errors", "an option of the redlock-py flavour (" + std::string(flavour_name(o->flavour)) + " has no MultipleRedlockException)");
  for (const char* key : {"fanout", "collect", "unlock"})
    if (r.has(key) && o->flavour == RedlockFlavour::Redisson)
      r.fail(key, "not an option of the redisson flavour (RedissonRedLock locks node by node)");
  read_redisson(r, o->redisson);
  o->redisson.lease_time = o->ttl;  // RedissonRedLock's lock(leaseTime)
  return o;
}

std::unique_ptr<Lock> make_redlock(ClientEnv& env, const LockTargets& targets, const LockConfig& config,
                                   const RedlockOptions& options) {
  if (options.flavour == RedlockFlavour::Redisson) return make_redisson_redlock(env, targets, config, options.redisson);
  return std::make_unique<Redlock>(env, targets, config, options);
}

}  // namespace locksim
