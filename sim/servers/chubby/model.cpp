// The Chubby server model (Burrows, "The Chubby lock service for
// loosely-coupled distributed systems", OSDI '06): the cell's master as one
// process. Sessions live by a lease the master extends when it answers a
// KeepAlive, which it holds until the lease is close to its end (§2.8 p. 341:
// "The default extension is 12s"); a lock's generation number rises each time
// it goes from free to held (§2.3 p. 338) and is the sequencer (§2.4 p. 339);
// a lock freed because its holder's session expired stays unclaimable for
// the holder's lock-delay, at most one minute, while a normal release frees
// it at once (§2.4 p. 339). Acquire blocks: the answer is the grant.
//
// Not in the paper, so chosen here (docs/algorithms-coordination.md, Chubby):
// the master answers a held KeepAlive 1 s before the lease ends, and answers
// it even if the client has crashed since; lock-delay runs from the moment the
// master expires the session. Fail-over (the new master's epoch and lease
// extension, §2.9) is not modelled: a restart keeps sessions and locks and
// gives every session a whole lease from now.
#include <deque>
#include <map>
#include <set>

#include "sim/servers/coordination_server.hpp"
#include "sim/servers/table.hpp"

namespace locksim {

namespace {

using coord::Op;
using coord::Reply;
using coord::Request;

constexpr Duration kLease = Duration::s(12);          // §2.8: the default extension
constexpr Duration kReplyMargin = Duration::s(1);     // a held KeepAlive is answered this long before the lease ends

class ChubbyServer final : public CoordinationServer {
 public:
  ChubbyServer(World& world, std::string name, const ClockSpec& clock, std::int64_t first_generation)
      : CoordinationServer(world, std::move(name), clock), first_generation_(first_generation) {}

 protected:
  // A crash stops every timer, the lock-delays' too: a free lock with
  // waiters is handed on again from the restart (else they wait forever —
  // explore found it).
  void on_restart() override {
    for (auto& [id, s] : sessions_) extend(id, s);
    for (auto& [path, l] : locks_)
      if (l.holder == 0 && !l.waiters.empty()) spawn(grant_waiter(path, max(l.free_after, mono_now())));
  }

 private:
  struct Session {
    ProcId client;
    Instant lease_end;  // on our monotonic clock
  };
  struct Lock {
    std::int64_t generation = 0;
    std::int64_t holder = 0;  // session; 0: free
    ProcId owner = kNoProc;   // the holder's client (a trace annotation)
    Instant free_after;       // no claim before this (lock-delay)
    std::deque<std::pair<std::int64_t, Held>> waiters;  // session, its held Acquire
  };

  Reply handle(const Request& req, ProcId from) override {
    if (req.op == Op::Connect) {
      const std::int64_t id = next_session_++;
      Session& s = sessions_[id] = Session{from, Instant::zero()};
      extend(id, s);
      Reply r;
      r.id = id;
      r.ttl = kLease;
      return r;
    }
    auto it = sessions_.find(req.id);
    if (it == sessions_.end()) return error("SESSION_EXPIRED");
    switch (req.op) {
      case Op::Ping:
        spawn(keep_alive(hold(), req.id));
        return {};
      case Op::Acquire:
        return acquire(req);
      case Op::Release: {
        Lock& l = locks_[req.path];
        if (l.holder != req.id) return error("NOT_HELD");
        note(Ev::KeyDeleted, {.peer = from, .owner = l.owner, .key = req.path});
        free_lock(req.path, mono_now());  // a normal release: available at once
        return {};
      }
      default:
        return error("UNIMPLEMENTED");
    }
  }

  Reply acquire(const Request& req) {
    Lock& l = locks_[req.path];
    // §2.4: "Clients may specify any lock-delay up to some bound, currently
    // one minute": the bound is the client's to keep (the loader refuses
    // more: lockalgos/chubby.cpp, parse_chubby), so the server takes it as asked.
    lock_delay_[{req.path, req.id}] = req.delay;
    if (l.holder == req.id) return grant_reply(l);
    // A session asks again after its call timed out: its newer request waits
    // in its place; a waiter whose session has ended waits no more.
    std::erase_if(l.waiters, [&](const auto& w) { return w.first == req.id || !sessions_.count(w.first); });
    if (l.holder == 0 && l.waiters.empty() && mono_now() >= l.free_after) {
      take(req.path, l, req.id);
      return grant_reply(l);
    }
    l.waiters.emplace_back(req.id, hold());
    return {};
  }

  static Reply grant_reply(const Lock& l) {
    Reply r;
    r.id = l.generation;
    return r;
  }

  void take(const std::string& path, Lock& l, std::int64_t session) {
    if (l.generation == 0) l.generation = first_generation_ - 1;
    ++l.generation;  // §2.3: increases when the lock goes from free to held
    l.holder = session;
    l.owner = sessions_.at(session).client;
    note_holder(path, l.owner);
  }

  // The lock's holder, stated in the trace when it changes (Ev::Holder, for
  // the judge): a session that holds it (§2.3); a lock in its lock-delay is
  // held by nobody (§2.4: it is free, only unclaimable).
  void note_holder(const std::string& path, ProcId client) {
    std::string why;
    if (detailed()) why = client == kNoProc ? "no session holds it" : "a session of the owner's holds it";
    note(Ev::Holder, {.owner = client, .key = path, .detail = std::move(why)});
  }

  // The lock is free from `after` on: the first waiter whose session lives gets it then.
  void free_lock(const std::string& path, Instant after) {
    Lock& l = locks_[path];
    l.holder = 0;
    l.owner = kNoProc;
    l.free_after = after;
    note_holder(path, kNoProc);
    spawn(grant_waiter(path, after));
  }

  Task<void> grant_waiter(std::string path, Instant after) {
    if (after > mono_now()) co_await sleep(after - mono_now());
    Lock& l = locks_[path];
    if (l.holder != 0 || mono_now() < l.free_after) co_return;
    while (!l.waiters.empty()) {
      auto [session, held] = std::move(l.waiters.front());
      l.waiters.pop_front();
      if (!sessions_.count(session)) continue;
      take(path, l, session);
      answer(held, grant_reply(l));
      co_return;
    }
  }

  // §2.8: the master holds a KeepAlive until the lease is close to its end,
  // then extends the lease and answers with what remains.
  // The session may have ended before this coroutine starts: a pause of the
  // master between the Ping and its start lets the lease's expiry run first.
  // Then nothing is held: the KeepAlive hears SESSION_EXPIRED at once.
  Task<void> keep_alive(Held held, std::int64_t session) {
    const Duration hold_for = until_keep_alive_answer(session);
    if (hold_for > Duration::zero()) co_await sleep(hold_for);
    auto it = sessions_.find(session);
    if (it == sessions_.end()) {
      answer(held, error("SESSION_EXPIRED"));
      co_return;
    }
    extend(session, it->second);
    Reply r;
    r.id = session;
    r.ttl = kLease;
    answer(held, std::move(r));
  }

  // How long a KeepAlive of `session` is held from now: until kReplyMargin
  // before its lease ends; zero for a session that has ended.
  Duration until_keep_alive_answer(std::int64_t session) const {
    const auto it = sessions_.find(session);
    if (it == sessions_.end()) return Duration::zero();
    return max(it->second.lease_end - kReplyMargin - mono_now(), Duration::zero());
  }

  void extend(std::int64_t id, Session& s) {
    s.lease_end = mono_now() + kLease;
    spawn(expire_at(id, s.lease_end));
  }

  Task<void> expire_at(std::int64_t id, Instant at) {
    co_await sleep(at - mono_now());
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.lease_end != at) co_return;  // extended since
    sessions_.erase(it);
    for (auto& [path, l] : locks_) {
      if (l.holder != id) continue;
      // §2.4: a lock freed because its holder failed stays unclaimable for the lock-delay.
      const Duration delay = lock_delay_[{path, id}];
      note(Ev::Expired, {.owner = l.owner, .key = path,
                         .detail = "because its session's lease ended; the lock-delay keeps it from others for " +
                                   format_duration(delay)});
      free_lock(path, mono_now() + delay);
    }
  }

  std::int64_t first_generation_;
  std::int64_t next_session_ = 1;
  std::map<std::int64_t, Session> sessions_;
  std::map<std::string, Lock> locks_;
  std::map<std::pair<std::string, std::int64_t>, Duration> lock_delay_;  // (lock, session): as it asked
};

Process& build(ServiceBuild& b, std::size_t i) {
  const NodeConfig& n = b.nodes[i];
  return b.world.add<ChubbyServer>(n.name, n.clock, b.setup.first_token);
}

}  // namespace

const ServerModel kChubbyServer{.kind = ServerKind::Chubby, .name = "chubby", .node_prefix = "chubby", .build = build};

}  // namespace locksim
