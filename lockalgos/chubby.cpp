// A Chubby client's lock (Burrows, OSDI '06, §2.4-2.8), with the master of
// sim/servers/chubby/model.cpp:
//
//   session:  open a session; send a KeepAlive at once and again as soon as
//             each is answered (the master holds it until the lease nears
//             its end, §2.8 p. 341); the local lease ends where the answer
//             said, counted from when it arrived less 1 s for its flight and
//             the master's clock (the paper gives no formula; UNCONFIRMED);
//             past it the client is in jeopardy and stops trusting its lock;
//             after the grace period (45 s) with no answer, the session is over
//   acquire:  Acquire(lock, lock-delay): the master answers when we hold it,
//             with the lock's generation number — the sequencer (§2.4)
//   release:  Release(lock): the lock is free at once (no lock-delay)
//
// Fencing token: the generation number, as a server that checks "the most
// recent sequencer it has observed" does (§2.4 p. 339). The lock-delay
// protects a server that cannot check sequencers only while the holder's
// late requests arrive within it.
#include "lockalgos/chubby.hpp"

#include "lockalgos/coordination_common.hpp"

namespace locksim {
namespace {

constexpr const char* kLock = "/ls/cell/lock";
// Taken off the lease the master's answer gives, for the answer's flight and
// the master's clock running fast (§2.8: the local lease is conservative).
constexpr Duration kAllowance = Duration::s(1);

class ChubbyLock final : public Lock {
 public:
  ChubbyLock(ClientEnv& env, const LockTargets& targets, const ChubbyOptions& options)
      : env_(env), options_(options), master_(targets.nodes.front()) {}

  Task<std::optional<Grant>> acquire() override {
    for (;;) {
      if (session_ == 0 || expired_) co_await open_session();
      coord::Request req = coord_request(coord::Op::Acquire, kLock, session_);
      req.delay = options_.lock_delay;
      // Acquire blocks at the master; a call that times out is sent again.
      const auto r = co_await env_.call_coord(master_, std::move(req), Duration::s(60));
      if (!r) continue;
      if (!r->ok) {
        expired_ = true;
        continue;
      }
      holding_ = true;
      co_return Grant{kLock, r->id, local_end_, env_.name_of(master_)};
    }
  }

  Task<bool> release(const Grant&) override {
    holding_ = false;
    const auto r = co_await env_.call_coord(master_, coord_request(coord::Op::Release, kLock, session_), Duration::s(5));
    co_return r && r->ok;
  }

  // In jeopardy (past the local lease) the client does not trust its lock;
  // once it has found its session over (and said Lost) it holds nothing.
  bool still_held() const override { return holding_ && !expired_ && env_.mono_now() < local_end_; }

 private:
  Task<void> open_session() {
    for (;;) {
      const Instant sent = env_.mono_now();
      const auto r = co_await env_.call_coord(master_, coord_request(coord::Op::Connect), Duration::s(5));
      if (r && r->ok) {
        session_ = r->id;
        expired_ = false;
        local_end_ = sent + r->ttl - kAllowance;
        env_.spawn(keep_alive(session_));
        co_return;
      }
      co_await env_.sleep(Duration::s(1));
    }
  }

  // §2.8: the next KeepAlive goes as soon as the last is answered.
  Task<void> keep_alive(std::int64_t session) {
    while (session == session_ && !expired_) {
      const Instant sent = env_.mono_now();
      const Duration wait = local_end_ + options_.grace - sent;
      if (wait <= Duration::zero()) break;
      const auto r = co_await env_.call_coord(master_, coord_request(coord::Op::Ping, "", session), wait);
      if (session != session_) co_return;
      if (!r) continue;
      if (!r->ok) break;
      local_end_ = env_.mono_now() + r->ttl - kAllowance;
    }
    if (session != session_) co_return;
    expired_ = true;
    if (holding_) env_.note(Ev::Lost, {.detail = "the session expired: no KeepAlive answered within the grace period"});
  }

  ClientEnv& env_;
  const ChubbyOptions& options_;
  ProcId master_;
  std::int64_t session_ = 0;
  bool expired_ = false;
  bool holding_ = false;
  Instant local_end_;
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_chubby(OptionReader& r, const LockConfig&) {
  auto o = std::make_shared<ChubbyOptions>();
  // §2.4 p. 339: "Clients may specify any lock-delay up to some bound, currently one minute".
  if (auto v = r.duration("lock_delay", Sign::NonNegative)) {
    if (*v > Duration::s(60)) r.fail("lock_delay", "Chubby bounds the lock-delay at one minute (Burrows 2006, §2.4)");
    o->lock_delay = *v;
  }
  if (auto v = r.duration("grace", Sign::Positive)) o->grace = *v;
  if (auto v = r.integer("first_token", 1, INT64_MAX / 2)) o->first_token = *v;
  return o;
}

std::unique_ptr<Lock> make_chubby(ClientEnv& env, const LockTargets& targets, const LockConfig&,
                                  const ChubbyOptions& options) {
  return std::make_unique<ChubbyLock>(env, targets, options);
}

}  // namespace locksim
