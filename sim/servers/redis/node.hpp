// A Redis node, as far as locks care (docs/algorithms-redis.md §1, from
// redis 7.0.15 src/db.c, expire.c, t_string.c, replication.c):
//   * key -> value, with an absolute expiry in whole milliseconds of the
//     node's *wall* clock (mstime(), server.c:189-202);
//   * a command (or script) reads the wall clock once when it starts
//     (commandTimeSnapshot) and a key is expired when now_ms > when_ms
//     (db.c:1650);
//   * lazy expiry on every lookup, plus a periodic active-expiry cycle that
//     samples keys with a TTL (serverCron at hz = 10) and goes on while more
//     than 10% of a sample had expired (expire.c:110, 307-308);
//   * a crash (a process crash: SIGKILL) loses the keyspace unless the node
//     has an append-only file (aof-always or aof-everysec; see RedisConfig);
//   * asynchronous replication with a replication id and offset, PSYNC, and
//     full or partial resynchronisation (replication.c:737-774);
//   * INFO, and the sentinel's REPLICAOF transactions with CLIENT KILL.
// A step of the wall clock by +D therefore expires every key with less than D
// left at its next lookup or cycle: the heart of Kleppmann's Redlock argument.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/alarm.hpp"
#include "sim/flat_map.hpp"
#include "sim/world.hpp"

namespace locksim {

struct RedisConfig {
  // appendfsync always: every write reaches the disk before its reply
  // (aof.c:1243-1253). Keys survive any crash.
  bool aof_always = false;
  // appendfsync everysec (the default fsync policy, config.c:3047): each
  // event-loop pass write(2)s the AOF buffer before the replies go out
  // (server.c:1664-1669), and a background fsync runs once the wall-clock
  // second has moved on (aof.c:1255-1259). A process crash (SIGKILL, what our
  // crash fault is) loses nothing acknowledged: the data is in the OS. What
  // it would lose in a power loss or kernel crash, the writes since the last
  // completed fsync (up to about 1 s, about 2 s while a slow disk postpones
  // writes, aof.c:1099-1108), is not modelled: there is no such fault.
  bool aof_everysec = false;
  Duration active_expire_period = Duration::ms(100);  // 1/hz (server.h:104)
  int active_expire_sample = 20;              // keys sampled per cycle loop (expire.c:107)
  // As a replica: replica-priority (config.c:3074), what Sentinel sorts
  // candidates by (lower first); 0: never promoted.
  int replica_priority = 100;
  // As a replica: how long each change takes to reach this node from its
  // master (the scenario's replication_lag).
  DurationRange replication_lag = DurationRange::fixed(Duration::ms(1));
  // As a master: how it sends an expiry to its replicas. Redis >= 7.0 always
  // sends SET ... PXAT <master wall ms> (t_string.c:115-121, #8474); 6.0 and
  // 6.2 send the relative PX the client gave (6.2.0 t_string.c:124), which
  // the replica counts from when it applies it.
  bool expiry_as_pxat = true;
};

class RedisNode : public Process {
 public:
  RedisNode(World& world, std::string name, const ClockSpec& clock, RedisConfig config);

  // Run one command now, as if it had arrived from `from` (tests; on_message).
  // `content`: the request's fingerprint if already taken (0: take it).
  redis::Reply execute(const redis::Request& req, ProcId from, std::uint64_t content = 0);
  // Record a command and its reply (Ev::Command).
  // `owner`: who holds the key after the command, when execute() already
  // knows (kNoProc: nobody it would name); else it is looked up.
  void note_command(const redis::Request& req, const redis::Reply& r, ProcId from, std::uint64_t content,
                    std::optional<ProcId> owner = std::nullopt);

  struct Entry {
    LockValue value;
    std::optional<Instant> expires_at;  // a whole millisecond of this node's wall clock
    ProcId setter = kNoProc;            // annotation for the trace only: who wrote it
    // A Redisson lock is a hash {field: count} (RedissonLock.java:314-322 at
    // redisson-4.7.0): `value` is the field, `holds` its HINCRBY count (0: a string).
    std::int64_t holds = 0;
  };
  // The keyspace as it is (no expiry applied): for tests.
  const FlatMap<std::string, Entry>& keyspace() const { return keys_; }

  // Replication. A replica applies what its master sends, answers reads (its
  // old data too while it resyncs: replica-serve-stale-data, config.c:2995),
  // refuses writes (READONLY) and never expires keys itself.
  // The topology at the start of a run, in sync (both empty): `lag`, how
  // long each change takes to reach the replica; `pxat`, how an expiry goes.
  void add_replica(ProcId replica, DurationRange lag, bool pxat);
  void replicate_from(ProcId master);
  bool is_replica() const { return master_ != kNoProc; }
  ProcId master() const { return master_; }
  // The replication offset: the changes in this node's history so far
  // (master_repl_offset; here a count of changes, not of bytes).
  std::int64_t repl_offset() const { return repl_offset_; }
  const RedisConfig& config() const { return config_; }
  // One active-expiry cycle now, outside the node's own timer (diff-redis:
  // the real server's cycle runs when real time allows, so it is compared
  // only at steps that ask for it).
  void active_expire_now() { active_expire_cycle(); }

 protected:
  void on_message(Message& m) override;
  void on_crash() override;
  void on_restart() override;
  void on_clock_jump() override { nudge_expiry(); }
  void digest(Digest& d) const override;

 private:
  Task<void> active_expire_loop();
  void active_expire_cycle();
  // The first tick at which a cycle can expire something; Instant::never():
  // no key has a TTL.
  Instant next_useful_tick();
  // Wake the expiry loop if a tick sooner than the one it sleeps to now matters.
  void nudge_expiry();
  // Lazy expiry: the entry if it exists and has not expired at `now`.
  Entry* lookup(const std::string& key, Instant now, const char* how);
  void expire(FlatMap<std::string, Entry>::iterator it, const char* how);
  // SET NX PX semantics; an NX refused by a live entry sets `*held` to it.
  bool set(const redis::Request& req, Instant now, ProcId from, const Entry** held = nullptr);
  // The commands and scripts of execute() that take more than a line.
  redis::Reply incr(const redis::Request& req, Instant now, ProcId from);
  redis::Reply acquire_with_token(const redis::Request& req, Instant now, ProcId from);  // SET NX, then INCR the token
  redis::Reply redisson_try_lock(const redis::Request& req, Instant now, ProcId from);
  redis::Reply redisson_unlock(const redis::Request& req, Instant now, ProcId from);    // and publish "unlocked"
  redis::Reply compare_and_pexpire(const redis::Request& req, Instant now);
  redis::Reply script_on_replica(const redis::Request& req, Instant now);  // a script sent to a replica
  redis::Reply replica_of(const redis::Request& req, ProcId from);
  // The commands that are not about the keyspace: pub/sub, replication, INFO.
  redis::Reply server_command(const redis::Request& req, ProcId from);
  void erase(const std::string& key, ProcId requester);

  // Replication (replication.c).
  void propagate();
  Task<void> ship(ProcId replica, redis::Request change, Duration lag);
  void apply_from_master(const redis::Request& change);
  redis::Reply serve_psync(const redis::Request& req, ProcId from);
  Task<void> replication_cron();
  Task<void> sync_with_master();
  void load_sync_payload(const std::string& payload);
  bool master_link_broken();
  void become_replica_of(ProcId master, ProcId from);
  void become_master();
  void new_replid();
  void attach_replica(ProcId replica, DurationRange lag, bool pxat);
  // WAIT (replication.c:3444-3545): block the client until enough replicas
  // acknowledged its last write, or until the timeout; REPLCONF ACK from a
  // replica moves its acknowledged offset.
  void wait_command(const Message& m, const redis::Request& req);
  void replconf_ack(ProcId replica, std::int64_t offset);
  std::int64_t count_acks(std::int64_t offset) const;  // replicationCountAcksByOffset
  void answer_wait(std::size_t waiter, std::int64_t acks);
  Task<void> wait_timeout(std::uint64_t serial, Duration timeout);
  std::string info();
  // The sentinel's SLAVEOF transaction ends with CLIENT KILL TYPE normal.
  void kill_clients(ProcId except);

  RedisConfig config_;
  FlatMap<std::string, Entry> keys_;  // in key order, as a tree would be: the active cycle samples in it
  std::map<std::string, std::vector<ProcId>> subscribers_;  // channel -> clients
  ProcId master_ = kNoProc;        // set: this node is a replica of it
  struct Replica {
    ProcId id;
    DurationRange lag;
    bool pxat;
    std::int64_t ack_offset = 0;  // repl_ack_off: the offset its last REPLCONF ACK named
  };
  std::vector<Replica> replicas_;
  std::vector<std::string> dirty_;  // keys a command changed: their new state goes to the replicas
  // WAIT: each client's woff (the master offset after its last command,
  // server.c:4021), and the clients blocked in WAIT (clients_waiting_acks).
  std::map<ProcId, std::int64_t> client_woff_;
  struct AckWaiter {
    Message request;
    std::int64_t offset;
    std::int64_t numreplicas;
    std::uint64_t serial;
  };
  std::vector<AckWaiter> ack_waiters_;
  std::uint64_t ack_serial_ = 0;

  // The replication history (server.replid, replid2, master_repl_offset,
  // second_replid_offset, the backlog).
  std::string replid_, replid2_;
  std::int64_t repl_offset_ = 0;
  std::int64_t second_replid_offset_ = -1;
  std::int64_t replid_serial_ = 0;
  struct BacklogEntry {
    std::int64_t offset;
    std::string key;
  };
  std::deque<BacklogEntry> backlog_;  // the latest changes, for a partial resync
  bool has_backlog_ = false;          // created when a replica first attaches
  // As a replica: the link to the master (server.repl_state).
  enum class Link : std::uint8_t { Connected, Syncing, Down };
  Link link_ = Link::Down;
  std::string master_replid_;               // the history it continues (the cached master's)
  std::uint32_t master_epoch_ = 0;          // the master's incarnation the link was made with
  std::optional<Instant> link_down_since_;  // wall; none: never connected since REPLICAOF
  // CLIENT KILL: requests with an id up to this one, from anyone but the
  // killer, came on connections that are now closed.
  std::uint64_t killed_up_to_ = 0;
  ProcId killer_ = kNoProc;

  Alarm expiry_alarm_{*this};                 // the expiry loop's sleep
  Instant expiry_origin_;                     // the loop's grid: ticks at origin + k * period (mono)
  Instant expiry_target_ = Instant::never();  // the tick it sleeps to
  // next_useful_tick()'s last answer for a key not yet due, and what it
  // depended on (the earliest expiry, the clocks, the grid): asked after
  // every command, it is mostly the same question.
  struct TickMemo {
    Instant earliest, origin, due_true, tick;
    std::uint32_t wall_changes = 0, mono_changes = 0;
  };  // one never made has due_true zero: no moment of a run is before it
  TickMemo tick_memo_;
};

}  // namespace locksim
