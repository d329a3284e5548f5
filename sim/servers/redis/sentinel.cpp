#include "sim/servers/redis/sentinel.hpp"

#include <algorithm>
#include <map>
#include <sstream>

namespace locksim {

// File:line references are to redis 7.0.15 src/sentinel.c unless named.
namespace {

constexpr std::int64_t kInfoPeriod = 10'000;        // sentinel_info_period (:84)
constexpr std::int64_t kAskPeriod = 1'000;          // sentinel_ask_period (:86)
constexpr std::int64_t kPublishPeriod = 2'000;      // sentinel_publish_period (:87)
constexpr std::int64_t kTiltTrigger = 2'000;        // sentinel_tilt_trigger (:89)
constexpr std::int64_t kTiltPeriod = 30'000;        // sentinel_tilt_period (:90)
constexpr std::int64_t kSlaveReconfTimeout = 10'000;  // sentinel_slave_reconf_timeout (:91)
constexpr std::int64_t kMinLinkReconnect = 15'000;  // sentinel_min_link_reconnect_period (:92)
constexpr std::int64_t kElectionTimeout = 10'000;   // sentinel_election_timeout (:93)
constexpr std::int64_t kMaxDesync = 1'000;          // SENTINEL_MAX_DESYNC (:104)
constexpr int kMaxPending = 100;                    // SENTINEL_MAX_PENDING_COMMANDS (:102)
// mstime() reads Unix time; a simulated wall clock starts near zero. Counting
// from this offset keeps Sentinel's "0 means never" timestamps far in the past.
constexpr std::int64_t kUnixEpochMs = 1'700'000'000'000;

std::int64_t ms_of(Duration d) { return d.whole_ms(); }

}  // namespace

Sentinel::Sentinel(World& world, std::string name, const ClockSpec& clock, SentinelSettings settings)
    : Process(world, std::move(name), ProcessRole::LockNode, clock), settings_(settings) {
  previous_time_ = mstime();  // initSentinel (:495)
  spawn(timer());
}

Sentinel::ms_t Sentinel::mstime() const {
  const std::int64_t ns = wall_now().ns();
  return ns / 1'000'000 - (ns % 1'000'000 < 0 ? 1 : 0) + kUnixEpochMs;
}

const std::string& Sentinel::name_of(ProcId id) const { return const_cast<Sentinel*>(this)->world().trace().name(id); }

// createSentinelRedisInstance and createInstanceLink (:1284-1375, :1017-1038):
// not yet connected, and counted as unanswered from now.
Sentinel::Instance Sentinel::make_instance(unsigned flags, ProcId id) const {
  const ms_t now = mstime();
  Instance ri;
  ri.flags = flags;
  ri.id = id;
  ri.link.act_ping_time = ri.link.last_avail_time = ri.link.last_pong_time = now;
  ri.last_pub_time = ri.last_hello_time = ri.last_master_down_reply_time = now;
  ri.role_reported = flags & (kMaster | kSlave);
  ri.role_reported_time = ri.slave_conf_change_time = now;
  return ri;
}

// A run starts in the steady state of a deployment that has been up for a
// while: each link connected long ago, its last PING answered, and the
// periodic INFO, PING and hello each at a random point of its period (drawn
// from this sentinel's stream). The first INFO brings the instance's details.
void Sentinel::monitor(const Group& group, const std::vector<ProcId>& others) {
  auto steady = [this](unsigned flags, ProcId id) {
    Instance ri = make_instance(flags, id);
    const ms_t now = mstime();
    ri.link.disconnected = false;
    ri.link.conn = ++next_conn_;
    ri.link.peer_epoch = world().process(id).epoch();
    ri.link.act_ping_time = 0;
    const auto ping_period = static_cast<std::uint64_t>(std::max<ms_t>(1, ms_of(settings_.ping_period)));
    ri.link.last_pong_time = ri.link.last_ping_time = now - static_cast<ms_t>(rng().below(ping_period));
    ri.last_pub_time = now - static_cast<ms_t>(rng().below(kPublishPeriod));
    if (!(flags & kSentinel)) ri.info_refresh = now - static_cast<ms_t>(rng().below(kInfoPeriod));
    return ri;
  };
  Master m;
  static_cast<Instance&>(m) = steady(kMaster, group.master);
  m.name = group.name;
  for (ProcId r : group.replicas) m.slaves.push_back(steady(kSlave, r));
  for (ProcId s : others)
    if (s != id()) m.sentinels.push_back(steady(kSentinel, s));
  masters_.push_back(std::move(m));
}

// A crash loses the links and the running state; the config file keeps the
// epochs, the votes, the current master and the instances it knew
// (sentinelFlushConfig after each of those changes).
void Sentinel::on_restart() {
  for (Master& m : masters_) {
    Master fresh;
    static_cast<Instance&>(fresh) = make_instance(kMaster, m.id);
    fresh.name = m.name;
    fresh.config_epoch = m.config_epoch;
    fresh.leader = m.leader;
    fresh.leader_epoch = m.leader_epoch;
    for (const Instance& s : m.slaves) fresh.slaves.push_back(make_instance(kSlave, s.id));
    for (const Instance& s : m.sentinels) fresh.sentinels.push_back(make_instance(kSentinel, s.id));
    m = std::move(fresh);
  }
  tilt_ = false;
  previous_time_ = mstime();
  spawn(timer());
}

std::optional<ProcId> Sentinel::current_master(const std::string& group) const {
  for (const Master& m : masters_)
    if (m.name == group) return current_address(m);
  return std::nullopt;
}

// For explore --exhaustive: what decides this sentinel's next steps (its
// view of each instance, the failover's progress, its epoch and TILT).
void Sentinel::digest(Digest& d) const {
  d.add(current_epoch_);
  d.add(tilt_);
  d.add(tilt_start_time_);
  for (const Master& m : masters_) {
    digest_instance(d, m);
    d.add(m.config_epoch);
    d.add(m.failover_epoch);
    d.add(static_cast<std::uint64_t>(m.failover_state));
    d.add(m.failover_state_change_time);
    d.add(static_cast<std::uint64_t>(m.promoted));
    for (const Instance& s : m.slaves) digest_instance(d, s);
    for (const Instance& s : m.sentinels) digest_instance(d, s);
  }
}

void Sentinel::digest_instance(Digest& d, const Instance& ri) {
  d.add(static_cast<std::uint64_t>(ri.id));
  d.add(static_cast<std::uint64_t>(ri.flags));
  d.add(ri.link.disconnected);
  d.add(ri.link.pending);
  d.add(ri.link.act_ping_time);
  d.add(ri.link.last_avail_time);
  d.add(ri.s_down_since);
  d.add(ri.o_down_since);
  d.add(static_cast<std::uint64_t>(ri.role_reported));
  d.add(ri.slave_master_host);
  d.add(ri.leader);
  d.add(ri.leader_epoch);
}

// sentinelGetCurrentMasterAddress (:1664-1677): the promoted replica once its
// INFO has confirmed the promotion, else the master's address.
ProcId Sentinel::current_address(const Master& m) const {
  if ((m.flags & kFailoverInProgress) && m.promoted != kNoProc && m.failover_state >= FailoverState::ReconfSlaves)
    return m.promoted;
  return m.id;
}

void Sentinel::event(bool narrate, const std::string& what, ProcId about) {
  // What a reader follows in the story goes in as a fault-like event; the rest
  // of Sentinel's log as commands (in the trace, not in the narrative).
  if (narrate) note(Ev::Fault, {.peer = about, .detail = what});
  else note(Ev::Command, {.peer = about, .detail = detailed() ? what : std::string()});
}

// --- The timer --------------------------------------------------------------

// sentinelTimer runs from serverCron, which comes back 1000/hz ms later; hz is
// drawn again after every call to keep sentinels apart (:5356-5370).
Task<void> Sentinel::timer() {
  for (;;) {
    tick();
    const auto hz = static_cast<std::int64_t>(10 + rng().below(10));  // CONFIG_DEFAULT_HZ + rand() % CONFIG_DEFAULT_HZ
    co_await sleep(Duration::ms(1000 / hz));
  }
}

// sentinelCheckTiltCondition (:5344-5355): a timer call less than zero or
// more than 2 s after the last one (a wall-clock step, a stopped process).
void Sentinel::check_tilt() {
  const ms_t now = mstime();
  const ms_t delta = now - previous_time_;
  if (delta < 0 || delta > kTiltTrigger) {
    tilt_ = true;
    tilt_start_time_ = now;
    event(true, "+tilt #tilt mode entered: " + std::to_string(delta) + " ms since the last timer call", kNoProc);
  }
  previous_time_ = now;
}

// sentinelTimer / sentinelHandleDictOfRedisInstances (:5301-5325): each
// master, then its replicas and sentinels; a finished failover switches last.
void Sentinel::tick() {
  check_tilt();
  for (std::size_t g = 0; g < masters_.size(); ++g) {
    Master& m = masters_[g];
    handle_instance(m, m);
    // Commands below may reset the master (a hello): index, do not iterate.
    for (std::size_t i = 0; i < m.slaves.size(); ++i) handle_instance(m, m.slaves[i]);
    for (std::size_t i = 0; i < m.sentinels.size(); ++i) handle_instance(m, m.sentinels[i]);
    if (m.failover_state == FailoverState::UpdateConfig) switch_to_promoted(m);
  }
}

// sentinelHandleRedisInstance (:5265-5299).
void Sentinel::handle_instance(Master& m, Instance& ri) {
  const auto group = static_cast<std::size_t>(&m - masters_.data());
  // A crashed peer's OS closes its sockets: hiredis reads EOF and the link
  // is disconnected (instanceLinkConnectionError, :1235-1246). Seen here at
  // the next timer call, which is when Sentinel would act on it.
  if (!ri.link.disconnected) {
    const Process& peer = world().process(ri.id);
    if (peer.state() == State::Down || peer.epoch() != ri.link.peer_epoch) close_link(ri);
  }
  reconnect(group, ri);
  send_periodic(m, ri);
  if (tilt_) {
    if (mstime() - tilt_start_time_ < kTiltPeriod) return;
    tilt_ = false;
    event(true, "-tilt #tilt mode exited", kNoProc);
  }
  check_sdown(ri);
  if (ri.flags & kMaster) {
    check_odown(m);
    if (start_failover_if_needed(m)) ask_others(group, m, true);
    failover_state_machine(group, m);
    ask_others(group, m, false);
  }
}

// sentinelReconnectInstance (:2400-2497): at most once per ping period. The
// connect is asynchronous, so the link counts as connected at once and a
// PING is queued; a refused connection then fails that PING.
void Sentinel::reconnect(std::size_t group, Instance& ri) {
  if (!ri.link.disconnected) return;
  const ms_t now = mstime();
  if (now - ri.link.last_reconn_time < ms_of(settings_.ping_period)) return;
  ri.link.last_reconn_time = now;
  ri.link.disconnected = false;
  ri.link.conn = ++next_conn_;
  ri.link.peer_epoch = world().process(ri.id).epoch();
  ri.link.pending = 0;
  ri.link.cc_conn_time = now;
  send_ping(group, ri);  // "Send a PING ASAP when reconnecting"
}

// instanceLinkCloseConnection (:1041-1052): pending replies are lost with it.
void Sentinel::close_link(Instance& ri) {
  ri.link.disconnected = true;
  ri.link.pending = 0;
  ri.link.info_sent = 0;
  ri.link.conn = ++next_conn_;
}

Sentinel::Instance* Sentinel::find(std::size_t group, unsigned kind, ProcId id) {
  if (group >= masters_.size()) return nullptr;
  Master& m = masters_[group];
  if ((kind & kMaster) && m.id == id) return &m;
  auto& list = (kind & kSentinel) ? m.sentinels : m.slaves;
  if (!(kind & (kSlave | kSentinel))) return nullptr;
  for (Instance& ri : list)
    if (ri.id == id) return &ri;
  return nullptr;
}

Sentinel::Instance* Sentinel::slave(Master& m, ProcId id) {
  for (Instance& s : m.slaves)
    if (s.id == id) return &s;
  return nullptr;
}

// --- Commands and replies -----------------------------------------------------

void Sentinel::command(std::size_t group, Instance& ri, redis::Request req, Reply what) {
  ++ri.link.pending;
  spawn(await_reply(group, ri.flags & (kMaster | kSlave | kSentinel), ri.id, ri.link.conn, std::move(req), what));
}

// One command on a link, and its reply callback. hiredis has no timeout; a
// reply that comes after the link was closed is dropped (the callbacks find
// no link). The wait is bounded only to free the simulator's state: by then
// a silent link has been closed (check_sdown).
Task<void> Sentinel::await_reply(std::size_t group, unsigned kind, ProcId peer, std::uint64_t conn,
                                 redis::Request req, Reply what) {
  const Duration patience = what == Reply::AskDown ? Duration::ms(kAskPeriod * 5)
                                                   : Duration::ms(kMinLinkReconnect) + settings_.down_after * 2;
  const Instant sent = mono_now();
  const auto answer = co_await call(peer, std::move(req), patience);
  Instance* ri = find(group, kind, peer);
  if (!ri || ri->link.conn != conn || ri->link.disconnected) co_return;
  --ri->link.pending;
  if (what == Reply::Info && answer) ri->link.info_sent = 0;
  const redis::Reply* r = answer ? std::get_if<redis::Reply>(&*answer) : nullptr;
  if (!r) {
    // Refused (a reset, long before the patience ran out): the link is gone.
    if (mono_now() - sent < patience) close_link(*ri);
    co_return;
  }
  on_reply(group, *ri, what, *r);
}

void Sentinel::on_reply(std::size_t group, Instance& ri, Reply what, const redis::Reply& r) {
  const ms_t now = mstime();
  switch (what) {
    case Reply::Ping:
      // sentinelPingReplyCallback (:2793-2835): PONG, LOADING or MASTERDOWN count as available.
      if ((r.kind == redis::Reply::Kind::Str && r.str.rfind("PONG", 0) == 0) ||
          (r.kind == redis::Reply::Kind::Err &&
           (r.str.rfind("LOADING", 0) == 0 || r.str.rfind("MASTERDOWN", 0) == 0))) {
        ri.link.last_avail_time = now;
        ri.link.act_ping_time = 0;
      }
      ri.link.last_pong_time = now;
      break;
    case Reply::Info:
      if (r.kind == redis::Reply::Kind::Str) refresh_info(group, masters_[group], ri, r.str);
      break;
    case Reply::AskDown: {
      // sentinelReceiveIsMasterDownReply (:4534-4572): "<down> <leader|*> <epoch>".
      if (r.kind != redis::Reply::Kind::Str) break;
      std::istringstream in(r.str);
      int down = 0;
      std::string leader;
      std::uint64_t epoch = 0;
      if (!(in >> down >> leader >> epoch)) break;
      ri.last_master_down_reply_time = now;
      if (down == 1) ri.flags |= kMasterDown;
      else ri.flags &= ~kMasterDown;
      if (leader != "*") {
        if (ri.leader_epoch != epoch) event(false, name() + " hears " + name_of(ri.id) + " voted for " + leader + " " + std::to_string(epoch), ri.id);
        ri.leader = leader;
        ri.leader_epoch = epoch;
      }
      break;
    }
    case Reply::Publish:
      // sentinelPublishReplyCallback (:2839-2852).
      if (r.kind != redis::Reply::Kind::Err) ri.last_pub_time = now;
      break;
    case Reply::Discard:
      break;
  }
}

// sentinelSendPing (:3094-3110): the oldest unanswered PING's time is kept.
void Sentinel::send_ping(std::size_t group, Instance& ri) {
  redis::Request ping;
  ping.op = redis::Op::Ping;
  command(group, ri, std::move(ping), Reply::Ping);
  ri.link.last_ping_time = mstime();
  if (ri.link.act_ping_time == 0) ri.link.act_ping_time = ri.link.last_ping_time;
}

// sentinelSendPeriodicCommands (:3114-3163).
void Sentinel::send_periodic(Master& m, Instance& ri) {
  if (ri.link.disconnected || ri.link.pending >= kMaxPending) return;
  const auto group = static_cast<std::size_t>(&m - masters_.data());
  const ms_t now = mstime();
  const bool fast_info = (ri.flags & kSlave) && ((m.flags & (kODown | kFailoverInProgress)) || ri.master_link_down_time != 0);
  const ms_t info_period = fast_info ? 1'000 : kInfoPeriod;
  const ms_t ping_period = std::min(ms_of(settings_.down_after), ms_of(settings_.ping_period));
  // Sentinel queues another INFO every tick until one is answered; over TCP
  // the queued copies are all answered once the link clears. Here a copy
  // sent into a partition is lost instead, so: one at a time, again after a
  // second without an answer.
  const bool info_due = ri.info_refresh == 0 || now - ri.info_refresh > info_period;
  if (!(ri.flags & kSentinel) && info_due && (ri.link.info_sent == 0 || now - ri.link.info_sent > 1'000)) {
    redis::Request info;
    info.op = redis::Op::Info;
    command(group, ri, std::move(info), Reply::Info);
    ri.link.info_sent = now;
  }
  if (now - ri.link.last_pong_time > ping_period && now - ri.link.last_ping_time > ping_period / 2)
    send_ping(group, ri);
  // Hellos go to the other sentinels only (see the header).
  if ((ri.flags & kSentinel) && now - ri.last_pub_time > kPublishPeriod) send_hello(group, m, ri);
}

// sentinelSendHello (:3015-3060): "<runid>,<current epoch>,<master name>,
// <master address>,<master config epoch>" (the real one also has IPs and ports).
void Sentinel::send_hello(std::size_t group, Master& m, Instance& si) {
  redis::Request hello;
  hello.op = redis::Op::Publish;
  hello.key = "__sentinel__:hello";
  hello.value = name() + "," + std::to_string(current_epoch_) + "," + m.name + "," + name_of(current_address(m)) +
                "," + std::to_string(m.config_epoch);
  command(group, si, std::move(hello), Reply::Publish);
}

// sentinelSendSlaveOf (:4766-4830): MULTI; SLAVEOF; CONFIG REWRITE; CLIENT
// KILL TYPE normal; CLIENT KILL TYPE pubsub; EXEC, one request here.
bool Sentinel::send_slaveof(std::size_t group, Instance& ri, ProcId master) {
  if (ri.link.disconnected) return false;
  redis::Request r;
  if (master == kNoProc) {
    r.op = redis::Op::ReplicaOfNoOne;
  } else {
    r.op = redis::Op::ReplicaOf;
    r.key = name_of(master);
  }
  command(group, ri, std::move(r), Reply::Discard);
  return true;
}

// --- Requests from clients and other sentinels -----------------------------------

void Sentinel::on_message(Message& m) {
  const auto* req = std::get_if<redis::Request>(&m.body);
  if (!req) {
    Process::on_message(m);
    return;
  }
  redis::Reply r;
  switch (req->op) {
    case redis::Op::GetMasterAddr: {
      const auto addr = current_master(req->key);
      r = addr ? redis::Reply::of(name_of(*addr)) : redis::Reply::nil();
      break;
    }
    case redis::Op::SentinelIsMasterDown:
      r = redis::Reply::of(answer_is_master_down(*req));
      break;
    case redis::Op::Publish:
      // Sentinel's own PUBLISH takes hellos sent straight to it (sentinelPublishCommand, :4411-4418).
      if (req->key == "__sentinel__:hello") process_hello(req->value.text());
      r = redis::Reply::of(1);
      break;
    case redis::Op::Ping:
      r = redis::Reply::of(std::string("PONG"));
      break;
    default:
      r = redis::Reply::error("ERR unknown command");
      break;
  }
  reply(m, std::move(r));
}

// SENTINEL is-master-down-by-addr <addr> <epoch> <runid|*> (:3839-3896):
// "down" only if it is SDOWN here and we are not in TILT; a run id asks for a vote.
std::string Sentinel::answer_is_master_down(const redis::Request& req) {
  std::istringstream in(req.value.text());
  std::uint64_t req_epoch = 0;
  std::string runid;
  in >> req_epoch >> runid;
  Master* ri = nullptr;
  for (Master& m : masters_)
    if (name_of(m.id) == req.key) ri = &m;
  const bool down = !tilt_ && ri && (ri->flags & kSDown);
  std::string leader;
  std::uint64_t leader_epoch = 0;
  if (ri && runid != "*") leader = vote_leader(*ri, req_epoch, runid, leader_epoch);
  return std::string(down ? "1" : "0") + " " + (leader.empty() ? "*" : leader) + " " + std::to_string(leader_epoch);
}

// sentinelProcessHelloMessage (:2859-2965): adopt a newer epoch; switch to a
// master address that comes with a newer config epoch.
void Sentinel::process_hello(const std::string& hello) {
  std::vector<std::string> token;
  std::string part;
  std::istringstream in(hello);
  while (std::getline(in, part, ',')) token.push_back(part);
  if (token.size() != 5) return;
  Master* master = nullptr;
  for (Master& m : masters_)
    if (m.name == token[2]) master = &m;
  if (!master) return;
  Instance* si = nullptr;
  for (Instance& s : master->sentinels)
    if (name_of(s.id) == token[0]) si = &s;
  const std::uint64_t epoch = std::stoull(token[1]);
  const std::uint64_t config_epoch = std::stoull(token[4]);
  if (epoch > current_epoch_) {
    current_epoch_ = epoch;
    event(false, "+new-epoch " + std::to_string(epoch), kNoProc);
  }
  if (si && master->config_epoch < config_epoch) {
    master->config_epoch = config_epoch;
    const auto addr = world().find(token[3]);
    if (addr && *addr != master->id) {
      event(false, "+config-update-from " + token[0], si->id);
      event(true, "+switch-master " + master->name + ": " + name_of(master->id) + " -> " + token[3] +
                      " (a hello from " + token[0] + " with a newer config)", *addr);
      reset_master_and_change_address(*master, *addr);
    }
  }
  if (si) si->last_hello_time = mstime();
}

// --- Detection ----------------------------------------------------------------

// sentinelCheckSubjectivelyDown (:4423-4488).
void Sentinel::check_sdown(Instance& ri) {
  const ms_t now = mstime();
  const ms_t down_after = ms_of(settings_.down_after);
  ms_t elapsed = 0;
  if (ri.link.act_ping_time) elapsed = now - ri.link.act_ping_time;
  else if (ri.link.disconnected) elapsed = now - ri.link.last_avail_time;
  // A connection older than 15 s with a PING pending for half of down_after
  // and no reply at all for as long is closed and made again (:4437-4447).
  if (!ri.link.disconnected && now - ri.link.cc_conn_time > kMinLinkReconnect && ri.link.act_ping_time != 0 &&
      now - ri.link.act_ping_time > down_after / 2 && now - ri.link.last_pong_time > down_after / 2)
    close_link(ri);
  const bool master_says_replica = (ri.flags & kMaster) && ri.role_reported == kSlave &&
                                   now - ri.role_reported_time > down_after + kInfoPeriod * 2;
  const std::string what = std::string(ri.flags & kMaster ? "master " : ri.flags & kSlave ? "slave " : "sentinel ") +
                           name_of(ri.id);
  if (elapsed > down_after || master_says_replica) {
    if (!(ri.flags & kSDown)) {
      event((ri.flags & kMaster) != 0, "+sdown " + what + " (no valid reply for " + std::to_string(elapsed) + " ms)", ri.id);
      ri.s_down_since = now;
      ri.flags |= kSDown;
    }
  } else if (ri.flags & kSDown) {
    event(false, "-sdown " + what, ri.id);
    ri.flags &= ~kSDown;
  }
}

// sentinelCheckObjectivelyDown (:4497-4530): SDOWN here plus the sentinels
// whose last answer (within 5 s) said down.
void Sentinel::check_odown(Master& m) {
  unsigned quorum = 0;
  bool odown = false;
  if (m.flags & kSDown) {
    quorum = 1;
    for (const Instance& si : m.sentinels)
      if (si.flags & kMasterDown) ++quorum;
    odown = quorum >= static_cast<unsigned>(settings_.quorum);
  }
  if (odown && !(m.flags & kODown)) {
    event(true, "+odown master " + name_of(m.id) + " #quorum " + std::to_string(quorum) + "/" +
                    std::to_string(settings_.quorum), m.id);
    m.flags |= kODown;
    m.o_down_since = mstime();
  } else if (!odown && (m.flags & kODown)) {
    event(false, "-odown master " + name_of(m.id), m.id);
    m.flags &= ~kODown;
  }
}

// sentinelAskMasterStateToOtherSentinels (:4577-4619): while SDOWN, every
// second (or at once, forced), with our run id once a failover has started.
void Sentinel::ask_others(std::size_t group, Master& m, bool forced) {
  const ms_t now = mstime();
  for (std::size_t i = 0; i < m.sentinels.size(); ++i) {
    Instance& si = m.sentinels[i];
    if (now - si.last_master_down_reply_time > kAskPeriod * 5) {
      si.flags &= ~kMasterDown;
      si.leader.clear();
    }
    if (!(m.flags & kSDown) || si.link.disconnected) continue;
    if (!forced && now - si.last_master_down_reply_time < kAskPeriod) continue;
    redis::Request ask;
    ask.op = redis::Op::SentinelIsMasterDown;
    ask.key = name_of(m.id);
    ask.value = std::to_string(current_epoch_) + " " + (m.failover_state > FailoverState::None ? name() : "*");
    command(group, si, std::move(ask), Reply::AskDown);
  }
}

// sentinelRefreshInstanceInfo (:2513-2790), the parts Sentinel acts on.
void Sentinel::refresh_info(std::size_t group, Master& m, Instance& ri, const std::string& info) {
  const ms_t now = mstime();
  unsigned role = 0;
  ri.master_link_down_time = 0;
  std::istringstream in(info);
  std::string l;
  while (std::getline(in, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    const auto colon = l.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = l.substr(0, colon), value = l.substr(colon + 1);
    if (key == "run_id") {
      if (!ri.runid.empty() && ri.runid != value) event(false, "+reboot " + name_of(ri.id), ri.id);
      ri.runid = value;
    } else if ((ri.flags & kMaster) && key.rfind("slave", 0) == 0 && key.size() > 5 && std::isdigit(key[5])) {
      const auto ip = value.find("ip="), end = value.find(',', ip);
      if (ip == std::string::npos) continue;
      const auto replica = world().find(value.substr(ip + 3, end - ip - 3));
      if (replica && !slave(m, *replica)) {
        m.slaves.push_back(make_instance(kSlave, *replica));
        event(false, "+slave " + name_of(*replica), *replica);
      }
    } else if (key == "master_link_down_since_seconds") {
      ri.master_link_down_time = std::stoll(value) * 1000;
    } else if (key == "role") {
      role = value == "master" ? unsigned{kMaster} : value == "slave" ? unsigned{kSlave} : 0u;
    } else if (role == kSlave && key == "master_host") {
      if (ri.slave_master_host != value) {
        ri.slave_master_host = value;
        ri.slave_conf_change_time = now;
      }
    } else if (role == kSlave && key == "master_link_status") {
      ri.slave_master_link_up = value == "up";
    } else if (role == kSlave && key == "slave_priority") {
      ri.slave_priority = std::stoi(value);
    } else if (role == kSlave && key == "slave_repl_offset") {
      ri.slave_repl_offset = std::stoll(value);
    }
  }
  ri.info_refresh = now;
  if (role != ri.role_reported) {
    ri.role_reported_time = now;
    ri.role_reported = role;
    if (role == kSlave) ri.slave_conf_change_time = now;
    event(false, std::string((ri.flags & (kMaster | kSlave)) == role ? "+" : "-") + "role-change " + name_of(ri.id) +
                     " new reported role is " + (role == kMaster ? "master" : "slave"), ri.id);
  }
  if (tilt_) return;
  convert_or_fix(group, m, ri, role);
}

// The acting half of an INFO reply (:2681-2787).
void Sentinel::convert_or_fix(std::size_t group, Master& m, Instance& ri, unsigned role) {
  const ms_t now = mstime();
  if ((ri.flags & kSlave) && role == kMaster) {
    if ((ri.flags & kPromoted) && (m.flags & kFailoverInProgress) && m.failover_state == FailoverState::WaitPromotion) {
      // The promotion is confirmed: the failover's epoch becomes the
      // master's config epoch, and clients are now told the new address.
      m.config_epoch = m.failover_epoch;
      m.failover_state = FailoverState::ReconfSlaves;
      m.failover_state_change_time = now;
      event(true, "+promoted-slave " + name_of(ri.id) + ": its INFO reports role:master; clients asking for " +
                      m.name + " are told " + name_of(ri.id) + " from now on", ri.id);
      // sentinelForceHelloUpdateForMaster (:3080-3087).
      for (Instance& si : m.sentinels)
        if (si.last_pub_time >= kPublishPeriod + 1) si.last_pub_time -= kPublishPeriod + 1;
    } else {
      // A replica that says it is a master, for more than 4 hello periods,
      // with a sane master and no recent SDOWN/ODOWN: make it a replica.
      const ms_t wait_time = kPublishPeriod * 4;
      if (!(ri.flags & kPromoted) && looks_sane(m) && no_down_for(ri, wait_time) &&
          now - ri.role_reported_time > wait_time && send_slaveof(group, ri, m.id))
        event(true, "+convert-to-slave " + name_of(ri.id) + " (a master for more than 8 s; now a replica of " +
                        name_of(m.id) + ")", ri.id);
    }
  }
  if ((ri.flags & kSlave) && role == kSlave && ri.slave_master_host != name_of(m.id)) {
    const ms_t wait_time = ms_of(settings_.failover_timeout);
    if (looks_sane(m) && no_down_for(ri, wait_time) && now - ri.slave_conf_change_time > wait_time &&
        send_slaveof(group, ri, m.id))
      event(false, "+fix-slave-config " + name_of(ri.id), ri.id);
  }
  if ((ri.flags & kSlave) && role == kSlave && (ri.flags & (kReconfSent | kReconfInprog))) {
    if ((ri.flags & kReconfSent) && m.promoted != kNoProc && ri.slave_master_host == name_of(m.promoted)) {
      ri.flags = (ri.flags & ~kReconfSent) | kReconfInprog;
      event(false, "+slave-reconf-inprog " + name_of(ri.id), ri.id);
    }
    if ((ri.flags & kReconfInprog) && ri.slave_master_link_up) {
      ri.flags = (ri.flags & ~kReconfInprog) | kReconfDone;
      event(false, "+slave-reconf-done " + name_of(ri.id), ri.id);
    }
  }
}

// sentinelMasterLooksSane (:2498-2510).
bool Sentinel::looks_sane(const Master& m) const {
  return (m.flags & kMaster) && m.role_reported == kMaster && !(m.flags & (kSDown | kODown)) &&
         mstime() - m.info_refresh < kInfoPeriod * 2;
}

// sentinelRedisInstanceNoDownFor (:1653-1660): since it last *entered* SDOWN or ODOWN.
bool Sentinel::no_down_for(const Instance& ri, ms_t ms) const {
  const ms_t most_recent = std::max(ri.s_down_since, ri.o_down_since);
  return most_recent == 0 || mstime() - most_recent > ms;
}

// --- The election ---------------------------------------------------------------

// sentinelVoteLeader (:4635-4663): one vote per epoch, to the first asker; a
// sentinel that votes for another holds back its own attempt.
std::string Sentinel::vote_leader(Master& m, std::uint64_t req_epoch, const std::string& req_runid,
                                  std::uint64_t& leader_epoch) {
  if (req_epoch > current_epoch_) {
    current_epoch_ = req_epoch;
    event(false, "+new-epoch " + std::to_string(current_epoch_), m.id);
  }
  if (m.leader_epoch < req_epoch && current_epoch_ <= req_epoch) {
    m.leader = req_runid;
    m.leader_epoch = current_epoch_;
    event(false, "+vote-for-leader " + m.leader + " " + std::to_string(m.leader_epoch), m.id);
    if (m.leader != name()) m.failover_start_time = mstime() + static_cast<ms_t>(rng().below(kMaxDesync));
  }
  leader_epoch = m.leader_epoch;
  return m.leader;
}

// sentinelGetLeader (:4691-4756): the most voted, if it has a majority of
// the sentinels known for this master (us included) and at least quorum.
std::string Sentinel::get_leader(Master& m, std::uint64_t epoch) {
  const std::size_t voters = m.sentinels.size() + 1;
  std::map<std::string, std::size_t> counters;
  for (const Instance& si : m.sentinels)
    if (!si.leader.empty() && si.leader_epoch == current_epoch_) ++counters[si.leader];
  std::string winner;
  std::size_t max_votes = 0;
  for (const auto& [runid, votes] : counters)
    if (votes > max_votes) {
      max_votes = votes;
      winner = runid;
    }
  std::uint64_t leader_epoch = 0;
  const std::string myvote = vote_leader(m, epoch, winner.empty() ? name() : winner, leader_epoch);
  if (!myvote.empty() && leader_epoch == epoch) {
    const std::size_t votes = ++counters[myvote];
    if (votes > max_votes) {
      max_votes = votes;
      winner = myvote;
    }
  }
  const std::size_t voters_quorum = voters / 2 + 1;
  if (!winner.empty() && (max_votes < voters_quorum || max_votes < static_cast<std::size_t>(settings_.quorum)))
    winner.clear();
  return winner;
}

// --- The failover ----------------------------------------------------------------

// sentinelStartFailoverIfNeeded (:4858-4886): ODOWN, none in progress, and
// the last attempt (ours, or a vote for another) 2 x failover_timeout ago.
bool Sentinel::start_failover_if_needed(Master& m) {
  if (!(m.flags & kODown) || (m.flags & kFailoverInProgress)) return false;
  if (mstime() - m.failover_start_time < ms_of(settings_.failover_timeout) * 2) return false;
  start_failover(m);
  return true;
}

// sentinelStartFailover (:4834-4846).
void Sentinel::start_failover(Master& m) {
  m.failover_state = FailoverState::WaitStart;
  m.flags |= kFailoverInProgress;
  m.failover_epoch = ++current_epoch_;
  event(false, "+new-epoch " + std::to_string(current_epoch_), m.id);
  event(false, "+try-failover master " + name_of(m.id) + " epoch " + std::to_string(m.failover_epoch), m.id);
  m.failover_start_time = mstime() + static_cast<ms_t>(rng().below(kMaxDesync));
  m.failover_state_change_time = mstime();
}

void Sentinel::force_failover(const std::string& group) {
  if (state() == State::Down) return;
  for (Master& m : masters_) {
    if (m.name != group) continue;
    if (m.flags & kFailoverInProgress) {
      event(false, "SENTINEL FAILOVER " + group + ": -INPROG Failover already in progress", m.id);
      return;
    }
    if (!select_slave(m)) {
      event(true, "SENTINEL FAILOVER " + group + ": -NOGOODSLAVE No suitable replica to promote", m.id);
      return;
    }
    event(true, "SENTINEL FAILOVER " + group + ": executing user requested FAILOVER", m.id);
    start_failover(m);
    m.flags |= kForceFailover;
  }
}

// sentinelFailoverStateMachine (:5217-5241).
void Sentinel::failover_state_machine(std::size_t group, Master& m) {
  if (!(m.flags & kFailoverInProgress)) return;
  const ms_t now = mstime();
  switch (m.failover_state) {
    case FailoverState::WaitStart:
      wait_start(m);
      break;
    case FailoverState::SelectSlave:  // sentinelFailoverSelectSlave (:5027-5044)
      if (Instance* s = select_slave(m)) {
        event(false, "+selected-slave " + name_of(s->id), s->id);
        s->flags |= kPromoted;
        m.promoted = s->id;
        m.failover_state = FailoverState::SendSlaveofNoone;
        m.failover_state_change_time = now;
      } else {
        event(true, "-failover-abort-no-good-slave master " + name_of(m.id), m.id);
        abort_failover(m);
      }
      break;
    case FailoverState::SendSlaveofNoone: {  // sentinelFailoverSendSlaveOfNoOne (:5046-5071)
      Instance* s = slave(m, m.promoted);
      if (!s || s->link.disconnected) {
        if (now - m.failover_state_change_time > ms_of(settings_.failover_timeout)) {
          event(true, "-failover-abort-slave-timeout master " + name_of(m.id), m.id);
          abort_failover(m);
        }
        break;
      }
      if (!send_slaveof(group, *s, kNoProc)) break;
      event(true, "promoting " + name_of(s->id) + " (REPLICAOF NO ONE, CLIENT KILL); clients asking for " + m.name +
                      " are still told " + name_of(m.id) + " until its INFO confirms", s->id);
      m.failover_state = FailoverState::WaitPromotion;
      m.failover_state_change_time = now;
      break;
    }
    case FailoverState::WaitPromotion:  // sentinelFailoverWaitPromotion (:5074-5081)
      if (now - m.failover_state_change_time > ms_of(settings_.failover_timeout)) {
        event(true, "-failover-abort-slave-timeout master " + name_of(m.id), m.id);
        abort_failover(m);
      }
      break;
    case FailoverState::ReconfSlaves:
      reconf_next_slave(group, m);
      break;
    case FailoverState::None:
    case FailoverState::UpdateConfig:
      break;
  }
}

// sentinelFailoverWaitStart (:4994-5025).
void Sentinel::wait_start(Master& m) {
  const bool leader = get_leader(m, m.failover_epoch) == name();
  if (!leader && !(m.flags & kForceFailover)) {
    const ms_t election_timeout = std::min(kElectionTimeout, ms_of(settings_.failover_timeout));
    if (mstime() - m.failover_start_time > election_timeout) {
      event(true, "-failover-abort-not-elected master " + name_of(m.id) + " epoch " + std::to_string(m.failover_epoch),
            m.id);
      abort_failover(m);
    }
    return;
  }
  event(true, "+elected-leader master " + name_of(m.id) + " epoch " + std::to_string(m.failover_epoch), m.id);
  m.failover_state = FailoverState::SelectSlave;
  m.failover_state_change_time = mstime();
}

// sentinelSelectSlave and compareSlavesForPromotion (:4920-4992).
Sentinel::Instance* Sentinel::select_slave(Master& m) {
  const ms_t now = mstime();
  ms_t max_master_down_time = ms_of(settings_.down_after) * 10;
  if (m.flags & kSDown) max_master_down_time += now - m.s_down_since;
  const ms_t ping_period = ms_of(settings_.ping_period);
  std::vector<Instance*> ok;
  for (Instance& s : m.slaves) {
    if (s.flags & (kSDown | kODown)) continue;
    if (s.link.disconnected) continue;
    if (now - s.link.last_avail_time > ping_period * 5) continue;
    if (s.slave_priority == 0) continue;
    const ms_t info_validity_time = (m.flags & kSDown) ? ping_period * 5 : kInfoPeriod * 3;
    if (now - s.info_refresh > info_validity_time) continue;
    if (s.master_link_down_time > max_master_down_time) continue;
    ok.push_back(&s);
  }
  if (ok.empty()) return nullptr;
  std::sort(ok.begin(), ok.end(), [](const Instance* a, const Instance* b) {
    if (a->slave_priority != b->slave_priority) return a->slave_priority < b->slave_priority;
    if (a->slave_repl_offset != b->slave_repl_offset) return a->slave_repl_offset > b->slave_repl_offset;
    if (a->runid.empty() != b->runid.empty()) return b->runid.empty();  // no run id sorts last
    return a->runid < b->runid;
  });
  return ok.front();
}

// sentinelFailoverReconfNextSlave (:5146-5204): SLAVEOF the new master,
// parallel_syncs at a time; one silent for 10 s counts as done.
void Sentinel::reconf_next_slave(std::size_t group, Master& m) {
  const ms_t now = mstime();
  int in_progress = 0;
  for (const Instance& s : m.slaves)
    if (s.flags & (kReconfSent | kReconfInprog)) ++in_progress;
  for (std::size_t i = 0; i < m.slaves.size() && in_progress < settings_.parallel_syncs; ++i) {
    Instance& s = m.slaves[i];
    if (s.flags & (kPromoted | kReconfDone)) continue;
    if ((s.flags & kReconfSent) && now - s.slave_reconf_sent_time > kSlaveReconfTimeout) {
      event(false, "-slave-reconf-sent-timeout " + name_of(s.id), s.id);
      s.flags = (s.flags & ~kReconfSent) | kReconfDone;
    }
    if (s.flags & (kReconfSent | kReconfInprog)) continue;
    if (s.link.disconnected) continue;
    if (send_slaveof(group, s, m.promoted)) {
      s.flags |= kReconfSent;
      s.slave_reconf_sent_time = now;
      event(false, "+slave-reconf-sent " + name_of(s.id), s.id);
      ++in_progress;
    }
  }
  detect_end(group, m);
}

// sentinelFailoverDetectEnd (:5083-5141).
void Sentinel::detect_end(std::size_t group, Master& m) {
  Instance* promoted = slave(m, m.promoted);
  if (!promoted || (promoted->flags & kSDown)) return;
  int not_reconfigured = 0;
  for (const Instance& s : m.slaves)
    if (!(s.flags & (kPromoted | kReconfDone)) && !(s.flags & kSDown)) ++not_reconfigured;
  const bool timeout = mstime() - m.failover_state_change_time > ms_of(settings_.failover_timeout);
  if (timeout) {
    not_reconfigured = 0;
    event(false, "+failover-end-for-timeout master " + name_of(m.id), m.id);
  }
  if (not_reconfigured == 0) {
    event(false, "+failover-end master " + name_of(m.id), m.id);
    m.failover_state = FailoverState::UpdateConfig;
    m.failover_state_change_time = mstime();
  }
  if (timeout)
    for (Instance& s : m.slaves)
      if (!(s.flags & (kPromoted | kReconfDone | kReconfSent)) && !s.link.disconnected && send_slaveof(group, s, m.promoted))
        s.flags |= kReconfSent;
}

// sentinelAbortFailover (:5246-5260).
void Sentinel::abort_failover(Master& m) {
  m.flags &= ~(kFailoverInProgress | kForceFailover);
  m.failover_state = FailoverState::None;
  m.failover_state_change_time = mstime();
  if (Instance* s = slave(m, m.promoted)) s->flags &= ~kPromoted;
  m.promoted = kNoProc;
}

// sentinelFailoverSwitchToPromotedSlave (:5206-5215).
void Sentinel::switch_to_promoted(Master& m) {
  const ProcId ref = m.promoted != kNoProc ? m.promoted : m.id;
  event(true, "+switch-master " + m.name + ": " + name_of(m.id) + " -> " + name_of(ref) + "; " + name_of(m.id) +
                  " is listed as a replica", ref);
  reset_master_and_change_address(m, ref);
}

// sentinelResetMasterAndChangeAddress and sentinelResetMaster (:1531-1650):
// the old master joins the replicas; every replica entry starts afresh; the
// master may fail over again at once (failover_start_time = 0).
void Sentinel::reset_master_and_change_address(Master& m, ProcId new_master) {
  std::vector<ProcId> slaves;
  for (const Instance& s : m.slaves)
    if (s.id != new_master) slaves.push_back(s.id);
  if (new_master != m.id) slaves.push_back(m.id);
  m.slaves.clear();
  close_link(m);
  m.flags &= kMaster;
  m.leader.clear();
  m.failover_state = FailoverState::None;
  m.failover_state_change_time = 0;
  m.failover_start_time = 0;
  m.promoted = kNoProc;
  m.runid.clear();
  m.slave_master_host.clear();
  const ms_t now = mstime();
  m.link.act_ping_time = now;
  m.link.last_ping_time = 0;
  m.link.last_avail_time = m.link.last_pong_time = now;
  m.role_reported_time = now;
  m.role_reported = kMaster;
  m.id = new_master;
  m.o_down_since = m.s_down_since = 0;
  for (ProcId s : slaves) m.slaves.push_back(make_instance(kSlave, s));
}

}  // namespace locksim
