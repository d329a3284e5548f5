// `locksim diff-redis`: the simulator's Redis model (sim/servers/redis/node.hpp) checked
// against a real redis-server, reply by reply.
//
// A sequence is a list of steps: commands the lock algorithms send (as
// redis::Request, so as live/resp.cpp sends them, scripts and all), sleeps,
// and steps of one node's wall clock. It runs twice:
//   * on the model: a World of its own with one RedisNode (or a primary and a
//     replica), each command executed directly on the node, a sleep run on
//     the world's clock, a clock step a World::clock_jump; deterministic;
//   * on real servers started by the Supervisor with the clock shim: each
//     server's wall clock is FROZEN (drift -1e9 ppb: it reads the same
//     instant however much real time passes) at the same instant as the
//     model's, and only ever stepped: a sleep steps it forward, which is all
//     a sleep does to what Redis answers (expiry is judged by the wall clock
//     alone: db.c keyIsExpired). So replies that depend on time (PTTL, a key
//     that has just expired) are exactly comparable.
// Every reply is compared; a sequence whose replies differ is shrunk (delta
// debugging over its steps) to a shortest sequence that still differs.
//
// The active-expiry cycle runs on its own timer (serverCron, on the monotonic
// clock), so on the real server it would delete an expired key before or
// after a command looks, as real time allows; and that shows, once a clock
// steps back (a deleted key stays deleted, a key not yet deleted is alive
// again) or a replica is promoted (the master's DEL reached it, or not). So
// it runs only at explicit steps: the real servers run with it off (DEBUG
// SET-ACTIVE-EXPIRE 0) and an ActiveExpire step turns it on for a few cron
// passes (hz 100); the model's cycle has no timer of its own and the step
// runs it once (RedisNode::active_expire_now). Between those, keys expire on
// lookup only, on both sides. With a replica, replication catches up before
// each step (the model runs its world with the wall clocks held; the real
// master is asked to WAIT).
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

namespace locksim::live::diff {

struct Step {
  enum class Kind : std::uint8_t { Command, Sleep, ClockStep, ActiveExpire };
  Kind kind = Kind::Command;
  int node = 0;  // 0: "r1" (the primary at the start), 1: "r2" (its replica)
  redis::Request req;
  // SET: an expiry given as EX seconds (the model gets PX = seconds * 1000).
  bool as_ex = false;
  // SET: an absolute expiry, PXAT <the node's wall ms now + this>.
  std::optional<Duration> pxat_from_now;
  Duration by = Duration::zero();  // Sleep (all nodes), ClockStep (this node's wall clock)
  // ActiveExpire: this node runs its active-expiry cycle (a master: a
  // replica waits for its master's DEL).
};
using Sequence = std::vector<Step>;
using Replies = std::vector<redis::Reply>;  // one per Command step, in order

struct Options {
  bool replica = false;  // a primary and a replica
};

// Sequence `index` of seed `seed`: the same steps on every machine.
Sequence generate(std::uint64_t seed, std::uint64_t index, const Options& options);

// The wall-clock instant every sequence starts at, on every node, in both
// runs: whole milliseconds plus 250 us, so that sleeps and steps in whole
// multiples of 100 us never land within 50 us of a millisecond boundary.
Instant base_wall();

// The model's replies.
Replies run_model(const Sequence& seq, const Options& options);

// One real redis-server (two with a replica), started once, reset between
// sequences (FLUSHALL, the roles and clocks put back).
class RealRedis {
 public:
  explicit RealRedis(const Options& options);
  ~RealRedis();
  RealRedis(const RealRedis&) = delete;
  RealRedis& operator=(const RealRedis&) = delete;
  Replies run(const Sequence& seq);
  std::uint16_t port(int node) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Whether two replies agree: the same kind and value; errors by their code
// (the first word: ERR, READONLY, WRONGTYPE), since a script's error text
// names the script's SHA.
bool same(const redis::Reply& a, const redis::Reply& b);
// The first command (its index among the Command steps) whose replies differ.
std::optional<std::size_t> first_difference(const Replies& model, const Replies& real);

// Delta debugging (Zeller's ddmin, complements only): a shortest sequence,
// by removing steps, for which `fails` still holds. REQUIRES: fails(seq).
Sequence shrink(Sequence seq, const std::function<bool(const Sequence&)>& fails);

// One step as a line: "r1: SET k1 a NX PX 1500", "sleep 1.2s", "r2 clock +30s".
std::string describe(const Step& step);
// The steps with both sides' replies, and a redis-cli transcript of it
// (ports as given; clock steps as comments: redis-cli cannot make them).
void print_case(std::ostream& out, const Sequence& seq, const Replies& model, const Replies& real,
                const std::vector<std::uint16_t>& ports);

struct RunOptions {
  std::uint64_t sequences = 1000;
  std::uint64_t seed = 1;
  Options options;
  std::size_t max_reported = 3;  // mismatches shrunk and printed in full
};
struct Summary {
  std::uint64_t sequences = 0;
  std::uint64_t commands = 0;
  std::uint64_t mismatches = 0;
};
// Runs and compares `sequences` sequences, printing progress and each case.
Summary run(const RunOptions& options, std::ostream& out);

}  // namespace locksim::live::diff
