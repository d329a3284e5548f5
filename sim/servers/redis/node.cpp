#include "sim/servers/redis/node.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace locksim {

using redis::Op;
using redis::Reply;
using redis::Request;

namespace {

// mstime(): a wall-clock reading in whole milliseconds, rounded down
// (ustime()/1000, server.c:189-202). Expiry deadlines and the instants they
// are compared with are both on this grid (db.c:1650).
Instant whole_ms(Instant t) {
  const std::int64_t ms = t.ns() / 1'000'000 - (t.ns() % 1'000'000 < 0 ? 1 : 0);
  return Instant::from_ns(ms * 1'000'000);
}
// What a client sends as PX: whole milliseconds (at least 1: PX 0 is an error).
Duration px_ms(Duration px) { return Duration::ms(std::max<std::int64_t>(1, px.whole_ms())); }
bool expired_at(const RedisNode::Entry& e, Instant now) { return e.expires_at && whole_ms(now) > *e.expires_at; }

constexpr std::size_t kBacklogChanges = 10'000;  // repl-backlog-size 1mb, in changes of a lock's size
// repl-timeout is 60 s (config.c), but a dropped PSYNC here is gone for good,
// where TCP would retransmit its SYN: a replica gives up on an attempt after
// this long and tries again at the next replicationCron pass.
constexpr Duration kSyncAttempt = Duration::s(1);
constexpr Duration kReplicationCron = Duration::s(1);  // replicationCron, once a second (server.c)

// The sync payload (an RDB, or the backlog for a partial resync), as text:
// "S <len>:<key> <len>:<value> <expiry ms|-> <setter>\n" or "D <len>:<key>\n".
void put_field(std::string& out, const std::string& s) {
  out += std::to_string(s.size());
  out += ':';
  out += s;
}
struct Reader {
  const std::string& s;
  std::size_t at = 0;
  bool done() const { return at >= s.size(); }
  char ch() { return s[at++]; }
  std::int64_t number() {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data() + at, s.data() + s.size(), v);
    at = static_cast<std::size_t>(end - s.data());
    return v;
  }
  std::string field() {
    const auto n = static_cast<std::size_t>(number());
    ++at;  // ':'
    std::string out = s.substr(at, n);
    at += n;
    return out;
  }
  std::string word() {
    const std::size_t end = s.find_first_of(" \n", at);
    std::string out = s.substr(at, end - at);
    at = end;
    return out;
  }
};

}  // namespace

RedisNode::RedisNode(World& world, std::string name, const ClockSpec& clock, RedisConfig config)
    : Process(world, std::move(name), ProcessRole::LockNode, clock), config_(config) {
  new_replid();
  spawn(active_expire_loop());
}

void RedisNode::on_message(Message& m) {
  if (const auto* change = std::get_if<Request>(&m.body); change && change->replicated) {
    // A promoted or demoted node has closed its link to whoever sent this.
    if (m.from == master_ && is_replica()) apply_from_master(*change);
    else note(Ev::Dropped, {.peer = m.from, .detail = "replication from a node that is not its master"});
    return;
  }
  if (const auto* req = std::get_if<Request>(&m.body)) {
    // A request that was on its way when CLIENT KILL closed its connection
    // meets a closed socket: the sender sees a reset.
    if (m.id <= killed_up_to_ && m.from != killer_ && req->op != Op::Psync) {
      note(Ev::Dropped, {.peer = m.from, .value = static_cast<std::int64_t>(m.id),
                         .detail = "connection closed by CLIENT KILL: " + redis::describe(*req)});
      refuse(m);
      return;
    }
    if (req->op == Op::Wait) {
      wait_command(m, *req);
      return;
    }
    if (req->op == Op::ReplconfAck) {
      replconf_ack(m.from, req->offset);
      return;
    }
    Reply r = execute(*req, m.from, m.content);  // its fingerprint was taken when it was sent
    if (!req->no_reply) reply(m, std::move(r));
    return;
  }
  Process::on_message(m);
}

void RedisNode::on_crash() {
  expiry_alarm_.reset();  // its coroutine is gone
  // The AOF was written to the OS before each reply: a process crash loses
  // nothing acknowledged with either fsync policy (see RedisConfig).
  if (!config_.aof_always && !config_.aof_everysec) keys_.clear();
  subscribers_.clear();  // connections are gone
  replicas_.clear();
  client_woff_.clear();
  ack_waiters_.clear();  // their timeout tasks are gone with the crash
  dirty_.clear();
  link_ = Link::Down;
}

// A restart loads the AOF (if any) but no replication id or offset: those
// come back only from an RDB (server.c:6586-6592 vs 6608-6638). So the node
// starts a new history and any replica of it, or it of a master, resyncs in
// full. Its role is what its config file says: REPLICAOF is rewritten there
// by the sentinel's CONFIG REWRITE.
void RedisNode::on_restart() {
  new_replid();
  replid2_.clear();
  second_replid_offset_ = -1;
  repl_offset_ = 0;
  backlog_.clear();
  has_backlog_ = false;
  master_replid_.clear();
  link_down_since_.reset();
  killed_up_to_ = 0;
  spawn(active_expire_loop());
  if (is_replica()) spawn(replication_cron());
}

RedisNode::Entry* RedisNode::lookup(const std::string& key, Instant now, const char* how) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return nullptr;
  if (expired_at(it->second, now)) {
    // A replica hides a logically expired key but waits for its master's DEL.
    if (!is_replica()) expire(it, how);
    return nullptr;
  }
  return &it->second;
}

void RedisNode::expire(FlatMap<std::string, Entry>::iterator it, const char* how) {
  dirty_.push_back(it->first);
  note(Ev::Expired, {.owner = it->second.setter,
                     .value = it->second.expires_at->ns(),
                     .key = it->first,
                     .detail = std::string(how) + "; it was due at " + format_instant(*it->second.expires_at) +
                               " on " + name() + "'s clock"});
  keys_.erase(it);
}

void RedisNode::erase(const std::string& key, ProcId requester) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  note(Ev::KeyDeleted, {.peer = requester, .owner = it->second.setter, .key = key,
                        .detail = detailed() ? "value " + it->second.value : std::string()});
  keys_.erase(it);
  dirty_.push_back(key);
}

bool RedisNode::set(const Request& req, Instant now, ProcId from, const Entry** held) {
  if (req.nx) {
    if (const Entry* live = lookup(req.key, now, "lazily, on SET NX")) {
      if (held) *held = live;
      return false;
    }
  }
  Entry& e = keys_[req.key];
  e.value = req.value;
  e.setter = from;
  e.holds = 0;  // a string now
  // when = mstime() + PX, in whole ms; PXAT is the absolute when itself
  // (redis 7.0.15 t_string.c:161-186, getExpireMillisecondsOrReply). A PXAT
  // in the past is stored as given and the key reads as expired
  // (setGenericCommand, t_string.c:84-125, does not check it).
  if (req.pxat) e.expires_at = whole_ms(*req.pxat);
  else if (!req.px.is_zero()) e.expires_at = whole_ms(now) + px_ms(req.px);
  else e.expires_at.reset();
  dirty_.push_back(req.key);
  return true;
}

namespace {
bool is_write(redis::Op op) {
  switch (op) {
    case Op::Get:
    case Op::Exists:
    case Op::Pttl:
    case Op::Subscribe:
    case Op::Ping:
    case Op::ReplicaOfNoOne:
    case Op::ReplicaOf:
    case Op::GetMasterAddr:
    case Op::Info:
    case Op::Psync:
    case Op::SentinelIsMasterDown:
    case Op::Publish:
    case Op::Wait:
    case Op::ReplconfGetack:
    case Op::ReplconfAck:
      return false;
    default:
      return true;
  }
}
// The scripts (EVAL) of lockalgos/: on a replica each runs until it calls a write.
bool is_script(redis::Op op) {
  switch (op) {
    case Op::CompareAndDelete:
    case Op::AcquireWithToken:
    case Op::CompareAndPexpire:
    case Op::RedissonTryLock:
    case Op::RedissonUnlock:
    case Op::RedissonTryLockFenced:
      return true;
    default:
      return false;
  }
}

constexpr const char* kReadOnly = "READONLY You can't write against a read only replica.";
}  // namespace

// A script sent to a replica. EVAL without flags (compatibility mode) skips
// the up-front refusal of write scripts on a read-only replica (redis 7.0.15
// script.c:134-160) and runs; its first write command fails with READONLY
// (script.c:349-381, scriptVerifyWriteCommandAllow), which fails the script.
// So a script whose reads send it down a path with no write answers as on a
// master: compare-and-delete of a value the replica does not hold is 0, not
// READONLY. A replica hides an expired key without deleting it (lookup).
Reply RedisNode::script_on_replica(const Request& req, Instant now) {
  const Entry* e = lookup(req.key, now, "hidden, in a script on a replica");
  const bool ours = e && e->value == req.value;
  switch (req.op) {
    case Op::CompareAndDelete:
    case Op::CompareAndPexpire:
      return ours ? Reply::error(kReadOnly) : Reply::of(0);
    case Op::RedissonTryLock:
    case Op::RedissonTryLockFenced:
      // Held by another: the script only reads its PTTL.
      if (e && !ours) return Reply::of(e->expires_at ? (*e->expires_at - whole_ms(now)).whole_ms() : -1);
      return Reply::error(kReadOnly);
    case Op::RedissonUnlock:
      return ours ? Reply::error(kReadOnly) : Reply::nil();
    default:  // acquire-with-token: its first call is SET
      return Reply::error(kReadOnly);
  }
}

void RedisNode::note_command(const Request& req, const Reply& r, ProcId from, std::uint64_t request,
                             std::optional<ProcId> owner) {
  Trace& trace = world().trace();
  if (!trace.wants(Ev::Command)) return trace.skip();
  // The key's holder after the command, when it is the requester: what the
  // lock service holds, for the judge (judge/checkers.cpp, ServiceHoldings).
  ProcId holder = kNoProc;
  if (owner) {
    holder = *owner;
  } else if (const auto it = keys_.find(req.key); from != kNoProc && it != keys_.end() && it->second.setter == from) {
    holder = from;
  }
  // A refused SET NX, say: the judge reads no command that leaves nobody
  // holding (Judge::kOwnedOnly), and a lean run has no other reader.
  if (holder == kNoProc && !trace.wants_unowned(Ev::Command)) return trace.skip();
  const std::uint64_t content =
      trace.hashing() ? (request != 0 ? request : fingerprint(req)) ^ (fingerprint(r) * 3) : 0;
  // Most of a long contended run's commands (refused SETs, unlocks of what
  // another holds) leave nobody holding: hashed from their fields, not built.
  if (holder == kNoProc && trace.hash_only_unowned(Ev::Command))
    return note_hashed(Ev::Command, from, 0, content, req.key);
  TraceEvent e{.peer = from, .owner = holder, .key = req.key, .content = content};
  if (detailed()) e.detail = describe(req) + " -> " + describe(r);
  note(Ev::Command, std::move(e));
}

Reply RedisNode::execute(const Request& req, ProcId from, std::uint64_t content) {
  // One wall-clock reading for the whole command or script (commandTimeSnapshot).
  const Instant now = wall_now();
  Reply r;
  std::optional<ProcId> owner;  // after the command, when a case knows it (note_command)
  if (is_replica() && is_write(req.op) && from != kNoProc) {
    r = is_script(req.op) ? script_on_replica(req, now) : Reply::error(kReadOnly);
    note_command(req, r, from, content);
    return r;
  }
  switch (req.op) {
    case Op::Get: {
      const Entry* e = lookup(req.key, now, "lazily, on GET");
      r = e ? Reply::of(e->value.text()) : Reply::nil();
      break;
    }
    case Op::Set: {
      // Who holds the key after it, known here without a second look-up:
      // the requester if it set the key, else whoever set the live entry
      // that refused an NX.
      const Entry* held = nullptr;
      const bool done = set(req, now, from, &held);
      r = done ? Reply::ok() : Reply::nil();
      owner = done || (held && held->setter == from) ? from : kNoProc;
      break;
    }
    case Op::SetNx: {
      Request nx = req;
      nx.nx = true;
      nx.px = Duration::zero();
      r = Reply::of(set(nx, now, from) ? 1 : 0);
      break;
    }
    case Op::Del: {
      const bool existed = lookup(req.key, now, "lazily, on DEL") != nullptr;
      if (existed) erase(req.key, from);
      r = Reply::of(existed ? 1 : 0);
      break;
    }
    case Op::Incr:
      r = incr(req, now, from);
      break;
    case Op::Exists:
      r = Reply::of(lookup(req.key, now, "lazily, on EXISTS") ? 1 : 0);
      break;
    case Op::Pttl: {
      const Entry* e = lookup(req.key, now, "lazily, on PTTL");
      if (!e) r = Reply::of(-2);
      else if (!e->expires_at) r = Reply::of(-1);
      else r = Reply::of((*e->expires_at - whole_ms(now)).whole_ms());
      break;
    }
    case Op::CompareAndDelete: {
      const Entry* e = lookup(req.key, now, "lazily, in the compare-and-delete script");
      const bool ours = e && e->value == req.value;
      owner = !ours && e && e->setter == from ? from : kNoProc;  // ours: deleted
      if (ours) erase(req.key, from);
      r = Reply::of(ours ? 1 : 0);
      break;
    }
    case Op::AcquireWithToken:
      r = acquire_with_token(req, now, from);
      break;
    case Op::RedissonTryLock:
    case Op::RedissonTryLockFenced:
      r = redisson_try_lock(req, now, from);
      break;
    case Op::RedissonUnlock:
      r = redisson_unlock(req, now, from);
      break;
    case Op::CompareAndPexpire:
      r = compare_and_pexpire(req, now);
      break;
    case Op::Pexpire: {
      Entry* e = lookup(req.key, now, "lazily, on PEXPIRE");
      if (e) {
        e->expires_at = whole_ms(now) + px_ms(req.px);
        dirty_.push_back(req.key);
      }
      r = Reply::of(e ? 1 : 0);
      break;
    }
    default:
      r = server_command(req, from);
      break;
  }
  note_command(req, r, from, content, owner);
  propagate();
  // c->woff (server.c:4021); with no backlog yet the offset is 0 for everyone.
  if (has_backlog_ && from != kNoProc && !is_replica()) client_woff_[from] = repl_offset_;
  nudge_expiry();
  return r;
}

Reply RedisNode::incr(const Request& req, Instant now, ProcId from) {
  Entry* e = lookup(req.key, now, "lazily, on INCR");
  std::int64_t n = 0;
  if (e) {
    try {
      n = std::stoll(e->value.text());
    } catch (const std::exception&) {
      return Reply::error("ERR value is not an integer or out of range");
    }
  }
  ++n;
  if (!e) e = &keys_[req.key];
  e->value = std::to_string(n);
  e->setter = from;
  dirty_.push_back(req.key);
  return Reply::of(n);
}

Reply RedisNode::acquire_with_token(const Request& req, Instant now, ProcId from) {
  Request set_req = req;
  set_req.op = Op::Set;
  set_req.nx = true;
  if (!set(set_req, now, from)) return Reply::nil();
  Entry* t = lookup(req.token_key, now, "lazily, on INCR");
  std::int64_t n = t ? std::stoll(t->value.text()) : 0;
  ++n;
  if (!t) t = &keys_[req.token_key];
  t->value = std::to_string(n);
  dirty_.push_back(req.token_key);
  return Reply::of(n);
}

// RedissonLock.java:314-322 (redisson-4.7.0): absent or ours -> HINCRBY the
// field by 1 (a re-entry counts), PEXPIRE, nil; else PTTL.
Reply RedisNode::redisson_try_lock(const Request& req, Instant now, ProcId from) {
  Entry* e = lookup(req.key, now, "lazily, in the trylock script");
  if (e && e->value != req.value) return Reply::of(e->expires_at ? (*e->expires_at - whole_ms(now)).whole_ms() : -1);
  const bool fresh = !e;
  const std::int64_t holds = fresh ? 1 : e->holds + 1;
  Request s = req;
  s.nx = false;
  set(s, now, from);
  keys_[req.key].holds = holds;
  if (req.op != Op::RedissonTryLockFenced) return Reply::nil();
  Entry* t = lookup(req.token_key, now, "lazily, on INCR");
  std::int64_t n = t ? std::stoll(t->value.text()) : 0;
  if (fresh) {
    ++n;
    if (!t) t = &keys_[req.token_key];
    t->value = std::to_string(n);
    dirty_.push_back(req.token_key);
  }
  return Reply{Reply::Kind::Ok, n, {}};
}

// RedissonLock.java:354-366 (redisson-4.7.0): not ours -> nil; HINCRBY the
// field by -1; still > 0 (re-entered) -> PEXPIRE the lease (px), 0; else
// DEL, PUBLISH, 1. (The unlock latch, KEYS[3], for retried unlocks: not modelled.)
Reply RedisNode::redisson_unlock(const Request& req, Instant now, ProcId from) {
  Entry* e = lookup(req.key, now, "lazily, in the unlock script");
  if (!e || e->value != req.value) return Reply::nil();
  if (--e->holds > 0) {
    if (!req.px.is_zero()) e->expires_at = whole_ms(now) + px_ms(req.px);
    dirty_.push_back(req.key);
    return Reply::of(0);
  }
  erase(req.key, from);
  for (ProcId sub : subscribers_[req.key]) send(sub, Reply::of(std::string("unlocked ") + req.key));
  return Reply::of(1);
}

Reply RedisNode::compare_and_pexpire(const Request& req, Instant now) {
  Entry* e = lookup(req.key, now, "lazily, in the compare-and-pexpire script");
  const bool ours = e && e->value == req.value;
  if (ours) {
    e->expires_at = whole_ms(now) + px_ms(req.px);
    dirty_.push_back(req.key);
  }
  return Reply::of(ours ? 1 : 0);
}

// The sentinel's MULTI; SLAVEOF host port; CONFIG REWRITE; CLIENT KILL TYPE
// normal; CLIENT KILL TYPE pubsub; EXEC (sentinel.c:4766-4830), as one request.
Reply RedisNode::replica_of(const Request& req, ProcId from) {
  const auto master = world().find(req.key);
  if (!master || *master == id()) return Reply::error("ERR no such node");
  become_replica_of(*master, from);
  kill_clients(from);
  return Reply::ok();
}

// The commands that are not about the keyspace: pub/sub, replication, INFO.
Reply RedisNode::server_command(const Request& req, ProcId from) {
  Reply r;
  switch (req.op) {
    case Op::Subscribe: {
      auto& subs = subscribers_[req.key];
      if (std::find(subs.begin(), subs.end(), from) == subs.end()) subs.push_back(from);
      r = Reply::ok();
      break;
    }
    case Op::Ping:
      r = Reply::of(std::string("PONG"));
      break;
    case Op::ReplicaOf:
      r = replica_of(req, from);
      break;
    case Op::ReplicaOfNoOne:
      // The same transaction with SLAVEOF NO ONE.
      become_master();
      kill_clients(from);
      r = Reply::ok();
      break;
    case Op::Info:
      r = Reply::of(info());
      break;
    case Op::Psync:
      r = serve_psync(req, from);
      break;
    case Op::Publish:
      r = Reply::of(static_cast<std::int64_t>(subscribers_[req.key].size()));
      for (ProcId sub : subscribers_[req.key]) send(sub, Reply::of(req.value.text()));
      break;
    case Op::GetMasterAddr:
    case Op::SentinelIsMasterDown:
      r = Reply::error("ERR unknown command, this is not a sentinel");
      break;
    default:
      r = Reply::error("ERR unknown command");
      break;
  }
  return r;
}

// --- Replication ------------------------------------------------------------

void RedisNode::new_replid() {
  // A replication id is 40 random hex characters (changeReplicationId); here
  // the node's name and a serial: unique, and no draw from the node's stream.
  replid_ = name() + "#" + std::to_string(++replid_serial_);
}

void RedisNode::add_replica(ProcId replica, DurationRange lag, bool pxat) { attach_replica(replica, lag, pxat); }

void RedisNode::attach_replica(ProcId replica, DurationRange lag, bool pxat) {
  std::erase_if(replicas_, [replica](const Replica& r) { return r.id == replica; });
  replicas_.push_back({replica, lag, pxat});
  has_backlog_ = true;  // createReplicationBacklog, when the first replica attaches
}

// At the start of a run the replica is in sync with its master (both empty).
void RedisNode::replicate_from(ProcId master) {
  master_ = master;
  const auto* m = dynamic_cast<const RedisNode*>(&world().process(master));
  replid_ = master_replid_ = m ? m->replid_ : std::string();
  repl_offset_ = m ? m->repl_offset_ : 0;
  has_backlog_ = true;
  link_ = Link::Connected;
  master_epoch_ = world().process(master).epoch();
  spawn(replication_cron());
}

// replicationSetMaster (replication.c:2959-3007): drop the old master link,
// remember our own history to PSYNC with, connect to the new master now.
void RedisNode::become_replica_of(ProcId master, ProcId from) {
  const bool was_master = !is_replica();
  note(Ev::Command, {.peer = from, .detail = "demoted: now a replica of " + world().trace().name(master) +
                                             "; serving its old data read-only until the sync"});
  if (was_master) master_replid_ = replid_;  // replicationCacheMasterUsingMyself
  master_ = master;
  replicas_.clear();
  dirty_.clear();
  link_ = Link::Down;
  link_down_since_.reset();
  if (was_master) spawn(replication_cron());
  spawn(sync_with_master());
}

// replicationUnsetMaster: keep the old history as the second id, valid up to
// where we got (shiftReplicationId: second_replid_offset = offset + 1).
void RedisNode::become_master() {
  if (!is_replica()) return;
  replid2_ = replid_;
  second_replid_offset_ = repl_offset_ + 1;
  new_replid();
  master_ = kNoProc;
  link_ = Link::Down;
  note(Ev::Promoted, {.detail = "keys it holds: " + std::to_string(keys_.size())});
}

void RedisNode::kill_clients(ProcId except) {
  killed_up_to_ = world().network().messages_sent();
  killer_ = except;
  subscribers_.clear();  // CLIENT KILL TYPE pubsub
}

// masterTryPartialResynchronization (replication.c:737-774): continue if the
// replica asks for our history (or the one we continue, up to where we took
// it over) at an offset the backlog still holds; otherwise a full resync.
Reply RedisNode::serve_psync(const Request& req, ProcId from) {
  if (is_replica()) return Reply::error("NOMASTERLINK Can't SYNC while not connected with my master");
  const std::string& asked = req.key;
  const std::int64_t psync_offset = req.offset;
  const bool same_history = asked == replid_ || (asked == replid2_ && psync_offset <= second_replid_offset_);
  const std::int64_t backlog_start = backlog_.empty() ? repl_offset_ + 1 : backlog_.front().offset;
  const bool in_backlog = has_backlog_ && psync_offset >= backlog_start && psync_offset <= repl_offset_ + 1;
  std::string out;
  auto put_key = [&](const std::string& key) {
    auto it = keys_.find(key);
    if (it == keys_.end()) {
      out += "D ";
      put_field(out, key);
    } else {
      out += "S ";
      put_field(out, key);
      out += ' ';
      put_field(out, it->second.value.text());
      out += ' ' + (it->second.expires_at ? std::to_string(it->second.expires_at->ns() / 1'000'000) : "-");
      out += ' ' + std::to_string(static_cast<std::int64_t>(it->second.setter));
    }
    out += '\n';
  };
  if (same_history && in_backlog) {
    // +CONTINUE, then the backlog from the offset: its effect is the present
    // state of every key it touches.
    out = "CONTINUE " + replid_ + " " + std::to_string(repl_offset_) + "\n";
    std::set<std::string> touched;
    for (const BacklogEntry& b : backlog_)
      if (b.offset >= psync_offset) touched.insert(b.key);
    for (const std::string& key : touched) put_key(key);
  } else {
    // +FULLRESYNC, then the RDB: every key, expiries as absolute ms.
    out = "FULLRESYNC " + replid_ + " " + std::to_string(repl_offset_) + "\n";
    for (const auto& [key, e] : keys_) put_key(key);
  }
  const auto* replica = dynamic_cast<const RedisNode*>(&world().process(from));
  attach_replica(from, replica ? replica->config_.replication_lag : DurationRange::fixed(Duration::ms(1)),
                 config_.expiry_as_pxat);
  return Reply::of(std::move(out));
}

// The replica's side: PSYNC <cached replid> <offset+1>, then load what comes.
Task<void> RedisNode::sync_with_master() {
  const ProcId master = master_;
  if (link_ == Link::Syncing) co_return;  // an attempt is under way
  link_ = Link::Syncing;
  Request psync;
  psync.op = Op::Psync;
  psync.key = master_replid_.empty() ? "?" : master_replid_;
  psync.offset = repl_offset_ + 1;
  const auto answer = co_await call(master, std::move(psync), kSyncAttempt);
  if (master_ != master || link_ != Link::Syncing) co_return;  // REPLICAOF changed it meanwhile
  const Reply* r = answer ? std::get_if<Reply>(&*answer) : nullptr;
  if (!r || r->kind != Reply::Kind::Str) {
    link_ = Link::Down;
    if (!link_down_since_) link_down_since_ = wall_now();
    co_return;
  }
  load_sync_payload(r->str);
  link_ = Link::Connected;
  link_down_since_.reset();
  master_epoch_ = world().process(master).epoch();
}

void RedisNode::load_sync_payload(const std::string& payload) {
  Reader in{payload};
  const std::string kind = in.word();
  ++in.at;
  const std::string replid = in.word();
  ++in.at;
  const std::int64_t offset = in.number();
  ++in.at;  // '\n'
  const bool full = kind == "FULLRESYNC";
  if (full) {
    // "Flushing old data" (replication.c:2027-2028), then the RDB.
    note(Ev::Command, {.peer = master_, .detail = "full resync from " + world().trace().name(master_) +
                                                  ": flushing " + std::to_string(keys_.size()) + " keys"});
    keys_.clear();
    backlog_.clear();
  } else {
    note(Ev::Command, {.peer = master_, .detail = "partial resync from " + world().trace().name(master_) +
                                                  " at offset " + std::to_string(repl_offset_ + 1) +
                                                  ": keeps its keys"});
  }
  while (!in.done()) {
    const char op = in.ch();
    ++in.at;
    const std::string key = in.field();
    if (op == 'D') {
      keys_.erase(key);
    } else {
      ++in.at;
      Entry& e = keys_[key];
      e.value = in.field();
      ++in.at;
      if (payload[in.at] == '-') {
        ++in.at;
        e.expires_at.reset();
      } else {
        e.expires_at = Instant::from_ns(in.number() * 1'000'000);
      }
      ++in.at;
      e.setter = static_cast<ProcId>(in.number());
    }
    ++in.at;  // '\n'
  }
  replid_ = master_replid_ = replid;
  repl_offset_ = offset;
  has_backlog_ = true;
}

// replicationCron, once a second while a replica: notice a master that went
// away (the OS closes a crashed process's sockets: the replica reads EOF) and
// reconnect while the link is down.
Task<void> RedisNode::replication_cron() {
  while (is_replica()) {
    if (link_ == Link::Connected && master_link_broken()) {
      link_ = Link::Down;
      link_down_since_ = wall_now();
    }
    if (link_ == Link::Down) spawn(sync_with_master());
    co_await sleep(kReplicationCron);
  }
}

bool RedisNode::master_link_broken() {
  const Process& m = world().process(master_);
  return m.state() == State::Down || m.epoch() != master_epoch_;
}

// Asynchronous replication: the master has already answered; each change
// reaches each replica after the replication lag, unless the master dies first.
void RedisNode::propagate() {
  if (is_replica() || !has_backlog_) {  // no backlog, no offset (feedReplicationBuffer)
    dirty_.clear();
    return;
  }
  const Instant now = whole_ms(wall_now());
  for (const std::string& key : dirty_) {
    ++repl_offset_;
    backlog_.push_back({repl_offset_, key});
    if (backlog_.size() > kBacklogChanges) backlog_.pop_front();
    for (const Replica& replica : replicas_) {
      Request change;
      change.replicated = true;
      change.key = key;
      change.offset = repl_offset_;
      auto it = keys_.find(key);
      if (it == keys_.end()) {
        change.op = Op::Del;
      } else {
        change.op = Op::Set;
        change.value = it->second.value;
        change.setter = it->second.setter;
        change.holds = it->second.holds;
        if (it->second.expires_at) {
          if (replica.pxat) change.pxat = it->second.expires_at;  // >= 7.0: absolute master time
          else change.px = max(*it->second.expires_at - now, Duration::ms(1));  // 6.x: the relative PX sent
        }
      }
      spawn(ship(replica.id, std::move(change), replica.lag.draw(rng())));
    }
  }
  dirty_.clear();
}

Task<void> RedisNode::ship(ProcId replica, Request change, Duration lag) {
  co_await sleep(lag);
  send(replica, std::move(change));
}

void RedisNode::apply_from_master(const Request& change) {
  if (change.op == Op::ReplconfGetack) {
    // REPLCONF GETACK: ACK at once what it has applied (replication.c:1208-1213, 3216-3229).
    Request ack;
    ack.op = Op::ReplconfAck;
    ack.offset = repl_offset_;
    ack.no_reply = true;
    send(master_, std::move(ack));
    return;
  }
  if (change.op == Op::Del) {
    keys_.erase(change.key);
  } else {
    Entry& e = keys_[change.key];
    e.value = change.value;
    e.setter = change.setter;
    e.holds = change.holds;
    if (change.pxat) e.expires_at = change.pxat;  // the master's wall time, read on our clock
    else if (!change.px.is_zero()) e.expires_at = whole_ms(wall_now()) + change.px;
    else e.expires_at.reset();
  }
  if (change.offset > repl_offset_) repl_offset_ = change.offset;
  backlog_.push_back({change.offset, change.key});
  if (backlog_.size() > kBacklogChanges) backlog_.pop_front();
  note(Ev::Command, {.peer = master_, .owner = change.op == Op::Del ? kNoProc : change.setter,
                     .key = change.key, .content = fingerprint(change),
                     .detail = "replicated: " + describe(change)});
}

// The fields of INFO that Sentinel reads (sentinel.c:2513-2660), with their
// names from replication.c's INFO replication section.
std::string RedisNode::info() {
  std::string s = "run_id:" + name() + "-" + std::to_string(epoch()) + "\r\n";
  if (is_replica()) {
    s += "role:slave\r\nmaster_host:" + world().trace().name(master_) + "\r\nmaster_port:6379\r\n";
    s += std::string("master_link_status:") + (link_ == Link::Connected ? "up" : "down") + "\r\n";
    if (link_ != Link::Connected)
      s += "master_link_down_since_seconds:" +
           (link_down_since_ ? std::to_string((wall_now() - *link_down_since_).count_ns() / 1'000'000'000) : "-1") +
           "\r\n";
    s += "slave_repl_offset:" + std::to_string(repl_offset_) + "\r\n";
    s += "slave_priority:" + std::to_string(config_.replica_priority) + "\r\n";
  } else {
    s += "role:master\r\nconnected_slaves:" + std::to_string(replicas_.size()) + "\r\n";
    for (std::size_t i = 0; i < replicas_.size(); ++i)
      s += "slave" + std::to_string(i) + ":ip=" + world().trace().name(replicas_[i].id) + ",port=6379,state=online\r\n";
  }
  s += "master_replid:" + replid_ + "\r\nmaster_repl_offset:" + std::to_string(repl_offset_) + "\r\n";
  return s;
}

// --- Active expiry ----------------------------------------------------------

// serverCron's active expiry: hz times a second on the node's monotonic clock,
// on a fixed grid from the node's start, a cycle samples the keys with a TTL
// and deletes the expired ones. A cycle that finds nothing expired changes
// nothing, so the loop sleeps straight to the first tick at which the earliest
// TTL has passed on the node's wall clock, and is woken to decide again when
// that can come sooner (a new key, a promotion, a clock jump). The ticks it
// runs are the ticks that matter, at the same instants.
Task<void> RedisNode::active_expire_loop() {
  expiry_origin_ = mono_now();
  for (;;) {
    const Instant tick = next_useful_tick();
    expiry_target_ = tick;
    co_await expiry_alarm_.sleep_until(tick);
    if (tick == Instant::never() || mono_now() < tick) continue;  // woken to decide again
    active_expire_cycle();
  }
}

// An Instant, not an optional one: g++ 12 passes an optional<Instant> on
// through the stack, its two halves stored apart and loaded as one 16-byte
// word, which waits for both stores to reach the cache (a store-forwarding
// stall), on every command (half of this and nudge_expiry's time
// in a profile of the benchmark).
Instant RedisNode::next_useful_tick() {
  if (is_replica()) return Instant::never();  // iAmMaster only
  bool any = false;
  Instant earliest;
  for (const auto& [key, e] : keys_) {
    if (!e.expires_at.has_value()) continue;
    const Instant at = *e.expires_at;
    if (!any || at < earliest) earliest = at;
    any = true;
  }
  if (!any) return Instant::never();
  // The key is expired from the first millisecond after its deadline. When
  // does the wall clock read that, and what does the monotonic clock read
  // then? (They may run at different rates: ClockSpec::wall_drift_ppb.) A
  // later change of the wall clock's rate can make the key due sooner than
  // this; lookups still expire it on time.
  const Instant true_now = world().now();
  const LocalClock& wall = clocks().wall;
  const LocalClock& mono = clocks().mono;
  TickMemo& m = tick_memo_;
  // The same key, clocks and grid, and the key's due time (true) still
  // ahead: when_reads() would give that due time again.
  if (true_now < m.due_true && m.earliest == earliest && m.origin == expiry_origin_ &&
      m.wall_changes == wall.changes() && m.mono_changes == mono.changes())
    return m.tick;
  const Instant due_true = wall.when_reads(earliest + Duration::ms(1), true_now);
  const Instant due = mono.read(due_true);
  const Duration period = config_.active_expire_period;
  const Instant tick = expiry_origin_ + period * ((due - expiry_origin_) / period + 1);
  m = {earliest, expiry_origin_, due_true, tick, wall.changes(), mono.changes()};
  return tick;
}

void RedisNode::nudge_expiry() {
  if (!expiry_alarm_.sleeping()) return;
  if (next_useful_tick() < expiry_target_) expiry_alarm_.ring();
}

void RedisNode::active_expire_cycle() {
  // activeExpireCycle: sample keys that have a TTL, delete the expired ones,
  // and go again while more than 10% of the sample had expired:
  // `while (sampled == 0 || (expired*100/sampled) > config_cycle_acceptable_stale)`
  // with ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE 10 (expire.c:110, 307-308;
  // the same in 6.0 and 6.2). Masters only (iAmMaster): replicas wait for
  // their master's DEL.
  if (is_replica()) return;
  struct PropagateAtEnd {
    RedisNode& n;
    ~PropagateAtEnd() { n.propagate(); }
  } at_end{*this};
  const Instant now = wall_now();
  // The slow cycle stops at its time limit, 25 ms at hz 10 (expire.c:172,
  // 296): thousands of keys, more than a lock scenario has; here a bound on loops.
  constexpr int kMaxLoops = 1'000;
  for (int loop = 0; loop < kMaxLoops; ++loop) {
    std::vector<std::size_t> volatile_keys;  // positions in keys_, in key order
    for (auto it = keys_.begin(); it != keys_.end(); ++it)
      if (it->second.expires_at) volatile_keys.push_back(static_cast<std::size_t>(it - keys_.begin()));
    if (volatile_keys.empty()) return;
    const auto n = static_cast<int>(volatile_keys.size());
    const int sample = std::min(n, config_.active_expire_sample);
    // A partial Fisher-Yates shuffle on the node's own stream picks the sample.
    for (int i = 0; i < sample; ++i) {
      const auto j = i + static_cast<int>(rng().below(static_cast<std::uint64_t>(n - i)));
      std::swap(volatile_keys[i], volatile_keys[j]);
    }
    // The sampled keys found expired, in the sample's order; then expired in
    // that order (an erasure moves the positions after it).
    std::vector<std::string> due;
    for (int i = 0; i < sample; ++i) {
      const auto& [key, e] = keys_.begin()[static_cast<std::ptrdiff_t>(volatile_keys[static_cast<std::size_t>(i)])];
      if (expired_at(e, now)) due.push_back(key);
    }
    const int expired = static_cast<int>(due.size());
    for (const std::string& key : due) expire(keys_.find(key), "by the active expiry cycle");
    constexpr int kAcceptableStalePercent = 10;  // ACTIVE_EXPIRE_CYCLE_ACCEPTABLE_STALE
    if (expired * 100 / sample <= kAcceptableStalePercent) return;
  }
}

// The keyspace, the subscriptions, the role and what is still to replicate.
void RedisNode::digest(Digest& d) const {
  d.add(static_cast<std::uint64_t>(keys_.size()));
  for (const auto& [key, e] : keys_) {
    d.add(key);
    d.add(std::string_view(e.value.text()));
    d.add(e.expires_at.value_or(Instant::never()));
    if (e.holds != 0) d.add(e.holds);
  }
  for (const auto& [channel, subs] : subscribers_) {
    d.add(channel);
    for (ProcId p : subs) d.add(static_cast<std::uint64_t>(p));
  }
  d.add(static_cast<std::uint64_t>(master_));
  for (const std::string& k : dirty_) d.add(k);
  d.add(expiry_target_);
  for (const Replica& r : replicas_) d.add(r.ack_offset);
  for (const AckWaiter& w : ack_waiters_) d.add(static_cast<std::uint64_t>(w.request.from));
}

}  // namespace locksim
