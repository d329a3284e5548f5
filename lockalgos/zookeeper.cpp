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
// The session (ZooKeeper 3.9.3 ClientCnxn, Curator 5.9.0): the client's send
// loop pings by ClientCnxn's rule (readTimeout/2 minus what was idle, a second
// early once more than a second idle, or after 10 s idle), goes Disconnected
// (Curator: SUSPENDED) after readTimeout = 2/3 of the timeout with nothing
// heard, and declares Expired itself 4/3 of the timeout after it last heard
// (3.9.3's client-side expiry; "3.9.2" and older learn it only from the
// server); Curator also declares LOST one timeout (wall clock) after
// SUSPENDED, whichever is first. After LOST it opens a new session without
// closing the old one: the server alone expires the session and deletes its
// ephemeral nodes. A state change wakes
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

// MAX_SEND_PING_INTERVAL (ZooKeeper 3.9.3 ClientCnxn.java:1184).
constexpr Duration kMaxSendPingInterval = Duration::s(10);

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
        if (state_ == State::Lost) break;  // a new session, and a new node in it
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
    send_loop_pass();
    watch_fired_.fire();
    return true;
  }

  bool still_held() const override { return holding_ && !lost_noted_; }

 private:
  enum class State : std::uint8_t { Connected, Suspended, Lost };

  // In whole milliseconds, as Java computes them: readTimeout = T*2/3 and
  // expirationTimeout = T*4/3 (ZooKeeper 3.9.3 ClientCnxn.java:1430-1432).
  Duration read_timeout() const { return Duration::ms(timeout_.whole_ms() * 2 / 3); }
  Duration expiration_timeout() const { return Duration::ms(timeout_.whole_ms() * 4 / 3); }

  Task<void> connect() {
    if (session_ != 0) {
      // After LOST the old handle is already CLOSED, so Curator's
      // closeAndReset() -> ZooKeeper.close() sends nothing ("Close called on
      // already closed client", ZooKeeper 3.9.3 ZooKeeper.java:1216-1220;
      // Curator 5.9.0 HandleHolder.java:117): the old session, and its lock
      // node, live until the server expires it.
      session_ = 0;
      ++generation_;
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
        ping_at_ = Instant::never();
        send_loop_pass();
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
    send_loop_pass();  // a queued packet wakes the send loop
    auto r = co_await env_.call_coord(zk_, std::move(req), timeout_ / 3);
    if (r) {
      if (stream_.gap(r->seq)) watch_fired_.fire();  // a lost message: look again (ServerStream)
      heard();
      send_loop_pass();  // so does a packet read
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

  // One pass of ClientCnxn's send loop, run whenever the loop would wake (its
  // timer, a packet read, a packet queued) — ZooKeeper 3.9.3
  // ClientCnxn.java:1263-1273:
  //   timeToNextPing = readTimeout/2 - idleSend - (idleSend > 1000 ? 1000 : 0)
  //   if (timeToNextPing <= 0 || idleSend > MAX_SEND_PING_INTERVAL) sendPing()
  //   else to = min(to, timeToNextPing)
  // An idle connection whose ping replies come within a second so pings every
  // readTimeout/2; a loop woken more than a second idle pings up to 1 s early.
  // A lost ping does not hold up the next one.
  void send_loop_pass() {
    if (state_ == State::Lost || session_ == 0) return;
    const Instant now = env_.mono_now();
    // The loop checks expiry before it pings (ClientCnxn.java:1244-1252):
    // past the expiration timeout the session is closed, not pinged. (Past
    // readTimeout alone it would drop the connection and reconnect, which
    // touches the session as a ping does: the ping stands for that here.)
    if (options_.client == ZkClient::V3_9_3 && now - last_heard_ >= expiration_timeout()) return;
    const Duration idle_send = now - last_sent_;
    Duration next = read_timeout() / 2 - idle_send - (idle_send > Duration::s(1) ? Duration::s(1) : Duration::zero());
    if (next <= Duration::zero() || idle_send > kMaxSendPingInterval) {
      last_sent_ = now;
      env_.spawn(ping(generation_));
      next = read_timeout() / 2;
    }
    // select(to): the loop's timer is the earliest it was ever set to.
    if (now + next < ping_at_ || ping_at_ <= now) {
      ping_at_ = now + next;
      env_.spawn(send_loop_timer(generation_, ping_at_));
    }
  }

  Task<void> send_loop_timer(std::uint64_t generation, Instant at) {
    co_await env_.sleep(at - env_.mono_now());
    if (generation == generation_ && ping_at_ == at) send_loop_pass();
  }

  Task<void> ping(std::uint64_t generation) {
    if (generation != generation_) co_return;
    auto r = co_await env_.call_coord(zk_, coord_request(coord::Op::Ping, "", session_), timeout_ / 3);
    if (!r || generation != generation_) co_return;
    if (stream_.gap(r->seq)) watch_fired_.fire();
    heard();
    if (!r->ok && r->error == "SESSION_EXPIRED") lose(State::Lost, "the server says its session has expired");
    send_loop_pass();
  }

  // Connected -> SUSPENDED after read_timeout of silence -> LOST at the
  // earlier of ZooKeeper 3.9.3's client-side expiry, expirationTimeout after
  // it last heard on the monotonic clock (ClientCnxn.java:1244-1252), and
  // Curator's one timeout after SUSPENDED on the wall clock (Curator 5.9.0
  // ConnectionStateManager.java:237-301).
  Task<void> monitor(std::uint64_t generation) {
    while (generation == generation_ && state_ != State::Lost) {
      if (state_ == State::Connected) {
        const Duration silent = env_.mono_now() - last_heard_;
        if (silent < read_timeout()) {
          co_await env_.sleep(read_timeout() - silent);
          continue;
        }
        // Woken past the expiration timeout (after a pause), the loop closes
        // the session before it would drop the connection (ClientCnxn.java:1244-1258).
        if (options_.client == ZkClient::V3_9_3 && silent >= expiration_timeout()) {
          env_.spawn(client_expired(generation));
          co_return;
        }
        suspended_wall_ = env_.wall_now();
        lose(State::Suspended, "nothing heard from the ensemble for " + format_duration(silent) + ": SUSPENDED");
        continue;
      }
      const Duration curator_left = *suspended_wall_ + timeout_ - env_.wall_now();
      const Duration client_left = options_.client == ZkClient::V3_9_3
                                       ? last_heard_ + expiration_timeout() - env_.mono_now()
                                       : Duration::max();
      if (curator_left > Duration::zero() && client_left > Duration::zero()) {
        co_await env_.sleep(min(curator_left, client_left));
        continue;
      }
      if (state_ != State::Suspended) continue;
      if (client_left <= Duration::zero()) {
        // The send thread closes the session; the Expired event reaches
        // Curator through the event thread: an application thread woken at
        // the same moment (after a pause) may act first.
        env_.spawn(client_expired(generation));
        co_return;
      } else {
        lose(State::Lost, "SUSPENDED for a whole session timeout: LOST");
      }
    }
  }

  Task<void> client_expired(std::uint64_t generation) {
    if (generation == generation_ && state_ != State::Lost)
      lose(State::Lost, "nothing heard for 4/3 of the session timeout: the client expires its session itself, LOST");
    co_return;
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
  Instant ping_at_ = Instant::never();  // when the send loop's timer fires
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
  if (auto v = r.choice<ZkClient>("client", {{"3.9.3", ZkClient::V3_9_3}, {"3.9.2", ZkClient::V3_9_2}})) o->client = *v;
  if (auto v = r.choice<Watch>("watch", {{"predecessor", Watch::Predecessor}, {"parent", Watch::Parent}})) o->watch = *v;
  return o;
}

std::unique_ptr<Lock> make_zookeeper(ClientEnv& env, const LockTargets& targets, const LockConfig&,
                                     const ZooKeeperOptions& options) {
  return std::make_unique<ZooKeeperLock>(env, targets, options);
}

}  // namespace locksim
