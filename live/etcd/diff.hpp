// `locksim diff-etcd`: the simulator's etcd model (sim/etcd_server.hpp)
// checked against a real etcd 3.4, reply by reply — the analogue of
// diff-redis (live/diff_redis.hpp).
//
// A sequence is a list of steps: what the lock recipe sends (a lease grant,
// a keepalive, the Mutex's Txn, a range of the lock prefix or of one key, a
// watch of a key from the revision a range saw it at, a delete) and waits.
// It runs twice: on the model (a World of its own with one EtcdServer and a
// probe process calling it, deterministic) and on one real etcd started by
// the Supervisor (its leases revoked and keys deleted between sequences; the
// model starts at the revision the real store is at).
//
// Time. etcd's clock cannot be frozen or stepped (a Go program reads it
// through the vDSO: no shim reaches it), and its lessor revokes an expired
// lease from a loop of its own every 500 ms of real time. So steps are run
// at planned times in real time (each command planned 40 ms after the one
// before: a write waits for etcd's WAL sync), and placed away from the
// boundaries: a lease of TTL T last renewed at t expires at E = t + T and
// is revoked within (E, E + 500 ms] on both sides; no step runs within
// [E - 250 ms, E + 750 ms] of any lease, where the outcome would depend on
// which side's loop ran when. The one exception is a keepalive of that
// lease after E + 250 ms: the lease has expired and awaits its revoke, and
// both sides answer it not found (the real one once the revoke is done,
// lease/lessor.go:412-426, v3.4.23); the next step then waits for the
// window's end. A real step that runs more than 100 ms after its planned
// time (a loaded machine) voids the run, which is made again. Outside those
// windows every comparison is exact.
//
// Compared: each reply's outcome (ok or the error word), the lease's TTL, a
// Txn's create revision and first-created key, a range's keys with their
// create revisions, a delete's count, and the store's revision in every
// reply but a keepalive's (etcd fills that header before it renews); and
// at every wait, which watches have fired. Lease ids are not compared (the
// model numbers its own): each side maps the n-th grant to its own id.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/message.hpp"
#include "sim/time.hpp"

namespace locksim::live::etcd::diff {

struct Step {
  enum class Kind : std::uint8_t { Grant, KeepAlive, Put, Range, Watch, Delete, Wait };
  Kind kind = Kind::Wait;
  int lease = 0;            // KeepAlive, Put: the n-th lease granted (0 first); one never granted is unknown to both
  std::string key;          // Put, Delete; Range: the prefix
  std::int64_t ttl_s = 0;   // Grant: the TTL asked for, in seconds
  int pick = 0;             // Watch: the key of the last range's answer to watch (modulo their number)
  Duration wait;            // Wait: how long; a command: a pause before it, without a look at the watches
};
using Sequence = std::vector<Step>;

// What one step gave, as compared: a command's reply, or at a wait the
// watches fired so far (by their order among the sequence's watches).
struct Outcome {
  bool skipped = false;  // a watch with no key to watch
  bool ok = true;
  std::string error;
  std::int64_t id = 0;                 // a Txn's create revision, a delete's count
  Duration ttl = Duration::zero();     // Grant, KeepAlive
  std::vector<coord::Node> nodes;      // Txn, Range
  std::optional<std::int64_t> revision;  // the store's, where compared
  std::vector<int> fired;              // Wait
};
using Outcomes = std::vector<Outcome>;

// The planned time of each step, or nullopt when some step would run where
// the outcome depends on when a revoke loop ran (see above).
std::optional<std::vector<Duration>> schedule(const Sequence& seq);

// Sequence `index` of seed `seed`: the same steps on every machine, always schedulable.
Sequence generate(std::uint64_t seed, std::uint64_t index);

// The model's outcomes, its store starting after revision `revision`.
Outcomes run_model(const Sequence& seq, std::int64_t revision);

// One real etcd, started once; each run revokes what the last one left.
class RealEtcd {
 public:
  RealEtcd();
  ~RealEtcd();
  RealEtcd(const RealEtcd&) = delete;
  RealEtcd& operator=(const RealEtcd&) = delete;
  struct Run {
    Outcomes outcomes;
    std::int64_t revision = 0;  // the store's when the sequence began
    // Not comparable, and why: a step ran too late for its planned time (a
    // loaded machine), or etcd did not answer (its log's tail is in `why`).
    bool voided = false;
    std::string why;
  };
  Run run(const Sequence& seq);
  std::uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

bool same(const Outcome& a, const Outcome& b);
std::optional<std::size_t> first_difference(const Outcomes& model, const Outcomes& real);

// One step as a line: "grant 3s", "txn /lock/a lease 1", "wait 1.2s".
std::string describe(const Step& step);
std::string describe(const Outcome& outcome);
void print_case(std::ostream& out, const Sequence& seq, const Outcomes& model, const Outcomes& real, std::uint16_t port);

struct RunOptions {
  std::uint64_t sequences = 100;
  std::uint64_t seed = 1;
  std::size_t max_reported = 3;
};
struct Summary {
  std::uint64_t sequences = 0;
  std::uint64_t steps = 0;       // outcomes compared
  std::uint64_t mismatches = 0;
  std::uint64_t reruns = 0;      // runs voided (a late step, no answer) and made again
  std::uint64_t void_sequences = 0;  // voided three times: not compared
};
Summary run(const RunOptions& options, std::ostream& out);

}  // namespace locksim::live::etcd::diff
