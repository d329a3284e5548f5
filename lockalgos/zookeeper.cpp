// The ZooKeeper lock recipe (zookeeper recipes.md) as Curator's
// InterProcessMutex runs it (algorithms.md §5):
//
//   1. create lock/_c_<guid>-lock- EPHEMERAL|SEQUENTIAL
//   2. getChildren(lock), no watch
//   3. ours is the lowest: we hold the lock
//   4. else exists(the next lower node, watch): if gone go to 2, else wait for
//      the watch, then go to 2   (watch = "parent": a child watch on lock/,
//      which wakes every waiter on every change: the herd)
//   release: delete our node — delete().guaranteed(): a delete that gets no
//            answer is retried in the background for as long as the session
//            lives, or the node would block everyone behind it
//
// The session: the client pings after a third of the timeout with nothing
// sent, goes Disconnected (Curator: SUSPENDED) after 2/3 of it with nothing
// heard, and learns Expired only when the server tells it; Curator declares
// LOST one timeout (on the wall clock) after SUSPENDED. The server alone
// expires the session and deletes its ephemeral nodes. A state change wakes
// a waiter (ZooKeeper delivers it to every watcher), which looks again.
// InterProcessMutex never interrupts a holder: on_suspended = "continue"
// works on until LOST, "stop" gives up at SUSPENDED (the job sees it through
// Lock::still_held() and skips its write). Fencing token: the node's czxid.
//
// Assumes: a holder that loses its session notices before it writes — which a
// pause longer than the session timeout, or a partition, defeats.
#include <algorithm>

#include "lockalgos/zookeeper.hpp"

#include "lockalgos/coordination_common.hpp"
#include "lockalgos/wakeup.hpp"

namespace locksim {
namespace {

class ZooKeeperLock final : public Lock {
 public:
  ZooKeeperLock(ClientEnv& env, const LockTargets& targets, const ZooKeeperOptions& options)
      : env_(env), options_(options), zk_(targets.nodes.front()), watch_fired_(env) {}

  Task<std::optional<Grant>> acquire() override {
    const bool herd = options_.watch == Watch::Parent;
    std::string guid;
    std::int64_t guid_session = 0;
    for (;;) {
      if (state_ == State::Lost || session_ == 0) co_await connect();
      // A node is found again by its GUID only within the session that made
      // it: an older session's node dies with that session.
      if (guid_session != session_) {
        guid = env_.rng().hex_token(8);
        guid_session = session_;
      }
      // Find our node by its GUID (the reply to an earlier create may have been lost), or create it.
      auto children = co_await request(coord_request(coord::Op::GetChildren, "/lock", session_));
      if (!children) {
        co_await env_.sleep(Duration::ms(100));
        continue;
      }
      std::string mine;
      std::int64_t czxid = 0;
      for (const coord::Node& n : children->nodes)
        if (n.path.find(guid) != std::string::npos) {
          mine = n.path;
          czxid = n.revision;
        }
      if (mine.empty()) {
        coord::Request create = coord_request(coord::Op::Create, "/lock", session_);
        create.data = "_c_" + guid + "-lock-";
        const auto created = co_await request(std::move(create));
        if (!created || !created->ok) continue;
        mine = created->path;
        czxid = created->id;
      }
      // Steps 2-4 until ours is the lowest.
      for (;;) {
        coord::Request list = coord_request(coord::Op::GetChildren, "/lock", session_);
        list.watch = herd;
        const auto now = co_await request(std::move(list));
        if (!now || !now->ok) break;  // connection trouble: start over (and find our node again)
        const auto it = std::find_if(now->nodes.begin(), now->nodes.end(),
                                     [&](const coord::Node& n) { return n.path == mine; });
        if (it == now->nodes.end()) break;  // our node is gone (the session expired)
        if (it == now->nodes.begin()) {
          holding_ = true;
          lost_noted_ = false;
          co_return Grant{mine, czxid, std::nullopt, env_.name_of(zk_)};
        }
        if (!herd) {
          coord::Request exists = coord_request(coord::Op::Exists, std::prev(it)->path, session_);
          exists.watch = true;
          const auto pred = co_await request(std::move(exists));
          if (!pred || !pred->ok) continue;  // the predecessor is already gone: look again
        }
        co_await watch_fired_.wait();
      }
    }
  }

  Task<bool> release(const Grant& grant) override {
    holding_ = false;
    const auto r = co_await request(coord_request(coord::Op::Delete, grant.value, session_));
    if (!r) env_.spawn(delete_guaranteed(grant.value, generation_));
    co_return r && r->ok;
  }

  bool on_push(ProcId, const Payload& push) override {
    const auto* n = std::get_if<coord::Notify>(&push);
    if (!n) return false;
    stream_.gap(n->seq);
    heard();
    watch_fired_.fire();
    return true;
  }

  bool still_held() const override { return holding_ && !lost_noted_; }

 private:
  enum class State : std::uint8_t { Connected, Suspended, Lost };

  Duration read_timeout() const { return timeout_ * 2 / 3; }

  Task<void> connect() {
    if (session_ != 0) {
      // Curator closes the old handle before it opens a new one, and
      // ZooKeeper.close() ends the session: its nodes go now, not at expiry.
      const std::int64_t old = std::exchange(session_, 0);
      ++generation_;
      co_await env_.call_coord(zk_, coord_request(coord::Op::CloseSession, "", old), timeout_ / 3);
    }
    coord::Request hello = coord_request(coord::Op::Connect);
    hello.ttl = options_.session_timeout;
    for (;;) {
      last_sent_ = env_.mono_now();
      const auto r = co_await env_.call_coord(zk_, hello, options_.session_timeout);
      if (r && r->ok) {
        session_ = r->id;
        timeout_ = r->ttl;  // as the server negotiated it
        state_ = State::Connected;
        heard();
        const std::uint64_t generation = ++generation_;
        env_.spawn(heartbeat(generation));
        env_.spawn(monitor(generation));
        co_return;
      }
      co_await env_.sleep(Duration::s(1));
    }
  }

  // Every reply refreshes "last heard"; SESSION_EXPIRED means LOST. No reply
  // within a ping interval: nullopt — ZooKeeper fails a request with its
  // connection (ConnectionLoss), reconnects, and Curator's RetryLoop retries;
  // the callers here retry.
  Task<std::optional<coord::Reply>> request(coord::Request req) {
    last_sent_ = env_.mono_now();
    auto r = co_await env_.call_coord(zk_, std::move(req), timeout_ / 3);
    if (r) {
      if (stream_.gap(r->seq)) watch_fired_.fire();  // a lost message: look again (ServerStream)
      heard();
      if (!r->ok && r->error == "SESSION_EXPIRED") lose(State::Lost, "the server says its session has expired");
    }
    co_return r;
  }

  void heard() {
    last_heard_ = env_.mono_now();
    if (state_ == State::Suspended) state_ = State::Connected;  // reconnected in time
  }

  // Curator's FailedDeleteManager: retry until the server answers at all
  // (deleted, already gone, or the session expired and took the node with it).
  Task<void> delete_guaranteed(std::string path, std::uint64_t generation) {
    while (generation == generation_ && state_ != State::Lost) {
      co_await env_.sleep(Duration::s(1));
      if (generation != generation_) co_return;
      const auto answered = co_await request(coord_request(coord::Op::Delete, path, session_));
      if (answered) co_return;
    }
  }

  // A ping once the connection has been idle (nothing sent) for a third of
  // the timeout: readTimeout / 2 in ClientCnxn. A lost ping does not hold up
  // the next one.
  Task<void> heartbeat(std::uint64_t generation) {
    while (generation == generation_ && state_ != State::Lost) {
      const Duration idle = env_.mono_now() - last_sent_;
      if (idle < timeout_ / 3) co_await env_.sleep(timeout_ / 3 - idle);
      else co_await request(coord_request(coord::Op::Ping, "", session_));
    }
  }

  // Connected -> SUSPENDED after read_timeout of silence -> LOST one timeout
  // later on the wall clock (Curator's ConnectionStateManager).
  Task<void> monitor(std::uint64_t generation) {
    while (generation == generation_ && state_ != State::Lost) {
      if (state_ == State::Connected) {
        const Duration silent = env_.mono_now() - last_heard_;
        if (silent < read_timeout()) {
          co_await env_.sleep(read_timeout() - silent);
          continue;
        }
        suspended_wall_ = env_.wall_now();
        lose(State::Suspended, "nothing heard from the ensemble for " + format_duration(silent) + ": SUSPENDED");
        continue;
      }
      const Duration left = *suspended_wall_ + timeout_ - env_.wall_now();
      if (left > Duration::zero()) {
        co_await env_.sleep(left);
        continue;
      }
      if (state_ == State::Suspended) lose(State::Lost, "SUSPENDED for a whole session timeout: LOST");
    }
  }

  void lose(State to, const std::string& why) {
    const State before = state_;
    if (to == State::Lost) state_ = State::Lost;
    else if (state_ == State::Connected) state_ = State::Suspended;
    // Disconnected and Expired reach every watcher: a waiter wakes and looks again.
    if (state_ != before) watch_fired_.fire();
    const bool gives_up = to == State::Lost || options_.on_suspended == OnSuspended::Stop;
    if (holding_ && gives_up && !lost_noted_) {
      lost_noted_ = true;
      env_.note(Ev::Lost, {.detail = why});
    }
  }

  ClientEnv& env_;
  const ZooKeeperOptions& options_;
  ProcId zk_;
  ClientWakeup watch_fired_;
  ServerStream stream_;
  std::int64_t session_ = 0;
  Duration timeout_ = Duration::s(10);
  State state_ = State::Lost;
  Instant last_heard_;
  Instant last_sent_;
  std::optional<Instant> suspended_wall_;
  std::uint64_t generation_ = 0;
  bool holding_ = false;
  bool lost_noted_ = false;
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_zookeeper(OptionReader& r, const LockConfig&) {
  auto o = std::make_shared<ZooKeeperOptions>();
  if (auto v = r.integer("first_token", 0, INT64_MAX / 2)) o->first_token = *v;
  if (auto v = r.duration("session_timeout", Sign::Positive)) o->session_timeout = *v;
  if (auto v = r.duration("tick_time", Sign::Positive)) o->tick_time = *v;
  if (auto v = r.choice<OnSuspended>("on_suspended", {{"continue", OnSuspended::Continue}, {"stop", OnSuspended::Stop}}))
    o->on_suspended = *v;
  if (auto v = r.choice<Watch>("watch", {{"predecessor", Watch::Predecessor}, {"parent", Watch::Parent}})) o->watch = *v;
  return o;
}

std::unique_ptr<Lock> make_zookeeper(ClientEnv& env, const LockTargets& targets, const LockConfig&,
                                     const ZooKeeperOptions& options) {
  return std::make_unique<ZooKeeperLock>(env, targets, options);
}

}  // namespace locksim
