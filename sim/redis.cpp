#include "sim/redis.hpp"

#include <algorithm>

namespace locksim {

using redis::Op;
using redis::Reply;
using redis::Request;

RedisNode::RedisNode(World& world, std::string name, const ClockSpec& clock, RedisConfig config)
    : Process(world, std::move(name), ProcessRole::LockNode, clock), config_(config) {
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
    Reply r = execute(*req, m.from, m.content);  // its fingerprint was taken when it was sent
    if (!req->no_reply) reply(m, std::move(r));
    return;
  }
  Process::on_message(m);
}

void RedisNode::on_crash() {
  expiry_alarm_.reset();  // its coroutine is gone
  if (!config_.aof_always) keys_.clear();
  subscribers_.clear();  // connections are gone
}

void RedisNode::on_restart() { spawn(active_expire_loop()); }

RedisNode::Entry* RedisNode::lookup(const std::string& key, Instant now, const char* how) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return nullptr;
  if (it->second.expires_at && now > *it->second.expires_at) {
    // A replica hides a logically expired key but waits for its master's DEL.
    if (!is_replica()) expire(it, how);
    return nullptr;
  }
  return &it->second;
}

void RedisNode::expire(std::map<std::string, Entry>::iterator it, const char* how) {
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
                        .detail = "value " + it->second.value});
  keys_.erase(it);
  dirty_.push_back(key);
}

bool RedisNode::set(const Request& req, Instant now, ProcId from) {
  if (req.nx && lookup(req.key, now, "lazily, on SET NX")) return false;
  Entry& e = keys_[req.key];
  e.value = req.value;
  e.setter = from;
  e.expires_at = req.px.is_zero() ? std::nullopt : std::optional<Instant>(now + req.px);
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
      return false;
    default:
      return true;
  }
}
}  // namespace

void RedisNode::note_command(const Request& req, const Reply& r, ProcId from, std::uint64_t request) {
  if (request == 0) request = fingerprint(req);
  TraceEvent e{.peer = from, .key = req.key, .content = request ^ (fingerprint(r) * 3)};
  if (detailed()) e.detail = describe(req) + " -> " + describe(r);
  note(Ev::Command, std::move(e));
}

Reply RedisNode::execute(const Request& req, ProcId from, std::uint64_t content) {
  // One wall-clock reading for the whole command or script (commandTimeSnapshot).
  const Instant now = wall_now();
  Reply r;
  if (is_replica() && is_write(req.op) && from != kNoProc) {
    r = Reply::error("READONLY You can't write against a read only replica.");
    note_command(req, r, from, content);
    return r;
  }
  switch (req.op) {
    case Op::Get: {
      const Entry* e = lookup(req.key, now, "lazily, on GET");
      r = e ? Reply::of(e->value) : Reply::nil();
      break;
    }
    case Op::Set:
      r = set(req, now, from) ? Reply::ok() : Reply::nil();
      break;
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
      else r = Reply::of((*e->expires_at - now).whole_ms());
      break;
    }
    case Op::CompareAndDelete: {
      const Entry* e = lookup(req.key, now, "lazily, in the compare-and-delete script");
      const bool ours = e && e->value == req.value;
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
    case Op::Subscribe: {
      auto& subs = subscribers_[req.key];
      if (std::find(subs.begin(), subs.end(), from) == subs.end()) subs.push_back(from);
      r = Reply::ok();
      break;
    }
    case Op::CompareAndPexpire:
      r = compare_and_pexpire(req, now);
      break;
    case Op::Ping:
      r = Reply::of(std::string("PONG"));
      break;
    case Op::ReplicaOf:
      r = replica_of(req, from);
      break;
    case Op::ReplicaOfNoOne:
      if (is_replica()) {
        master_ = kNoProc;
        note(Ev::Promoted, {.detail = "keys it holds: " + std::to_string(keys_.size())});
      }
      r = Reply::ok();
      break;
    case Op::GetMasterAddr:
      r = Reply::error("ERR not a sentinel");
      break;
  }
  note_command(req, r, from, content);
  propagate();
  nudge_expiry();
  return r;
}

Reply RedisNode::incr(const Request& req, Instant now, ProcId from) {
  Entry* e = lookup(req.key, now, "lazily, on INCR");
  std::int64_t n = 0;
  if (e) {
    try {
      n = std::stoll(e->value);
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
  std::int64_t n = t ? std::stoll(t->value) : 0;
  ++n;
  if (!t) t = &keys_[req.token_key];
  t->value = std::to_string(n);
  dirty_.push_back(req.token_key);
  return Reply::of(n);
}

Reply RedisNode::redisson_try_lock(const Request& req, Instant now, ProcId from) {
  Entry* e = lookup(req.key, now, "lazily, in the trylock script");
  if (e && e->value != req.value) return Reply::of(e->expires_at ? (*e->expires_at - now).whole_ms() : -1);
  const bool fresh = !e;
  Request s = req;
  s.nx = false;
  set(s, now, from);
  if (req.op != Op::RedissonTryLockFenced) return Reply::nil();
  Entry* t = lookup(req.token_key, now, "lazily, on INCR");
  std::int64_t n = t ? std::stoll(t->value) : 0;
  if (fresh) {
    ++n;
    if (!t) t = &keys_[req.token_key];
    t->value = std::to_string(n);
    dirty_.push_back(req.token_key);
  }
  return Reply{Reply::Kind::Ok, n, {}};
}

Reply RedisNode::redisson_unlock(const Request& req, Instant now, ProcId from) {
  const Entry* e = lookup(req.key, now, "lazily, in the unlock script");
  if (!e || e->value != req.value) return Reply::nil();
  erase(req.key, from);
  for (ProcId sub : subscribers_[req.key]) send(sub, Reply::of(std::string("unlocked ") + req.key));
  return Reply::of(1);
}

Reply RedisNode::compare_and_pexpire(const Request& req, Instant now) {
  Entry* e = lookup(req.key, now, "lazily, in the compare-and-pexpire script");
  const bool ours = e && e->value == req.value;
  if (ours) {
    e->expires_at = now + req.px;
    dirty_.push_back(req.key);
  }
  return Reply::of(ours ? 1 : 0);
}

Reply RedisNode::replica_of(const Request& req, ProcId from) {
  const auto master = world().find(req.key);
  if (!master) return Reply::error("ERR no such node");
  // A full resync replaces the dataset; this model drops it and follows the
  // new master's changes from now on.
  keys_.clear();
  dirty_.clear();
  replicas_.clear();
  master_ = *master;
  note(Ev::Command, {.peer = from, .detail = "demoted: now a replica of " + req.key});
  return Reply::ok();
}

// Asynchronous replication: the master has already answered; each change
// reaches each replica after the replication lag, unless the master dies first.
void RedisNode::propagate() {
  if (replicas_.empty() || is_replica()) {
    dirty_.clear();
    return;
  }
  const Instant now = wall_now();
  for (const std::string& key : dirty_) {
    for (const Replica& replica : replicas_) {
      Request change;
      change.replicated = true;
      change.key = key;
      auto it = keys_.find(key);
      if (it == keys_.end()) {
        change.op = Op::Del;
      } else {
        change.op = Op::Set;
        change.value = it->second.value;
        change.setter = it->second.setter;
        if (it->second.expires_at) {
          if (replica.pxat) change.pxat = it->second.expires_at;  // >= 6.2: absolute master time
          else change.px = max(*it->second.expires_at - now, Duration::ms(1));  // 6.0: relative
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
  if (change.op == Op::Del) {
    keys_.erase(change.key);
  } else {
    Entry& e = keys_[change.key];
    e.value = change.value;
    e.setter = change.setter;
    if (change.pxat) e.expires_at = change.pxat;  // the master's wall time, read on our clock
    else if (!change.px.is_zero()) e.expires_at = wall_now() + change.px;
    else e.expires_at.reset();
  }
  note(Ev::Command, {.peer = master_, .key = change.key, .content = fingerprint(change),
                     .detail = "replicated: " + describe(change)});
}

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
    const std::optional<Instant> tick = next_useful_tick();
    if (!tick) {
      expiry_target_ = Instant::never();
      co_await expiry_alarm_.sleep_until(Instant::never());
      continue;
    }
    expiry_target_ = *tick;
    co_await expiry_alarm_.sleep_until(*tick);
    if (mono_now() < *tick) continue;  // woken to decide again
    active_expire_cycle();
  }
}

std::optional<Instant> RedisNode::next_useful_tick() const {
  if (is_replica()) return std::nullopt;  // iAmMaster only
  std::optional<Instant> earliest;
  for (const auto& [key, e] : keys_)
    if (e.expires_at && (!earliest || *e.expires_at < *earliest)) earliest = e.expires_at;
  if (!earliest) return std::nullopt;
  // Both clocks run at the same rate: the monotonic reading when the wall
  // clock passes `earliest`, then the first tick after now at or past it.
  const Instant now = mono_now();
  const Instant due = max(now + (*earliest - wall_now()), now);
  const Duration period = config_.active_expire_period;
  return expiry_origin_ + period * ((due - expiry_origin_) / period + 1);
}

void RedisNode::nudge_expiry() {
  if (!expiry_alarm_.sleeping()) return;
  const std::optional<Instant> tick = next_useful_tick();
  if (tick && *tick < expiry_target_) expiry_alarm_.ring();
}

void RedisNode::active_expire_cycle() {
  // activeExpireCycle: sample keys that have a TTL, delete the expired ones,
  // and go again while more than a quarter of the sample had expired.
  // Masters only (iAmMaster): replicas wait for their master's DEL.
  if (is_replica()) return;
  struct PropagateAtEnd {
    RedisNode& n;
    ~PropagateAtEnd() { n.propagate(); }
  } at_end{*this};
  const Instant now = wall_now();
  for (int round = 0; round < 16; ++round) {
    std::vector<std::map<std::string, Entry>::iterator> volatile_keys;
    for (auto it = keys_.begin(); it != keys_.end(); ++it)
      if (it->second.expires_at) volatile_keys.push_back(it);
    if (volatile_keys.empty()) return;
    const auto n = static_cast<int>(volatile_keys.size());
    const int sample = std::min(n, config_.active_expire_sample);
    // A partial Fisher-Yates shuffle on the node's own stream picks the sample.
    for (int i = 0; i < sample; ++i) {
      const auto j = i + static_cast<int>(rng().below(static_cast<std::uint64_t>(n - i)));
      std::swap(volatile_keys[i], volatile_keys[j]);
    }
    int expired = 0;
    for (int i = 0; i < sample; ++i)
      if (now > *volatile_keys[i]->second.expires_at) {
        expire(volatile_keys[i], "by the active expiry cycle");
        ++expired;
      }
    if (expired * 4 <= sample) return;
  }
}

// The keyspace, the subscriptions, the role and what is still to replicate.
void RedisNode::digest(Digest& d) const {
  d.add(static_cast<std::uint64_t>(keys_.size()));
  for (const auto& [key, e] : keys_) {
    d.add(key);
    d.add(e.value);
    d.add(e.expires_at.value_or(Instant::never()));
  }
  for (const auto& [channel, subs] : subscribers_) {
    d.add(channel);
    for (ProcId p : subs) d.add(static_cast<std::uint64_t>(p));
  }
  d.add(static_cast<std::uint64_t>(master_));
  for (const std::string& k : dirty_) d.add(k);
  d.add(expiry_target_);
}

}  // namespace locksim
