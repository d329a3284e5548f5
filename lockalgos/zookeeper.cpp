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
// The session (ZooKeeper release-3.9.3 ClientCnxn, Curator 5.9.0): the
// client's send loop pings by ClientCnxn's rule (readTimeout/2 minus what was
// idle, a second early once more than a second idle, or after 10 s idle).
// After readTimeout = 2/3 of the timeout with nothing heard it drops the
// connection: Disconnected (Curator: SUSPENDED), and it sends no more pings.
// It reconnects to its one server after the host provider's 1 s spin and a
// random sleep of up to a second, and only the server's answer to that
// connect says whether the session lives (RECONNECTED) or has expired (LOST);
// a connect that gets no answer waits out the connect timeout (T / number of
// servers), its SYN retransmitted meanwhile, and the next one follows after
// the same sleeps. The 3.9.3 client expires its session itself once it has
// heard nothing for 4/3 of the timeout — but checks only when its loop runs:
// at a wake-up while connected, right after starting a connect, and when a
// connect times out ("3.9.2" and older learn it only from the server).
// Curator also declares LOST one timeout (wall clock) after SUSPENDED,
// whichever is first. After LOST it opens a new session without closing the
// old one: the server alone expires the session and deletes its ephemeral
// nodes. A state change wakes a waiter (ZooKeeper delivers it to every
// watcher), which looks again.
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

// ZooKeeper release-3.9.3 ClientCnxn.java, SendThread.run:1179-1340.
constexpr Duration kMaxSendPingInterval = Duration::s(10);  // MAX_SEND_PING_INTERVAL, :1185
// hostProvider.next(1000) (:1198): with one server, every connect after the
// handle's first sleeps this long (StaticHostProvider.java:349-366).
constexpr Duration kHostProviderSpin = Duration::s(1);
// A connect whose SYN gets no answer is retransmitted by the kernel after 1 s,
// then after each doubled wait (RFC 6298 §2.1 and §5.5; Linux TCP_TIMEOUT_INIT),
// while the client's connect timeout lasts.
constexpr Duration kSynRetransmit = Duration::s(1);

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
    // Disconnected, the socket is closed and nothing is read from it; the
    // watches are set again on reconnecting (SetWatches), and a waiter looks
    // again then.
    if (state_ == State::Suspended) return true;
    stream_.gap(n->seq);
    heard();
    send_loop_pass();
    watch_fired_.fire();
    return true;
  }

  bool still_held() const override { return holding_ && !lost_noted_; }

 private:
  // Connected; Suspended: Disconnected, reconnecting (Curator's SUSPENDED);
  // Lost: no session (expired, or none yet).
  enum class State : std::uint8_t { Connected, Suspended, Lost };

  // In whole milliseconds, as Java computes them: readTimeout = T*2/3,
  // expirationTimeout = T*4/3 and connectTimeout = T / servers, one here
  // (ClientCnxn.java:1446-1448 at release-3.9.3).
  Duration read_timeout() const { return Duration::ms(timeout_.whole_ms() * 2 / 3); }
  Duration expiration_timeout() const { return Duration::ms(timeout_.whole_ms() * 4 / 3); }
  Duration connect_timeout() const { return Duration::ms(timeout_.whole_ms()); }

  // A new handle, and with it a new session.
  Task<void> connect() {
    if (session_ != 0) {
      // After LOST the old handle is already CLOSED, so Curator's
      // closeAndReset() -> ZooKeeper.close() sends nothing ("Close called on
      // already closed client", ZooKeeper.java:1218-1222 at release-3.9.3;
      // Curator 5.9.0 HandleHolder.java:117): the old session, and its lock
      // node, live until the server expires it.
      session_ = 0;
      ++generation_;
    }
    coord::Request hello = coord_request(coord::Op::Connect);
    hello.ttl = options_.session_timeout;
    // A handle's first connect goes at once; after a failed one the host
    // provider spins 1 s, and startConnect adds no random sleep until a
    // connection has been made (isFirstConnect, ClientCnxn.java:1011, 1136).
    for (bool first = true;; first = false) {
      if (!first) co_await env_.sleep(kHostProviderSpin);
      last_sent_ = env_.mono_now();
      const auto r = co_await connect_attempt(hello, Duration::ms(options_.session_timeout.whole_ms()));
      if (r && r->ok) {
        session_ = r->id;
        ++generation_;
        connected(r->ttl);
        co_return;
      }
    }
  }

  // One connect: the request, sent again as the kernel retransmits its SYN
  // while no answer comes, until `limit` has passed since it began (the
  // select in doTransport, ClientCnxn.java:1242, 1291). The reply, or none:
  // refused (the server is down: at once) or timed out.
  Task<std::optional<coord::Reply>> connect_attempt(coord::Request hello, Duration limit) {
    const Instant give_up = env_.mono_now() + limit;
    Duration wait = kSynRetransmit;
    for (;;) {
      const Instant until = min(env_.mono_now() + wait, give_up);
      auto r = co_await env_.call_coord(zk_, hello, until - env_.mono_now());
      if (r) co_return r;
      if (env_.mono_now() < until || env_.mono_now() >= give_up) co_return std::nullopt;
      wait = wait * 2;
    }
  }

  // onConnected (ClientCnxn.java:1423-1465): the session's negotiated timeout,
  // a fresh connection, and the send loop on it.
  void connected(Duration negotiated) {
    timeout_ = negotiated;
    state_ = State::Connected;
    ++connection_;
    heard();
    ping_at_ = Instant::never();
    send_loop_pass();
    env_.spawn(monitor(connection_));
  }

  // ConnectionTimeoutException, or a connection the server closed: the
  // connection drops (cleanAndNotifyState, ClientCnxn.java:1311, 1342-1348),
  // the client is Disconnected and reconnects.
  void disconnect(const std::string& why) {
    ++connection_;
    disconnected_at_ = env_.mono_now();
    if (state_ == State::Connected) {
      state_ = State::Suspended;
      suspended_wall_ = env_.wall_now();
      env_.spawn(curator_lost(++suspended_epoch_));
      watch_fired_.fire();  // Disconnected reaches every watcher: a waiter wakes and looks again
      if (options_.on_suspended == OnSuspended::Stop) tell_lost(why);
    }
    env_.spawn(reconnect(connection_));
  }

  // SendThread.run after a disconnect, with one server: next(1000) spins 1 s
  // (:1198), startConnect sleeps nextLong(1000) ms (:1136-1142), then the
  // loop checks the client's own expiry (:1245-1254) before the connect goes
  // out. The ConnectRequest names the session (:1012-1013); the server
  // touches it and answers, or answers timeout 0 for an expired one, which
  // the client takes as Expired (onConnected, :1429-1439). A connect with no
  // answer ends at connectTimeout, and the loop checks the expiry again
  // (:1240-1254); one refused fails at once, and the next comes after the
  // same sleeps.
  Task<void> reconnect(std::uint64_t connection) {
    coord::Request hello = coord_request(coord::Op::Connect, "", session_);
    hello.ttl = options_.session_timeout;
    for (;;) {
      co_await env_.sleep(kHostProviderSpin);
      if (connection != connection_) co_return;
      co_await env_.sleep(reconnect_sleep());
      if (connection != connection_) co_return;
      if (client_expiry_due()) {
        expire_itself();
        co_return;
      }
      last_sent_ = env_.mono_now();
      const auto r = co_await connect_attempt(hello, connect_timeout());
      if (connection != connection_) co_return;
      if (r && r->ok) {
        connected(r->ttl);
        co_return;
      }
      if (r) {
        lose_session("it reconnects " + format_duration(env_.mono_now() - disconnected_at_) +
                     " after its connection dropped and is told its session has expired: LOST");
        co_return;
      }
      if (env_.mono_now() - last_sent_ >= connect_timeout() && client_expiry_due()) {
        expire_itself();
        co_return;
      }
    }
  }

  // startConnect's random sleep before every connect but a handle's first:
  // ThreadLocalRandom.nextLong(1000), whole milliseconds in [0, 999]
  // (ClientCnxn.java:1136-1142), drawn from the client's own stream; the
  // scenario's reconnect_jitter pins it.
  Duration reconnect_sleep() {
    if (options_.reconnect_jitter) return options_.reconnect_jitter->draw(env_.rng());
    return Duration::ms(env_.rng().between(0, 999));
  }

  // 3.9.3's client-side expiry: nothing heard for expirationTimeout (:1245).
  bool client_expiry_due() const {
    return options_.client == ZkClient::V3_9_3 && env_.mono_now() - last_heard_ >= expiration_timeout();
  }

  // The send thread closes the session itself; the Expired event reaches
  // Curator through the event thread: an application thread woken at the
  // same moment (after a pause) may act first.
  void expire_itself() {
    ++connection_;
    env_.spawn(client_expired(generation_));
  }

  Task<void> client_expired(std::uint64_t generation) {
    if (generation == generation_ && state_ != State::Lost)
      lose_session("nothing heard for 4/3 of the session timeout: the client expires its session itself, LOST");
    co_return;
  }

  // Every reply on the current connection refreshes "last heard". Disconnected,
  // a packet waits for a connection that is not there (Curator's RetryLoop
  // blocks until there is one): none is sent, and the callers retry. No reply
  // within a ping interval, or one that came on a connection since dropped:
  // nullopt (ConnectionLoss); the callers retry. SESSION_EXPIRED: the server
  // closes the connection of an expired session, and the client reconnects
  // to hear it.
  Task<std::optional<coord::Reply>> request(coord::Request req) {
    if (state_ == State::Suspended) co_return std::nullopt;
    const std::uint64_t connection = connection_;
    last_sent_ = env_.mono_now();
    send_loop_pass();  // a queued packet wakes the send loop
    auto r = co_await env_.call_coord(zk_, std::move(req), timeout_ / 3);
    if (connection != connection_ && state_ != State::Lost) co_return std::nullopt;
    if (r) {
      if (stream_.gap(r->seq)) watch_fired_.fire();  // a lost message: look again (ServerStream)
      heard();
      send_loop_pass();  // so does a packet read
      if (expired(*r)) disconnect("the server closed its connection: SUSPENDED");
    }
    co_return r;
  }

  bool expired(const coord::Reply& r) const { return state_ == State::Connected && !r.ok && r.error == "SESSION_EXPIRED"; }

  void heard() { last_heard_ = env_.mono_now(); }

  // Curator's FailedDeleteManager: retry until the server answers at all
  // (deleted, already gone, or the session expired and took the node with it),
  // or the session is lost (its ephemeral node goes with it).
  Task<void> delete_guaranteed(std::string path, std::uint64_t generation) {
    while (generation == generation_ && state_ != State::Lost) {
      co_await env_.sleep(Duration::s(1));
      if (generation != generation_ || state_ == State::Lost) co_return;
      const auto answered = co_await request(coord_request(coord::Op::Delete, path, session_));
      if (answered) co_return;
    }
  }

  // One pass of ClientCnxn's send loop while connected, run whenever the
  // loop would wake (its timer, a packet read, a packet queued) —
  // ClientCnxn.java:1261-1276 at release-3.9.3:
  //   timeToNextPing = readTimeout/2 - idleSend - (idleSend > 1000 ? 1000 : 0)
  //   if (timeToNextPing <= 0 || idleSend > MAX_SEND_PING_INTERVAL) sendPing()
  //   else to = min(to, timeToNextPing)
  // An idle connection whose ping replies come within a second so pings every
  // readTimeout/2; a loop woken more than a second idle pings up to 1 s early.
  // A lost ping does not hold up the next one.
  void send_loop_pass() {
    if (state_ != State::Connected) return;
    const Instant now = env_.mono_now();
    // The loop checks before it pings (:1240-1260): past readTimeout it drops
    // the connection (monitor), past the expiration timeout it closes the
    // session; it pings in neither case.
    if (now - last_heard_ >= read_timeout()) return;
    const Duration idle_send = now - last_sent_;
    Duration next = read_timeout() / 2 - idle_send - (idle_send > Duration::s(1) ? Duration::s(1) : Duration::zero());
    if (next <= Duration::zero() || idle_send > kMaxSendPingInterval) {
      last_sent_ = now;
      env_.spawn(ping(connection_));
      next = read_timeout() / 2;
    }
    // select(to): the loop's timer is the earliest it was ever set to.
    if (now + next < ping_at_ || ping_at_ <= now) {
      ping_at_ = now + next;
      env_.spawn(send_loop_timer(connection_, ping_at_));
    }
  }

  Task<void> send_loop_timer(std::uint64_t connection, Instant at) {
    co_await env_.sleep(at - env_.mono_now());
    if (connection == connection_ && ping_at_ == at) send_loop_pass();
  }

  Task<void> ping(std::uint64_t connection) {
    if (connection != connection_) co_return;
    auto r = co_await env_.call_coord(zk_, coord_request(coord::Op::Ping, "", session_), timeout_ / 3);
    if (!r || connection != connection_) co_return;
    if (stream_.gap(r->seq)) watch_fired_.fire();
    heard();
    if (expired(*r)) {
      disconnect("the server closed its connection: SUSPENDED");
      co_return;
    }
    send_loop_pass();
  }

  // The send loop's checks while connected, at its wake-ups: nothing heard
  // for readTimeout drops the connection (:1240, 1254-1260); woken past the
  // expiration timeout (after a pause), the 3.9.3 loop closes the session
  // first (:1245-1254). The loop reads whatever has arrived before it checks
  // (doTransport, ClientCnxnSocketNIO.java:332-352): what is due at the same
  // instant (messages held by a pause) is handled first.
  Task<void> monitor(std::uint64_t connection) {
    while (connection == connection_) {
      const Duration silent = env_.mono_now() - last_heard_;
      if (silent < read_timeout()) {
        co_await env_.sleep(read_timeout() - silent);
        co_await env_.yield();
        continue;
      }
      if (client_expiry_due()) {
        expire_itself();
      } else {
        disconnect("nothing heard from the ensemble for " + format_duration(silent) + ": SUSPENDED");
      }
      co_return;
    }
  }

  // Curator's ConnectionStateManager.processEvents polls until SUSPENDED has
  // lasted the negotiated timeout on the wall clock, then injects Expired:
  // LOST (Curator 5.9.0 ConnectionStateManager.java:237-310).
  Task<void> curator_lost(std::uint64_t epoch) {
    while (state_ == State::Suspended && epoch == suspended_epoch_) {
      const Duration left = *suspended_wall_ + timeout_ - env_.wall_now();
      if (left > Duration::zero()) {
        co_await env_.sleep(left);
        continue;
      }
      lose_session("SUSPENDED for a whole session timeout: LOST");
    }
  }

  // Expired: the handle is closed, and Curator says LOST.
  void lose_session(const std::string& why) {
    if (state_ == State::Lost) return;
    state_ = State::Lost;
    ++connection_;
    watch_fired_.fire();  // Expired reaches every watcher too
    tell_lost(why);
  }

  // The application, told SUSPENDED (on_suspended = "stop") or LOST, gives the lock up.
  void tell_lost(const std::string& why) {
    if (!holding_ || lost_noted_) return;
    lost_noted_ = true;
    env_.note(Ev::Lost, {.detail = why});
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
  Instant disconnected_at_;
  std::optional<Instant> suspended_wall_;
  std::uint64_t suspended_epoch_ = 0;   // one per SUSPENDED: Curator's timer for it
  std::uint64_t generation_ = 0;        // one per session
  std::uint64_t connection_ = 0;        // one per connection: its pings, timer and checks stop when it drops
  bool holding_ = false;
  bool lost_noted_ = false;
};

// kazoo 2.8.0's Lock (Debian python3-kazoo 2.8.0, under
// /usr/lib/python3/dist-packages/kazoo/), with kazoo's own connection
// handling — not Curator's, which ZooKeeperLock above models:
//
//  recipe/lock.py
//   :127-128  its node: <path>/<uuid4 hex>__lock__<seq>; the uuid is chosen
//             once, when the Lock object is made
//   :134-136, 183-207  acquire() runs _inner_acquire under KazooRetry
//             (max_tries None): a ConnectionLoss, or a SessionExpiredError
//             (ignore_expire), is tried again after 0.1 s x U(0.6, 1.4),
//             doubling each time, at most 60 s (retry.py:45-85, 120-160)
//   :241-254  create the node once; in a retry, find it again by its prefix
//             (_find_node, :326-331), or create it again
//   :256-285  get_children: ours the lowest -> held; else get(predecessor,
//             watch) and wait for the watch or any session state change
//             (:272 add_listener(_watch_session), :225-227)
//   :297-314  our node not among the children: ForceRetryError, tried again
//   :131, 217-218, 357  is_acquired is set by acquire() and cleared only by
//             release(): nothing listens to the session while it is held
//   :344-359  release(): client.retry(_inner_release): delete our node
//             (NoNodeError passes) and return True
//  protocol/connection.py (its connection thread)
//   :677-679  read_timeout = the negotiated timeout x 2/3
//   :586-600  select() for max(read_timeout/2 - jitter, jitter), jitter =
//             randint(0, 40)/100 s; nothing read or to send: a ping, or if
//             the last ping is still unanswered, ConnectionDropped
//   :592-605  anything read, or a request to send, starts the next select
//   :231-262  a closed socket is ConnectionDropped at once ("socket
//             connection broken"): the server closes an expired session's
//   :612-617  ConnectionDropped -> CONNECTING, the state SUSPENDED
//             (client.py:542-548); pending requests fail ConnectionLoss
//             (client.py:550-573); new ones wait in the queue (:586-606)
//   :508-520, 539-559  it reconnects under KazooRetry: 0.1 s x U(0.6, 1.4),
//             doubling, with the same session id (:661-666)
//   :668-669, 621-625  the server says the session is gone:
//             SessionExpiredError -> EXPIRED_SESSION, the state LOST
//             (client.py:536-541); queued requests fail; then a new session
//  client.py :107-108 KazooClient(timeout=10.0): the session timeout asked for
//
// No client-side expiry: LOST comes only from a reconnect the server refuses.
// An application that does not ask writes whatever the state; a check of
// client.state (check = "state") reads what the connection thread last set
// — after a pause both threads are runnable, and the measured run had the
// connection thread first: the check lets what is due at that instant run
// before it reads — and exists() on the node (check = "exists") is a round
// trip, which waits in the queue while SUSPENDED. A request's reply is
// awaited for read_timeout at most here: the connection would have dropped
// by then. Fencing token: the node's czxid.
//
// Which thread runs first after the pause is a race in the real library:
// live (scenarios/matrix/kazoo@2.8.0/pause-check, the real kazoo 2.8.0 and
// ZooKeeper 3.8.0 on loopback, 19 runs on 2026-11-29), the connection
// thread had read the closed socket (protocol/connection.py:245-260) and set
// SUSPENDED (client.py:514-548, _session_callback) before the check in 15;
// in 4 the application read CONNECTED a fraction of a millisecond before it
// and wrote (overlap, stale-write, lost-update). The flavour keeps the more
// frequent order: a deterministic run takes one side of a race.
class KazooLock final : public Lock {
 public:
  KazooLock(ClientEnv& env, const LockTargets& targets, const ZooKeeperOptions& options)
      : env_(env), options_(options), zk_(targets.nodes.front()), wake_(env), loop_wake_(env), state_changed_(env) {}

  Task<std::optional<Grant>> acquire() override {
    if (prefix_.empty()) prefix_ = env_.rng().hex_token(16) + "__lock__";  // uuid.uuid4().hex, once (:127)
    if (state_ == State::Closed) co_await start();
    Duration delay = kRetryDelay;
    bool create_tried = false;
    for (;;) {  // KazooRetry(_inner_acquire)
      const std::optional<Grant> got = co_await inner_acquire(create_tried);
      if (got) co_return got;
      co_await env_.sleep(retry_sleep(delay, kLockRetryMaxDelay));
    }
  }

  Task<bool> release(const Grant& grant) override {
    // client.retry(_inner_release): until the delete is answered (NoNode counts).
    Duration delay = kRetryDelay;
    for (;;) {
      const auto r = co_await request(coord_request(coord::Op::Delete, grant.value, session_));
      if (r && (r->ok || r->error == "NO_NODE")) co_return true;
      co_await env_.sleep(retry_sleep(delay, kClientRetryMaxDelay));
    }
  }

  bool on_push(ProcId, const Payload& push) override {
    const auto* n = std::get_if<coord::Notify>(&push);
    if (!n) return false;
    if (n->what == "closed") {
      if (state_ == State::Connected) drop("socket connection broken: the server closed it");
      return true;
    }
    read_something();
    wake_.fire();  // _watch_predecessor
    return true;
  }

  Task<bool> check(LibraryCheck kind, const Grant& grant) override {
    if (kind == LibraryCheck::State) {
      co_await env_.yield();  // the connection thread, runnable too, goes first
      const bool connected = state_ == State::Connected;
      if (connected) env_.note(Ev::Checked, {.detail = "client.state is CONNECTED"});
      else env_.note(Ev::Lost, {.detail = "client.state is not CONNECTED; it abandons the write"});
      co_await env_.yield();
      co_return connected;
    }
    // exists(): a round trip (queued while SUSPENDED).
    const auto r = co_await request(coord_request(coord::Op::Exists, grant.value, session_));
    const bool there = r && r->ok;
    if (there) env_.note(Ev::Checked, {.detail = "exists() found its node"});
    else env_.note(Ev::Lost, {.detail = r ? "exists() found no node: its session is gone; it abandons the write"
                                          : "exists() raised: the connection is lost; it abandons the write"});
    co_await env_.yield();
    co_return there;
  }

 private:
  enum class State : std::uint8_t { Closed, Connected, Connecting, Expired };
  static constexpr Duration kRetryDelay = Duration::ms(100);             // retry.py:45 delay=0.1
  static constexpr Duration kLockRetryMaxDelay = Duration::s(60);        // retry.py:46 max_delay=60.0 (the Lock's)
  static constexpr Duration kClientRetryMaxDelay = Duration::s(3600);    // client.py:82-87 retry_max_delay

  Duration read_timeout() const { return timeout_ * 2 / 3; }

  // KazooRetry's sleep: the current delay x U(1 - 0.4, 1 + 0.4); the next one doubles it (retry.py:137-160).
  Duration retry_sleep(Duration& delay, Duration max_delay) {
    const Duration sleep = env_.rng().between(delay * 6 / 10, delay * 14 / 10);
    delay = min(sleep * 2, max_delay);
    return sleep;
  }

  Task<std::optional<Grant>> inner_acquire(bool& create_tried) {
    std::string node;
    if (create_tried) {
      const auto children = co_await request(coord_request(coord::Op::GetChildren, "/lock", session_));
      if (!children || !children->ok) co_return std::nullopt;
      for (const coord::Node& c : children->nodes)
        if (c.path.find(prefix_) != std::string::npos) node = c.path;
    }
    create_tried = true;
    if (node.empty()) {
      coord::Request create = coord_request(coord::Op::Create, "/lock", session_);
      create.data = prefix_;
      const auto created = co_await request(std::move(create));
      if (!created || !created->ok) co_return std::nullopt;
      node = created->path;
    }
    for (;;) {
      const auto children = co_await request(coord_request(coord::Op::GetChildren, "/lock", session_));
      if (!children || !children->ok) co_return std::nullopt;
      const auto it = std::find_if(children->nodes.begin(), children->nodes.end(),
                                   [&](const coord::Node& c) { return c.path == node; });
      if (it == children->nodes.end()) co_return std::nullopt;  // ForceRetryError
      if (it == children->nodes.begin()) co_return Grant{node, it->revision, std::nullopt, env_.name_of(zk_)};
      coord::Request get = coord_request(coord::Op::Exists, std::prev(it)->path, session_);
      get.watch = true;
      const auto pred = co_await request(std::move(get));
      if (!pred) co_return std::nullopt;
      if (!pred->ok) continue;  // NoNodeError: already gone
      co_await wake_.wait();
    }
  }

  // zk.start(): connect, a new session.
  Task<void> start() {
    state_ = State::Connecting;
    for (;;) {
      coord::Request hello = coord_request(coord::Op::Connect);
      hello.ttl = options_.session_timeout;
      hello.watch = true;  // it reads the socket: tell it when the server closes it
      const auto r = co_await env_.call_coord(zk_, std::move(hello), options_.session_timeout);
      if (r && r->ok) {
        session_ = r->id;
        timeout_ = r->ttl;
        connected();
        co_return;
      }
      co_await env_.sleep(retry_sleep(conn_delay_, kClientRetryMaxDelay));
    }
  }

  void connected() {
    const bool again = state_ == State::Connecting && session_ != 0 && seen_connected_;
    state_ = State::Connected;
    seen_connected_ = true;
    conn_delay_ = kRetryDelay;  // retry.reset()
    ping_outstanding_ = false;
    const std::uint64_t connection = ++connection_;
    env_.spawn(connection_loop(connection));
    if (again) env_.note(Ev::Notified, {.value = static_cast<std::int64_t>(LibrarySignal::Reconnected)});
    state_changed_.fire();
    wake_.fire();  // _watch_session
  }

  // A request: waits in the queue while CONNECTING; fails at once after an
  // expiry (until the next connect attempt); a reply that comes after its
  // connection dropped counts as none (ConnectionLoss).
  Task<std::optional<coord::Reply>> request(coord::Request req) {
    while (state_ == State::Connecting) co_await state_changed_.wait();
    if (state_ != State::Connected) co_return std::nullopt;
    req.id = session_;
    const std::uint64_t connection = connection_;
    loop_wake_.fire();  // a request to send ends the select
    auto r = co_await env_.call_coord(zk_, std::move(req), read_timeout());
    if (connection != connection_) co_return std::nullopt;
    if (!r) {
      drop("no answer within the read timeout");
      co_return std::nullopt;
    }
    read_something();
    if (!r->ok && r->error == "SESSION_EXPIRED") {
      drop("the server closed the session");
      co_return std::nullopt;
    }
    co_return r;
  }

  void read_something() { loop_wake_.fire(); }

  // The connection thread's loop (connection.py:586-605): a select per round.
  Task<void> connection_loop(std::uint64_t connection) {
    for (;;) {
      const Duration jitter = Duration::ms(10 * env_.rng().between(std::int64_t{0}, std::int64_t{40}));
      const Duration timeout = max(read_timeout() / 2 - jitter, jitter);
      const std::uint64_t round = ++select_round_;
      env_.spawn(select_timer(connection, round, timeout));
      co_await loop_wake_.wait();
      if (connection != connection_ || state_ != State::Connected) co_return;
      if (timed_out_round_ != round) continue;  // something read or sent: the next select
      if (ping_outstanding_) {
        drop("outstanding heartbeat ping not received");
        co_return;
      }
      ping_outstanding_ = true;
      env_.spawn(ping(connection));
    }
  }

  Task<void> select_timer(std::uint64_t connection, std::uint64_t round, Duration timeout) {
    co_await env_.sleep(timeout);
    if (connection != connection_ || round != select_round_) co_return;
    timed_out_round_ = round;
    loop_wake_.fire();
  }

  Task<void> ping(std::uint64_t connection) {
    const auto r = co_await env_.call_coord(zk_, coord_request(coord::Op::Ping, "", session_), Duration::zero());
    if (!r || connection != connection_) co_return;
    if (!r->ok && r->error == "SESSION_EXPIRED") {
      drop("the server closed the session");
      co_return;
    }
    ping_outstanding_ = false;
    read_something();
  }

  // ConnectionDropped: SUSPENDED, then reconnect with the same session.
  void drop(const char* why) {
    if (state_ != State::Connected) return;
    ++connection_;
    state_ = State::Connecting;
    env_.note(Ev::Notified, {.value = static_cast<std::int64_t>(LibrarySignal::Suspended), .detail = why});
    wake_.fire();  // _watch_session
    env_.spawn(reconnect(connection_));
  }

  Task<void> reconnect(std::uint64_t connection) {
    for (;;) {
      co_await env_.sleep(retry_sleep(conn_delay_, kClientRetryMaxDelay));
      if (connection != connection_) co_return;
      // _connect (:661-666): Connect with our session id; the server touches
      // a living session, or answers SESSION_EXPIRED (its timeout 0) for one
      // it ended. The timeout: session timeout / hosts.
      coord::Request again = coord_request(coord::Op::Connect, "", session_);
      again.ttl = options_.session_timeout;
      again.watch = true;
      const auto r = co_await env_.call_coord(zk_, std::move(again), timeout_);
      if (connection != connection_) co_return;
      if (r && r->ok) {
        connected();
        co_return;
      }
      if (r && r->error == "SESSION_EXPIRED") {
        // EXPIRED_SESSION: LOST; queued requests fail; then a new session.
        state_ = State::Expired;
        env_.note(Ev::Notified, {.value = static_cast<std::int64_t>(LibrarySignal::SessionLost)});
        state_changed_.fire();
        wake_.fire();
        session_ = 0;
        conn_delay_ = kRetryDelay;  // retry.reset()
        co_await env_.sleep(retry_sleep(conn_delay_, kClientRetryMaxDelay));
        if (connection != connection_) co_return;
        co_await start();
        co_return;
      }
    }
  }

  ClientEnv& env_;
  const ZooKeeperOptions& options_;
  ProcId zk_;
  ClientWakeup wake_;           // the Lock's wake_event
  ClientWakeup loop_wake_;      // the connection thread's select
  ClientWakeup state_changed_;  // a queued request's wait
  std::string prefix_;
  State state_ = State::Closed;
  bool seen_connected_ = false;
  std::int64_t session_ = 0;
  Duration timeout_ = Duration::s(10);
  Duration conn_delay_ = kRetryDelay;
  bool ping_outstanding_ = false;
  std::uint64_t connection_ = 0;  // one per connection made: a dropped one's coroutines stop
  std::uint64_t select_round_ = 0;
  std::uint64_t timed_out_round_ = 0;
};

}  // namespace

std::shared_ptr<const AlgorithmOptions> parse_zookeeper(OptionReader& r, const LockConfig& common) {
  auto o = std::make_shared<ZooKeeperOptions>();
  if (common.flavour == "kazoo") {
    o->flavour = ZkFlavour::Kazoo;
    for (const char* key : {"on_suspended", "watch", "client", "reconnect_jitter"})
      if (r.has(key)) r.fail(key, "an option of the curator flavour (kazoo's Lock watches its predecessor and never stops a holder)");
  }
  if (auto v = r.integer("first_token", 0, INT64_MAX / 2)) o->first_token = *v;
  if (auto v = r.duration("session_timeout", Sign::Positive)) o->session_timeout = *v;
  if (auto v = r.duration("tick_time", Sign::Positive)) o->tick_time = *v;
  if (auto v = r.choice<OnSuspended>("on_suspended", {{"continue", OnSuspended::Continue}, {"stop", OnSuspended::Stop}}))
    o->on_suspended = *v;
  if (auto v = r.choice<ZkClient>("client", {{"3.9.3", ZkClient::V3_9_3}, {"3.9.2", ZkClient::V3_9_2}})) o->client = *v;
  if (auto v = r.choice<Watch>("watch", {{"predecessor", Watch::Predecessor}, {"parent", Watch::Parent}})) o->watch = *v;
  o->reconnect_jitter = r.range("reconnect_jitter");
  return o;
}

std::unique_ptr<Lock> make_zookeeper(ClientEnv& env, const LockTargets& targets, const LockConfig&,
                                     const ZooKeeperOptions& options) {
  if (options.flavour == ZkFlavour::Kazoo) return std::make_unique<KazooLock>(env, targets, options);
  return std::make_unique<ZooKeeperLock>(env, targets, options);
}

}  // namespace locksim
