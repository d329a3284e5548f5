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

#include "harness/faults/table.hpp"
#include "judge/checkers.hpp"
#include "lockalgos/config.hpp"
#include "sim/clock.hpp"
#include "sim/node_config.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/world.hpp"

namespace locksim {

// "scenarios/x.toml:12: [[client]] 'wrok': unknown key (did you mean 'work'?)"
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// [sentinel]: the Sentinel processes; they watch the masters and fail over
// one that is down (sim/servers/redis/sentinel.hpp).
inline constexpr int kMaxSentinels = 9;
struct SentinelConfig {
  bool present = false;
  std::string name = "sentinel";           // with sentinels > 1 the processes are <name>1 .. <name>N
  int sentinels = 1;
  std::optional<int> quorum;               // default: a majority of the sentinels
  Duration down_after = Duration::s(30);   // down-after-milliseconds (sentinel.c:88)
  Duration failover_timeout = Duration::s(180);  // failover-timeout (sentinel.c:96)
  Duration ping_period = Duration::s(1);   // SENTINEL_PING_PERIOD (sentinel.c:82)
  ClockSpec clock;                         // every sentinel's
  int line = 0;
  std::string process_name(int i) const { return sentinels == 1 ? name : name + std::to_string(i + 1); }
  int quorum_or_default() const { return quorum.value_or(sentinels / 2 + 1); }
};

struct StorageConfig {
  std::string name = "storage";
  std::int64_t initial = 0;
  ClockSpec clock;
  // With [lock] fencing = "token": reads present the token too, and the
  // storage refuses a read or a write older than the highest token seen on either.
  bool fenced_reads = false;
};

// What a client does under the lock: read-modify-write the storage's
// counter, or just hold the lock a while (no storage).
enum class JobKind : std::uint8_t { ReadModifyWrite, Hold };
std::string_view job_name(JobKind k);

struct ClientConfig {
  std::string name;
  DurationRange start = DurationRange::fixed(Duration::zero());  // a range: drawn from the client's stream
  JobKind job = JobKind::ReadModifyWrite;
  DurationRange work = DurationRange::fixed(Duration::s(1));
  DurationRange hold = DurationRange::fixed(Duration::s(1));  // job "hold"
  int repeat = 1;                          // kForever: until the run ends
  DurationRange think = DurationRange::fixed(Duration::zero());  // between repeats
  bool check_before_write = false;
  LibraryUse library;                      // a library scenario's own keys (using, check)
  Duration storage_timeout = Duration::zero();  // zero: wait for storage as long as it takes
  ClockSpec clock;
  int line = 0;
};

// A [[fault]]: when, and what, for any kind (harness/faults/table.hpp); each
// kind reads the fields its keys name.
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

// Set one [lock] key to `value_text`, written as TOML ("\"10s\"", "0.01",
// "true"; nullopt: remove the key), and parse the table again: the typed
// options follow, and the writer writes the new text. A rejection is the
// loader's, located at the key's line in the file ([lock]'s for a new key);
// the scenario is then left as it was. Tests, explore's --matrix and sweeps
// change options this way.
void set_lock_option(Scenario& s, std::string_view key, std::optional<std::string> value_text);
// Several at once, parsed once (changing the algorithm with the keys it needs).
struct LockOptionChange {
  std::string key;
  std::optional<std::string> value_text;
};
void set_lock_options(Scenario& s, const std::vector<LockOptionChange>& changes);

}  // namespace locksim
