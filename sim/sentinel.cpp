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
      Group& g = groups_[index];
      const ProcId old_master = g.master;
      g.master = g.replicas.front();
      g.replicas.erase(g.replicas.begin());
      note(Ev::Fault, {.peer = g.master,
                       .detail = "failover: " + world().trace().name(old_master) + " has not answered for " +
                                 format_duration(mono_now() - last_reply) + "; promoting " +
                                 world().trace().name(g.master)});
      redis::Request promote;
      promote.op = redis::Op::ReplicaOfNoOne;
      co_await call(g.master, std::move(promote), ping_period_);
      last_reply = mono_now();
      continue;
    }
    // One ping per period, however fast the answer (or the refusal) came.
    const Duration left = sent + ping_period_ - mono_now();
    if (left > Duration::zero()) co_await sleep(left);
  }
}

}  // namespace locksim
