// A Redis Sentinel process, as redis 7.0.15's src/sentinel.c runs it
// (docs/algorithms-redis.md §2; notes on each step beside the code):
//   * a timer every 1000/hz ms, hz drawn in 10..19 after each call;
//   * per monitored instance a link: PING when the last reply is older than
//     the ping period, INFO every 10 s (1 s for replicas of a failing
//     master), hellos to the other sentinels every 2 s;
//   * SDOWN when the oldest unanswered PING (or, disconnected, the last valid
//     reply) is older than down_after; ODOWN when `quorum` sentinels agree
//     (asked every second, answers good for 5 s);
//   * a leader elected per epoch by a majority of the sentinels and at least
//     quorum votes; it promotes the best replica (priority, offset, run id),
//     sees the promotion in the replica's next INFO, reconfigures the other
//     replicas, then switches the master and lists the old one as a replica,
//     which it turns into one when it comes back (after 8 s as a master);
//   * every time on its *wall* clock (mstime()); a timer gap over 2 s, or a
//     backward step, is TILT: 30 s of watching without acting.
// Simplifications: a hello goes straight to the other sentinels (the copies
// Sentinel also publishes through the monitored instances are not sent); the
// sentinels know one another and the configured replicas from the start, as
// after their first hellos and INFOs; an instance's address is its name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace locksim {

struct SentinelSettings {
  Duration down_after = Duration::s(30);          // down-after-milliseconds (sentinel.c:88)
  Duration ping_period = Duration::s(1);          // SENTINEL_PING_PERIOD (sentinel.c:82)
  Duration failover_timeout = Duration::s(180);   // failover-timeout (sentinel.c:96)
  int quorum = 1;                                 // from the monitor line
  int parallel_syncs = 1;                         // parallel-syncs (sentinel.c:100)
};

class Sentinel : public Process {
 public:
  struct Group {
    std::string name;  // the group is named after its first master
    ProcId master;
    std::vector<ProcId> replicas;
  };

  Sentinel(World& world, std::string name, const ClockSpec& clock, SentinelSettings settings);
  // Watch `group`, alongside the `others` sentinels. Before the run starts.
  void monitor(const Group& group, const std::vector<ProcId>& others);
  // SENTINEL FAILOVER <group>: fail over now, without agreement (sentinel.c:3912-3935).
  void force_failover(const std::string& group);
  // The master this sentinel names for a group now (get-master-addr-by-name).
  std::optional<ProcId> current_master(const std::string& group) const;
  bool in_tilt() const { return tilt_; }
  void digest(Digest& d) const override;

 protected:
  void on_message(Message& m) override;
  void on_restart() override;

 private:
  using ms_t = std::int64_t;  // mstime(): wall-clock milliseconds (sentinel.c uses nothing else)

  // instanceLink (sentinel.c:1013-1038): the command connection.
  struct Link {
    bool disconnected = true;
    std::uint64_t conn = 0;         // this connection's serial: replies on an older one are ignored
    std::uint32_t peer_epoch = 0;   // the peer's incarnation it reached
    int pending = 0;
    ms_t info_sent = 0;             // when the unanswered INFO went, 0: none (see send_periodic)
    ms_t cc_conn_time = 0, last_reconn_time = 0, act_ping_time = 0, last_ping_time = 0;
    ms_t last_avail_time = 0, last_pong_time = 0;
  };
  enum Flag : unsigned {
    kMaster = 1u << 0, kSlave = 1u << 1, kSentinel = 1u << 2, kSDown = 1u << 3, kODown = 1u << 4,
    kMasterDown = 1u << 5, kFailoverInProgress = 1u << 6, kPromoted = 1u << 7, kReconfSent = 1u << 8,
    kReconfInprog = 1u << 9, kReconfDone = 1u << 10, kForceFailover = 1u << 11,
  };
  enum class FailoverState : std::uint8_t {
    None, WaitStart, SelectSlave, SendSlaveofNoone, WaitPromotion, ReconfSlaves, UpdateConfig
  };
  // sentinelRedisInstance: a master, one of its replicas, or another sentinel.
  struct Instance {
    unsigned flags = 0;
    ProcId id = kNoProc;
    Link link;
    std::string runid;
    ms_t info_refresh = 0;
    unsigned role_reported = 0;
    ms_t role_reported_time = 0, slave_conf_change_time = 0, s_down_since = 0, o_down_since = 0;
    ms_t master_link_down_time = 0, slave_reconf_sent_time = 0;
    std::string slave_master_host;
    bool slave_master_link_up = false;
    int slave_priority = 100;
    std::int64_t slave_repl_offset = 0;
    ms_t last_pub_time = 0, last_hello_time = 0, last_master_down_reply_time = 0;
    std::string leader;  // a master: our vote; a sentinel: the vote it last told us of
    std::uint64_t leader_epoch = 0;
  };
  struct Master : Instance {
    std::string name;
    std::uint64_t config_epoch = 0, failover_epoch = 0;
    FailoverState failover_state = FailoverState::None;
    ms_t failover_state_change_time = 0, failover_start_time = 0;
    ProcId promoted = kNoProc;
    std::vector<Instance> slaves, sentinels;
  };
  enum class Reply : std::uint8_t { Ping, Info, AskDown, Publish, Discard };
  static void digest_instance(Digest& d, const Instance& ri);

  ms_t mstime() const;
  Instance make_instance(unsigned flags, ProcId id) const;
  Instance* find(std::size_t group, unsigned kind, ProcId id);
  Instance* slave(Master& m, ProcId id);
  void event(bool narrate, const std::string& what, ProcId about);

  Task<void> timer();
  void tick();
  void handle_instance(Master& m, Instance& ri);
  void reconnect(std::size_t group, Instance& ri);
  void close_link(Instance& ri);
  void send_periodic(Master& m, Instance& ri);
  void command(std::size_t group, Instance& ri, redis::Request req, Reply what);
  Task<void> await_reply(std::size_t group, unsigned kind, ProcId peer, std::uint64_t conn, redis::Request req,
                         Reply what);
  void on_reply(std::size_t group, Instance& ri, Reply what, const redis::Reply& r);
  void send_ping(std::size_t group, Instance& ri);
  void send_hello(std::size_t group, Master& m, Instance& si);
  bool send_slaveof(std::size_t group, Instance& ri, ProcId master);

  void check_tilt();
  void check_sdown(Instance& ri);
  void check_odown(Master& m);
  void ask_others(std::size_t group, Master& m, bool forced);
  void refresh_info(std::size_t group, Master& m, Instance& ri, const std::string& info);
  void convert_or_fix(std::size_t group, Master& m, Instance& ri, unsigned role);
  std::string vote_leader(Master& m, std::uint64_t req_epoch, const std::string& req_runid,
                          std::uint64_t& leader_epoch);
  std::string get_leader(Master& m, std::uint64_t epoch);
  void process_hello(const std::string& hello);
  std::string answer_is_master_down(const redis::Request& req);

  bool start_failover_if_needed(Master& m);
  void start_failover(Master& m);
  void failover_state_machine(std::size_t group, Master& m);
  void wait_start(Master& m);
  Instance* select_slave(Master& m);
  void reconf_next_slave(std::size_t group, Master& m);
  void detect_end(std::size_t group, Master& m);
  void abort_failover(Master& m);
  void switch_to_promoted(Master& m);
  void reset_master_and_change_address(Master& m, ProcId new_master);
  bool looks_sane(const Master& m) const;
  bool no_down_for(const Instance& ri, ms_t ms) const;
  ProcId current_address(const Master& m) const;
  const std::string& name_of(ProcId id) const;

  SentinelSettings settings_;
  std::vector<Master> masters_;
  std::uint64_t current_epoch_ = 0;
  bool tilt_ = false;
  ms_t tilt_start_time_ = 0, previous_time_ = 0;
  std::uint64_t next_conn_ = 0;
};

}  // namespace locksim
