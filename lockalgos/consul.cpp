// Consul's lock as the Go client runs it (hashicorp/consul api/lock.go
// @32759fd6dd1d, api/session.go RenewPeriodic @deb43fea6b7c), with the
// leader of sim/servers/consul/model.cpp:
//
//   Lock():   create a session (TTL, LockDelay, Behavior, the serfHealth check)
//             and renew it in the background (lock.go:162-164) — a zero
//             LockDelay is left out of the create's body, and the agent
//             gives the session its default 15 s (flavour "http": the same
//             steps by direct HTTP calls, which send 0 as 0); then:
//     WAIT    GET the key, blocking from the last index for up to LockWaitTime
//             (15 s, lock.go:177-180, 205); held by our session: HELD
//             (:213-215); by another: block again from its index (:216-219)
//     acquire PUT ?acquire=session (:224); an error ends Lock() (:225-227)
//     refused GET again at once (:230-233); held: block on it (:237-241);
//             unheld: a lock-delay is in force, sleep LockRetryTime (5 s,
//             lock.go:29) and go to WAIT (:242-251)
//     HELD    start monitorLock and return (:254-264)
//   monitorLock: a consistent blocking GET of the key, again and again; the
//             lock is lost when the key's session is not ours or a GET fails
//             (MonitorRetries 0, lock.go:36, 81, 383-411)
//   RenewPeriodic: renew every TTL/2 (the TTL from each reply); after an error
//             retry every 1 s; a 404 ends it; it gives up once more than TTL
//             has passed since the last renew. Nothing tells Lock's caller.
//   Unlock(): PUT ?release=session (lock.go:268-302), then destroy the session
//             (RenewPeriodic's doneCh case)
//
// Fencing token: the key's LockIndex (the docs' sequencer, sessions/index.mdx
// "K/V Integration"), or its ModifyIndex (token = "modify-index"), as the
// acquire left them — what a GET right after it reads, since no one else can
// change them while we hold the key.
//
// Chosen here, not in the references: a failed Lock() (an error) ends its
// session and the application calls Lock() again after LockRetryTime; an
// HTTP call that gets no answer gives up after its wait plus 10 s (the Go
// client's default HTTP client has no timeout of its own: UNCONFIRMED how long
// a real call would hang).
#include "lockalgos/consul.hpp"

#include "lockalgos/coordination_common.hpp"

namespace locksim {
namespace {

constexpr const char* kKey = "service/lock";
constexpr Duration kLockRetryTime = Duration::s(5);      // api/lock.go:29 DefaultLockRetryTime
constexpr Duration kRenewRetry = Duration::s(1);         // session.go RenewPeriodic: waitDur = time.Second after an error
constexpr Duration kDefaultQueryTime = Duration::s(300); // a blocking GET with no WaitTime: the server's default
constexpr Duration kSlack = Duration::s(10);             // ours: how long past its wait a call may go unanswered

class ConsulLock final : public Lock {
 public:
  ConsulLock(ClientEnv& env, const LockTargets& targets, const ConsulOptions& options)
      : env_(env), options_(options), server_(targets.nodes.front()) {}

  Task<std::optional<Grant>> acquire() override {
    for (;;) {
      if (session_ == 0) co_await create_session();
      const std::optional<coord::Node> key = co_await lock_once();
      if (key) {
        holding_ = true;
        lost_ = false;
        env_.spawn(monitor_lock(session_, generation_));
        const std::int64_t token = options_.token == ConsulToken::LockIndex ? key->lock_index : key->revision;
        co_return Grant{"session " + std::to_string(session_), token, std::nullopt, env_.name_of(server_)};
      }
      // Lock() returned an error: its session is destroyed (lock.go:166-171), and we call Lock() again.
      end_session();
      co_await env_.sleep(kLockRetryTime);
    }
  }

  Task<bool> release(const Grant&) override {
    holding_ = false;
    const std::int64_t session = session_;
    end_session();
    const auto r = co_await env_.call_coord(server_, coord_request(coord::Op::KvRelease, kKey, session), kSlack);
    env_.send(server_, coord_request(coord::Op::SessionDestroy, "", session));  // RenewPeriodic's doneCh: Destroy
    co_return r && r->ok && r->id == 1;
  }

  // monitorLock closed its channel: the client knows the lock is gone.
  bool still_held() const override { return holding_ && !lost_; }

 private:
  // One Lock() on the current session: the key when held, nullopt on an error.
  Task<std::optional<coord::Node>> lock_once() {
    std::int64_t wait_index = 0;
    for (;;) {
      const auto got = co_await get(wait_index, options_.lock_wait_time);
      if (!got || !got->ok) co_return std::nullopt;  // lock.go:206-208: "failed to read lock"
      if (!got->nodes.empty() && got->nodes[0].session == session_) co_return got->nodes[0];
      if (!got->nodes.empty() && got->nodes[0].session != 0) {
        wait_index = got->id;
        continue;
      }
      const auto acq = co_await env_.call_coord(server_, coord_request(coord::Op::KvAcquire, kKey, session_), kSlack);
      if (!acq || !acq->ok) co_return std::nullopt;  // lock.go:225-227: "failed to acquire lock"
      if (acq->id == 1 && !acq->nodes.empty()) co_return acq->nodes[0];
      // lock.go:230-251: why was it refused?
      const auto why = co_await get(0, Duration::zero());
      if (!why || !why->ok) co_return std::nullopt;
      if (!why->nodes.empty() && why->nodes[0].session != 0) {
        wait_index = why->id;
        continue;
      }
      env_.note(Ev::AttemptFailed, {.detail = "the key is unheld but the acquire was refused: a lock-delay is in "
                                              "force; it tries again in " + format_duration(kLockRetryTime)});
      co_await env_.sleep(kLockRetryTime);
      wait_index = 0;
    }
  }

  // GET the key; with `index` > 0 a blocking query of up to `wait` (zero: the server's default).
  CallAwaiter<coord::Reply> get(std::int64_t index, Duration wait) {
    coord::Request req = coord_request(coord::Op::KvGet, kKey, index);
    req.ttl = wait;
    const Duration longest = index == 0 ? Duration::zero() : wait > Duration::zero() ? wait : kDefaultQueryTime;
    return env_.call_coord(server_, std::move(req), longest + longest / 16 + kSlack);
  }

  // lock.go:353-369 createSession, with the session's options; retried until it succeeds.
  Task<void> create_session() {
    for (;;) {
      coord::Request req = coord_request(coord::Op::SessionCreate);
      req.ttl = options_.session_ttl;
      req.delay = options_.session_lock_delay();
      req.id = options_.behavior == ConsulBehavior::Delete ? 1 : 0;  // the Behavior
      req.watch = options_.serf_check;
      const auto r = co_await env_.call_coord(server_, std::move(req), kSlack);
      if (r && r->ok) {
        session_ = r->id;
        env_.spawn(renew_periodic(session_, generation_));
        co_return;
      }
      co_await env_.sleep(kLockRetryTime);
    }
  }

  // The session is ours no more: renewal and monitoring stop.
  void end_session() {
    session_ = 0;
    ++generation_;
  }

  // api/session.go RenewPeriodic.
  Task<void> renew_periodic(std::int64_t session, std::uint64_t generation) {
    Duration ttl = options_.session_ttl;
    Duration wait = ttl / 2;
    Instant last = env_.mono_now();
    for (;;) {
      if (env_.mono_now() - last > ttl) co_return;  // gives up, silently
      co_await env_.sleep(wait);
      if (generation != generation_) co_return;  // doneCh: Unlock destroys the session
      const auto r = co_await env_.call_coord(server_, coord_request(coord::Op::SessionRenew, "", session), kSlack);
      if (generation != generation_) co_return;
      if (!r) {
        wait = kRenewRetry;
        continue;
      }
      if (!r->ok) co_return;  // 404: ErrSessionExpired
      ttl = r->ttl;
      wait = ttl / 2;
      last = env_.mono_now();
    }
  }

  // api/lock.go monitorLock: a consistent blocking GET until the key is not ours.
  Task<void> monitor_lock(std::int64_t session, std::uint64_t generation) {
    std::int64_t index = 0;
    for (;;) {
      const auto r = co_await get(index, Duration::zero());
      if (generation != generation_ || !holding_) co_return;
      if (r && r->ok && !r->nodes.empty() && r->nodes[0].session == session) {
        index = r->id;
        continue;
      }
      lost_ = true;
      env_.note(Ev::Lost, {.detail = r ? "monitorLock: the key's session is no longer ours"
                                       : "monitorLock: its GET of the key failed"});
      co_return;
    }
  }

  ClientEnv& env_;
  const ConsulOptions& options_;
  ProcId server_;
  std::int64_t session_ = 0;
  std::uint64_t generation_ = 0;  // one per session: its renewal and monitor stop when it changes
  bool holding_ = false;
  bool lost_ = false;
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_consul(OptionReader& r, const LockConfig& common) {
  auto o = std::make_shared<ConsulOptions>();
  if (common.flavour == "http") o->client = ConsulClient::Http;
  // agent/consul/session_endpoint.go:96: a TTL outside [session_ttl_min (10 s), 24 h] fails the create.
  if (auto v = r.duration("session_ttl", Sign::Positive)) {
    if (*v < Duration::s(10) || *v > Duration::s(24 * 3600))
      r.fail("session_ttl", "Consul refuses a session TTL outside [10s, 24h] (session_ttl_min, SessionTTLMax)");
    o->session_ttl = *v;
  }
  // Any lock-delay is accepted: the leader caps it at MaxLockDelay when it
  // applies it (agent/structs/structs.go: "Any value above this will not be
  // respected"; the state store's session delete, sim/servers/consul/model.cpp).
  if (auto v = r.duration("lock_delay", Sign::NonNegative)) o->lock_delay = *v;
  if (auto v = r.duration("lock_wait_time", Sign::Positive)) o->lock_wait_time = *v;
  if (auto v = r.choice<ConsulBehavior>("behavior", {{"release", ConsulBehavior::Release}, {"delete", ConsulBehavior::Delete}}))
    o->behavior = *v;
  if (auto v = r.choice<bool>("checks", {{"serfHealth", true}, {"none", false}})) o->serf_check = *v;
  if (auto v = r.choice<ConsulToken>("token", {{"lock-index", ConsulToken::LockIndex}, {"modify-index", ConsulToken::ModifyIndex}}))
    o->token = *v;
  if (auto v = r.integer("ttl_multiplier", 1, 10)) o->ttl_multiplier = static_cast<int>(*v);
  if (auto v = r.integer("first_token", 1, INT64_MAX / 2)) o->first_token = *v;
  return o;
}

std::unique_ptr<Lock> make_consul(ClientEnv& env, const LockTargets& targets, const LockConfig&,
                                  const ConsulOptions& options) {
  return std::make_unique<ConsulLock>(env, targets, options);
}

}  // namespace locksim
