#include "sim/sentinel.hpp"

namespace locksim {

Sentinel::Sentinel(World& world, std::string name, Duration down_after, Duration ping_period)
    : Process(world, std::move(name), ProcessRole::LockNode, ClockSpec{}),
      down_after_(down_after),
      ping_period_(ping_period) {}

void Sentinel::monitor(Group group) {
  groups_.push_back(std::move(group));
  spawn(watch(groups_.size() - 1));
}

void Sentinel::on_restart() {
  for (std::size_t i = 0; i < groups_.size(); ++i) spawn(watch(i));
}

void Sentinel::on_message(Message& m) {
  const auto* req = std::get_if<redis::Request>(&m.body);
  if (!req || req->op != redis::Op::GetMasterAddr) {
    Process::on_message(m);
    return;
  }
  for (const Group& g : groups_)
    if (g.name == req->key) {
      reply(m, redis::Reply::of(world().trace().name(g.master)));
      return;
    }
  reply(m, redis::Reply::nil());
}

void Sentinel::force_failover(const std::string& group) {
  for (std::size_t i = 0; i < groups_.size(); ++i)
    if (groups_[i].name == group && !groups_[i].replicas.empty()) spawn(fail_over(i, "is failed over by hand (SENTINEL FAILOVER)"));
}

Task<void> Sentinel::fail_over(std::size_t index, std::string why) {
  Group& g = groups_[index];
  // A second failover spawned at the same instant finds the replica promoted already.
  if (g.replicas.empty()) co_return;
  const ProcId old_master = g.master;
  g.master = g.replicas.front();
  g.replicas.erase(g.replicas.begin());
  note(Ev::Fault, {.peer = g.master,
                   .detail = "failover: " + world().trace().name(old_master) + " " + why + "; promoting " +
                             world().trace().name(g.master)});
  g.old_masters.push_back(old_master);
  redis::Request promote;
  promote.op = redis::Op::ReplicaOfNoOne;
  co_await call(g.master, std::move(promote), ping_period_);
}

// An old master that answers again is told to follow the new one, so it stops
// taking writes (until then, clients that still reach it can lock on it).
Task<void> Sentinel::demote_old_masters(std::size_t index) {
  std::vector<ProcId> pending = groups_[index].old_masters;
  for (ProcId old : pending) {
    redis::Request demote;
    demote.op = redis::Op::ReplicaOf;
    demote.key = world().trace().name(groups_[index].master);
    const auto ok = co_await call(old, std::move(demote), ping_period_);
    if (ok) std::erase(groups_[index].old_masters, old);
  }
}

// PING the master every ping_period (on our monotonic clock); after down_after
// without a reply, fail over to the first replica.
Task<void> Sentinel::watch(std::size_t index) {
  Instant last_reply = mono_now();
  for (;;) {
    const Instant sent = mono_now();
    redis::Request ping;
    ping.op = redis::Op::Ping;
    const auto pong = co_await call(groups_[index].master, std::move(ping), ping_period_);
    if (pong) last_reply = mono_now();
    else if (mono_now() - last_reply >= down_after_ && !groups_[index].replicas.empty()) {
      co_await fail_over(index, "has not answered for " + format_duration(mono_now() - last_reply));
      last_reply = mono_now();
      continue;
    }
    if (!groups_[index].old_masters.empty()) co_await demote_old_masters(index);
    // One ping per period, however fast the answer (or the refusal) came.
    const Duration left = sent + ping_period_ - mono_now();
    if (left > Duration::zero()) co_await sleep(left);
  }
}

}  // namespace locksim
