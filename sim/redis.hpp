// A Redis node, as far as locks care (algorithms.md §1, from src/db.c,
// expire.c, t_string.c):
//   * key -> value, with an absolute expiry on the node's *wall* clock;
//   * a command (or script) reads the wall clock once when it starts
//     (commandTimeSnapshot) and a key is expired when now > when;
//   * lazy expiry on every lookup, plus a periodic active-expiry cycle that
//     samples keys with a TTL (serverCron at hz = 10);
//   * a crash loses the keyspace unless persistence is aof-always.
// A step of the wall clock by +D therefore expires every key with less than D
// left at its next lookup or cycle: the heart of Kleppmann's Redlock argument.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace locksim {

struct RedisConfig {
  bool aof_always = false;                    // keys survive a crash (fsync always)
  Duration active_expire_period = Duration::ms(100);  // 1/hz
  int active_expire_sample = 20;              // keys sampled per cycle loop
};

class RedisNode : public Process {
 public:
  RedisNode(World& world, std::string name, const ClockSpec& clock, RedisConfig config);

  // Run one command now, as if it had arrived from `from` (tests; on_message).
  // `content`: the request's fingerprint if already taken (0: take it).
  redis::Reply execute(const redis::Request& req, ProcId from, std::uint64_t content = 0);
  // Record a command and its reply (Ev::Command).
  void note_command(const redis::Request& req, const redis::Reply& r, ProcId from, std::uint64_t content);

  struct Entry {
    std::string value;
    std::optional<Instant> expires_at;  // on this node's wall clock
    ProcId setter = kNoProc;            // annotation for the trace only: who wrote it
  };
  // The keyspace as it is (no expiry applied): for tests.
  const std::map<std::string, Entry>& keyspace() const { return keys_; }

  // Replication. A replica applies what its master sends, answers reads,
  // refuses writes (READONLY) and never expires keys itself.
  // `lag`: how long each change takes to reach it; `pxat`: Redis >= 6.2 sends
  // an expiry as PXAT <master wall ms>, 6.0 as a relative PX.
  void add_replica(ProcId replica, DurationRange lag, bool pxat) { replicas_.push_back({replica, lag, pxat}); }
  void replicate_from(ProcId master) { master_ = master; }
  bool is_replica() const { return master_ != kNoProc; }

 protected:
  void on_message(Message& m) override;
  void on_crash() override;
  void on_restart() override;
  void on_clock_jump() override { nudge_expiry(); }
  void digest(Digest& d) const override;

 private:
  Task<void> active_expire_loop();
  void active_expire_cycle();
  // The first tick at which a cycle can expire something; none: no key has a TTL.
  std::optional<Instant> next_useful_tick() const;
  // Wake the expiry loop if a tick sooner than the one it sleeps to now matters.
  void nudge_expiry();
  // Lazy expiry: the entry if it exists and has not expired at `now`.
  Entry* lookup(const std::string& key, Instant now, const char* how);
  void expire(std::map<std::string, Entry>::iterator it, const char* how);
  bool set(const redis::Request& req, Instant now, ProcId from);  // SET NX PX semantics
  void erase(const std::string& key, ProcId requester);
  // The commands and scripts of execute() that take more than a line.
  redis::Reply incr(const redis::Request& req, Instant now, ProcId from);
  redis::Reply acquire_with_token(const redis::Request& req, Instant now, ProcId from);  // SET NX, then INCR the token
  redis::Reply redisson_try_lock(const redis::Request& req, Instant now, ProcId from);
  redis::Reply redisson_unlock(const redis::Request& req, Instant now, ProcId from);    // and publish "unlocked"
  redis::Reply compare_and_pexpire(const redis::Request& req, Instant now);
  redis::Reply replica_of(const redis::Request& req, ProcId from);

  RedisConfig config_;
  std::map<std::string, Entry> keys_;
  std::map<std::string, std::vector<ProcId>> subscribers_;  // channel -> clients
  ProcId master_ = kNoProc;        // set: this node is a replica of it
  struct Replica {
    ProcId id;
    DurationRange lag;
    bool pxat;
  };
  std::vector<Replica> replicas_;
  std::vector<std::string> dirty_;  // keys a command changed: their new state goes to the replicas
  Alarm expiry_alarm_{*this};                 // the expiry loop's sleep
  Instant expiry_origin_;                     // the loop's grid: ticks at origin + k * period (mono)
  Instant expiry_target_ = Instant::never();  // the tick it sleeps to
  void propagate();
  Task<void> ship(ProcId replica, redis::Request change, Duration lag);
  void apply_from_master(const redis::Request& change);
};

}  // namespace locksim
