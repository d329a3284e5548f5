// The supervisor: starts real redis-server, redis-sentinel, ZooKeeper and etcd
// processes for LIVE mode, injects process faults into them (pause, crash,
// restart), and makes sure that none outlives locksim.
//
// Each node gets a directory of its own (its generated config, its log, its
// AOF or ZooKeeper data, its clock page) under one temporary root, or under --keep's DIR, and
// a free port on 127.0.0.1; nothing it starts listens anywhere else (checked
// after every start). Every wait is bounded.
//
// How nothing outlives locksim:
//   * normal exit and exceptions: ~Supervisor kills every node's process group;
//   * SIGKILL, SIGINT, SIGTERM or a crash of locksim: each child asked the
//     kernel, between fork and exec, for SIGKILL when its parent dies
//     (PR_SET_PDEATHSIG), and checked that the parent had not died already.
//     The kernel sends it when the *thread* that forked exits: start nodes
//     from a thread that lives as long as locksim (the main thread). A runner
//     that wants its temporary directories removed on SIGINT too catches the
//     signal (boost::asio::signal_set) and unwinds, so that ~Supervisor runs.
//     After SIGKILL the temporary root stays behind; the next supervisor
//     removes it (remove_abandoned_roots, below).
//
// Assumes Linux, /proc, redis-server and redis-sentinel 7.0 on PATH (Debian
// 12's redis-server and redis-sentinel packages), for ZooKeeper `java` and
// Debian's zookeeper 3.8 jars (live/zookeeper/server.hpp), for etcd nodes etcd
// 3.4 (etcd-server); each is looked for when a node of its kind first starts.
// Not thread-safe: one thread drives a Supervisor.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/clock_control.hpp"
#include "live/common.hpp"
#include "live/resp.hpp"

namespace locksim::live {

enum class Persistence : std::uint8_t {
  None,         // nothing survives a crash
  AofAlways,    // appendonly yes, appendfsync always: every acknowledged write survives
  AofEverysec,  // appendonly yes, appendfsync everysec: up to a second of writes may be lost
};

struct ServerOptions {
  Persistence persistence = Persistence::None;
  std::string replica_of;        // a started server's name: start as its replica
  bool wait_for_sync = true;     // a replica: start() returns once its link to the master is up
  bool shim_clock = false;       // LD_PRELOAD the clock shim: clock(name) steps and drifts it
  std::vector<std::string> extra_config;  // more redis.conf lines, as written ("hz 100")
};

struct SentinelOptions {
  std::string group = "mymaster";
  std::string master;            // the monitored server's name
  int quorum = 1;
  Duration down_after = Duration::s(5);
  Duration failover_timeout = Duration::s(10);
  int parallel_syncs = 1;
  bool shim_clock = false;       // a sentinel's wall-clock jumps put it in TILT mode
};

// A ZooKeeper server (ZooKeeperServerMain: standalone), from Debian's jars.
struct ZooKeeperServerOptions {
  Duration tick_time = Duration::s(2);     // tickTime, in whole milliseconds
  // minSessionTimeout and maxSessionTimeout; zero: ZooKeeper's own, 2 and 20 ticks.
  Duration min_session_timeout = Duration::zero();
  Duration max_session_timeout = Duration::zero();
  bool shim_clock = false;                 // its wall clock (System.currentTimeMillis) through the clock shim
  std::string max_heap = "64m";            // -Xmx
};

// An etcd node (etcd-server 3.4): a one-member cluster of its own. Its data
// and WAL directory is the node's directory (the WAL preallocates two 64 MB
// segments: 122 MiB on disk per node, gone with the root); its client and
// peer URLs are free ports on 127.0.0.1. Raft's timing, as etcd's flags
// take them in whole milliseconds: the election timeout sets the shortest
// lease etcd grants (ceil(1.5 x election timeout) in whole seconds) and how
// long a restarted leader extends every lease (live/etcd/etcd_run.hpp).
struct EtcdNodeOptions {
  Duration heartbeat = Duration::ms(100);      // --heartbeat-interval
  Duration election_timeout = Duration::s(1);  // --election-timeout: at least 5 heartbeats
};

struct SupervisorOptions {
  // --keep DIR: the nodes' directories (configs, logs, AOFs) are made in DIR
  // and left there; a node's directory from an earlier run is replaced. Empty:
  // a temporary root, removed at the end.
  std::filesystem::path keep;
  // The binaries; empty: redis-server and redis-sentinel from PATH.
  std::filesystem::path redis_server;
  std::filesystem::path redis_sentinel;
  std::filesystem::path java;  // empty: java from PATH
  std::filesystem::path etcd;
  Duration start_timeout = Duration::s(10);  // until a node answers PING (and a replica is in sync)
  Duration command_timeout = Duration::s(5); // the supervisor's own commands to the nodes
};

enum class NodeKind : std::uint8_t { Server, Sentinel, ZooKeeper, Etcd };

struct NodeInfo {
  std::string name;
  NodeKind kind = NodeKind::Server;
  std::uint16_t port = 0;
  pid_t pid = 0;  // 0: not running
  std::filesystem::path dir;
};

// A temporary root whose supervisor was killed with SIGKILL (or died in a
// crash) outlives it: no destructor ran. Its nodes are gone (they asked for
// SIGKILL with their parent), its directory is not. Each root names its owner
// in a file `owner` (pid and start time, as /proc/PID/stat gives it); this
// removes the `locksim-live-XXXXXX` directories in `dir` of this user whose
// owner is no longer running, and those without an owner file older than an
// hour (made before roots named their owner). Returns how many it removed.
// Never throws. Each supervisor that makes a temporary root calls it first.
std::size_t remove_abandoned_roots(const std::filesystem::path& dir);
// "PID STARTTIME" of a running process (STARTTIME: field 22 of
// /proc/PID/stat, in clock ticks since boot): a pid with the start time it
// had when recorded is the same process, not a later one given its number.
// nullopt: no such process.
std::optional<std::string> process_identity(pid_t pid);

class Supervisor {
 public:
  explicit Supervisor(SupervisorOptions options = {});
  // Kills every node (SIGKILL to its process group) and reaps it; removes the
  // temporary root unless --keep. Never throws.
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Starts a node named `name` (letters, digits, '-', '_', '.') and returns its
  // port once it answers PING. Throws Error with the tail of its log when it
  // will not start.
  std::uint16_t start_server(const std::string& name, const ServerOptions& options = {});
  std::uint16_t start_sentinel(const std::string& name, const SentinelOptions& options);
  // A ZooKeeper server on 127.0.0.1 (its admin server off), returned once it
  // serves (the four-letter word srvr says so). Its data directory is the
  // node's; a restart keeps it, and with it the sessions and znodes.
  std::uint16_t start_zookeeper(const std::string& name, const ZooKeeperServerOptions& options = {});
  // Starts etcd named `name` and returns its client port once it answers
  // (its /health says true); a restart brings it back on the same ports and
  // data directory. Throws Error with the tail of its output when it will not start.
  std::uint16_t start_etcd(const std::string& name, const EtcdNodeOptions& options = {});

  // Process faults. pause: SIGSTOP to the node's process group, returning once
  // the node is stopped; resume: SIGCONT. crash: SIGKILL, reaped. restart:
  // start a crashed node again in its directory, on its port, from its config
  // (which Sentinel may have rewritten), reloading its AOF if it has one;
  // returns once it answers PING (a replica's sync is not awaited).
  void pause(const std::string& name);
  void resume(const std::string& name);
  void crash(const std::string& name);
  void restart(const std::string& name);
  // Kills every node; the supervisor can start nodes again afterwards.
  void stop_all();

  // Which node is which.
  std::uint16_t port(const std::string& name) const;
  pid_t pid(const std::string& name) const;  // 0: not running
  bool running(const std::string& name) const { return pid(name) != 0; }
  bool paused(const std::string& name) const;
  std::optional<std::string> name_at(std::uint16_t port) const;
  std::vector<NodeInfo> nodes() const;
  const std::filesystem::path& root() const { return root_; }
  // The node's clock page writer; throws unless the node was started with shim_clock.
  ClockControl& clock(const std::string& name);
  // Node names <-> real addresses, for the RESP codec (REPLICAOF, a sentinel's
  // answer); valid while the supervisor lives.
  resp::Names names() const;

  // Sentinel. The master `sentinel` reports for `group` now (nullopt: it knows none).
  std::optional<Endpoint> master_address(const std::string& sentinel, const std::string& group);
  // SENTINEL FAILOVER, then waits (bounded by `timeout`) until the sentinel
  // reports another master; returns the new master's name. Retries while the
  // sentinel knows no replica good enough to promote yet.
  std::string failover(const std::string& sentinel, const std::string& group, Duration timeout = Duration::s(30));

 private:
  struct Node;
  Node& node(const std::string& name);
  const Node& node(const std::string& name) const;
  Node& add(const std::string& name, NodeKind kind, bool shim_clock);
  void launch(Node& n, bool first);  // first: a fresh port and config; else a restart
  std::uint16_t launch_added(Node& n);
  std::vector<std::string> arguments(const Node& n) const;
  bool answers(const Node& n, Duration timeout) const;
  void write_config(Node& n);
  void wait_ready(Node& n, const Deadline& deadline, bool first);
  void kill_and_reap(Node& n);
  std::string log_tail(const Node& n) const;

  SupervisorOptions options_;
  std::filesystem::path root_;
  bool remove_root_ = false;
  const std::filesystem::path& binary(NodeKind kind);  // found on first use
  std::filesystem::path server_binary_;
  std::filesystem::path sentinel_binary_;
  std::filesystem::path java_binary_;
  std::filesystem::path etcd_binary_;  // found when the first etcd node starts
  std::map<std::string, std::unique_ptr<Node>> nodes_;
};

// The addresses process `pid` listens on (TCP, IPv4 and IPv6), from /proc.
std::vector<Endpoint> listening_addresses(pid_t pid);

// Whether `pid` is a live (not zombie) process right now.
bool process_alive(pid_t pid);
// The state letter of /proc/PID/stat ('R', 'S', 'T' when stopped, 'Z', ...), or 0 if there is no such process.
char process_state(pid_t pid);

// "exited with status 1", "was killed by Killed": a waitpid status in words.
std::string exit_text(int wait_status);
// The last `lines` lines of `file`, each after "\n    " (none if it cannot be read).
std::string file_tail(const std::filesystem::path& file, std::size_t lines);

// A child's standard streams: descriptors of ours it gets as its 0, 1 and 2.
struct ChildIo {
  int in = -1, out = -1, err = -1;
};
// Starts `exe` as the supervisor starts its nodes: in a process group of its
// own (the pid is its id), killed by the kernel when the thread that forked
// it exits (PR_SET_PDEATHSIG), with no descriptor of ours but `io`, default
// signal handling and nothing blocked. The caller closes its ends of `io`.
pid_t spawn_process(const std::filesystem::path& exe, const std::vector<std::string>& args,
                    const std::vector<std::string>& env, ChildIo io);

}  // namespace locksim::live
