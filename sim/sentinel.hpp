// A Redis Sentinel, as far as failover goes: it pings each monitored master
// every ping_period and, when one has not answered for down_after, promotes
// that master's replica (REPLICAOF NO ONE) and from then on names the replica
// as the group's master. Clients ask it for the current master.
// One sentinel stands for the quorum of them (their agreement is out of scope).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace locksim {

class Sentinel : public Process {
 public:
  struct Group {
    std::string name;           // the group is named after its first master
    ProcId master;
    std::vector<ProcId> replicas;
    std::vector<ProcId> old_masters;  // failed over, to be made replicas when they answer
  };

  Sentinel(World& world, std::string name, Duration down_after, Duration ping_period);
  void monitor(Group group);
  // SENTINEL FAILOVER <group>: promote the group's replica now, as if its master were down.
  void force_failover(const std::string& group);
  void digest(Digest& d) const override {
    for (const Group& g : groups_) {
      d.add(static_cast<std::uint64_t>(g.master));
      for (ProcId p : g.replicas) d.add(static_cast<std::uint64_t>(p));
      for (ProcId p : g.old_masters) d.add(static_cast<std::uint64_t>(p + (ProcId{1} << 16)));
    }
  }

 protected:
  void on_message(Message& m) override;
  void on_restart() override;

 private:
  Task<void> watch(std::size_t group);
  Task<void> fail_over(std::size_t group, std::string why);
  Task<void> demote_old_masters(std::size_t group);

  Duration down_after_, ping_period_;
  std::vector<Group> groups_;
};

}  // namespace locksim
