// A scenario: what a TOML file under scenarios/ describes, checked and typed.
// `load_scenario` is the only way in; every bad input becomes a ScenarioError
// whose message names the file, the line and the key.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "reports/checkers.hpp"
#include "sim/clock.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/world.hpp"

namespace locksim {

// "scenarios/x.toml:12: [[client]] 'wrok': unknown key (did you mean 'work'?)"
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Fencing : std::uint8_t { None, Token, LockValue };
std::string_view fencing_name(Fencing f);

inline constexpr int kForever = -1;  // for counts: retry_count, repeat

// [lock]: the algorithm and its options. Which keys an algorithm accepts is
// declared in its registry entry (lockalgos/registry.hpp); the loader rejects
// the others.
struct LockConfig {
  std::string algorithm;                   // "redis-single", "setnx", ...
  std::string flavour;                     // empty: the algorithm's default
  std::optional<Duration> ttl;             // none: no expiry (setnx)
  Fencing fencing = Fencing::None;
  std::string key = "lock";
  std::string release = "compare-and-delete";  // redis-single: | "del" | "get-then-del"
  // Unset: the algorithm's (or its flavour's) default.
  std::optional<DurationRange> retry_delay;
  std::optional<int> retry_count;          // retries after the first try; kForever
  std::optional<Duration> request_timeout;
  std::int64_t first_token = 1;            // the first fencing token the service issues
  // Redlock.
  std::optional<double> drift_factor;      // clock drift allowance, as a fraction of the ttl
  std::optional<Duration> auto_extend;     // redsync, node-redlock: extend when this much validity is left
  std::string fanout;                      // "sequential" | "parallel"; empty: the flavour's
  std::string collect;                     // parallel: "quorum" | "all"; empty: the flavour's
  std::string unlock = "wait";             // | "no-wait": CLIENT REPLY SKIP, and go on
  // Redisson.
  Duration watchdog_timeout = Duration::s(30);  // the watchdog's lease; renewed every third of it
  std::optional<Duration> lease_time;      // a fixed lease: no watchdog
  std::optional<Duration> wait_time;       // how long tryLock waits; unset: lock() waits forever
  // ZooKeeper.
  Duration session_timeout = Duration::s(10);
  Duration tick_time = Duration::s(2);
  std::string on_suspended = "continue";   // | "stop"
  std::string watch = "predecessor";       // | "parent" (the herd)
  // etcd.
  Duration lease_ttl = Duration::s(10);
  std::string version = "3.5";             // | "3.4"
  int line = 0;                            // where [lock] is, for errors found later
};

enum class Persistence : std::uint8_t { None, AofAlways };

struct NodeConfig {
  std::string name;
  ClockSpec clock;
  Persistence persistence = Persistence::None;
  Duration restart_delay = Duration::zero();  // a restart fault takes effect this much later
  std::string replica_of;                  // Redis: this node replicates that master ("": a master)
  DurationRange replication_lag = DurationRange::fixed(Duration::ms(1));  // master -> replica, per write
  bool expiry_as_pxat = true;              // Redis >= 6.2 propagates PX as absolute PXAT (false: 6.0's PX)
  int line = 0;
};

// [sentinel]: watches the masters and promotes a replica of one that is down.
struct SentinelConfig {
  bool present = false;
  std::string name = "sentinel";
  Duration down_after = Duration::s(30);   // down-after-milliseconds
  Duration ping_period = Duration::s(1);
  int line = 0;
};

struct StorageConfig {
  std::string name = "storage";
  std::int64_t initial = 0;
  ClockSpec clock;
};

struct ClientConfig {
  std::string name;
  DurationRange start = DurationRange::fixed(Duration::zero());  // a range: drawn from the client's stream
  std::string job = "read-modify-write";   // | "hold": acquire, hold, release; no storage
  DurationRange work = DurationRange::fixed(Duration::s(1));
  DurationRange hold = DurationRange::fixed(Duration::s(1));  // job "hold"
  int repeat = 1;                          // kForever: until the run ends
  DurationRange think = DurationRange::fixed(Duration::zero());  // between repeats
  bool check_before_write = false;
  Duration storage_timeout = Duration::zero();  // zero: wait for storage as long as it takes
  ClockSpec clock;
  int line = 0;
};

enum class FaultKind : std::uint8_t {
  Pause, Crash, Restart, ClockJump, ClockDrift, Partition, Heal, Delay, Drop,
  Failover  // the sentinel promotes the target master's replica now (SENTINEL FAILOVER)
};
std::string_view fault_kind_name(FaultKind k);

struct FaultSpec {
  FaultKind kind = FaultKind::Pause;
  // When: exactly one of `at` and `on`.
  std::optional<Duration> at;              // true time since the start
  std::string on_process, on_event;        // on = "client1 acquired#2"
  int on_occurrence = 1;
  Duration after = Duration::zero();
  // What.
  std::string target;                      // pause, crash, restart, clock-jump, clock-drift
  std::optional<Duration> duration;        // pause (required), partition, delay, drop
  Duration by = Duration::zero();          // clock-jump: the jump; delay: extra delay per message
  std::int64_t drift_ppb = 0;              // clock-drift (drift_ppm in the file)
  std::vector<std::vector<std::string>> groups;  // partition
  bool one_way = false;                    // partition
  std::string from, to;                    // delay, drop: the link ("" = any)
  int count = kForever;                    // delay, drop: how many messages at most
  double probability = 1.0;                // drop
  int line = 0;
};

struct Expectation {
  bool present = false;                    // the file has an [expect] table
  std::set<ViolationKind> violations;
  std::optional<Duration> liveness_window;
};

struct Scenario {
  std::string path;
  std::string title, about, source;
  std::uint64_t seed = 1;
  Duration duration = Duration::s(60);
  LockConfig lock;
  NetworkConfig network;
  std::vector<NodeConfig> nodes;
  SentinelConfig sentinel;
  StorageConfig storage;
  std::vector<ClientConfig> clients;
  std::vector<FaultSpec> faults;
  Expectation expect;
};

// Reads and checks a scenario file. Throws ScenarioError.
Scenario load_scenario(const std::string& path);
// The same from text (tests); `path` is used in messages only.
Scenario parse_scenario(std::string_view toml_text, const std::string& path);

}  // namespace locksim
