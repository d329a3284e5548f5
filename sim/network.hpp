// The network: point-to-point links with one-way delays, loss, partitions, and
// rules that hold back or drop the messages of particular links.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/digest.hpp"
#include "sim/proc_id.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace locksim {

class World;

struct LinkRule {
  enum class Kind : std::uint8_t { Hold, Drop, ExtraDelay };
  Kind kind = Kind::Hold;
  ProcId from = kNoProc;  // kNoProc: any
  ProcId to = kNoProc;    // kNoProc: any
  Instant from_time;
  Instant until = Instant::never();  // messages sent before this are affected
  std::int64_t remaining = -1;       // -1: any number of messages
  double probability = 1.0;          // Drop
  Duration extra;                    // ExtraDelay
  std::string label;                 // the fault it comes from, for the trace
  bool matches(ProcId f, ProcId t, Instant now) const {
    return (from == kNoProc || from == f) && (to == kNoProc || to == t) && now >= from_time &&
           now < until && remaining != 0;
  }
};

struct Partition {
  std::uint64_t id;
  std::vector<std::vector<ProcId>> groups;
  bool one_way = false;  // only messages from groups[0] to the others are cut
  std::string label;
};

struct NetworkConfig {
  DurationRange delay = DurationRange::fixed(Duration::ms(1));
  double loss = 0.0;
  bool fifo = true;  // per link, like a TCP connection
};

class Network {
 public:
  explicit Network(World& world) : world_(world) {}
  void configure(const NetworkConfig& c) { config_ = c; }
  const NetworkConfig& config() const { return config_; }

  // Returns the message id (replies name it in `reply_to`). The body is
  // moved once, into the slot the message waits in (a Redis reply, say, as
  // itself, not through a Payload of its own). Defined in world.hpp, beside
  // the World whose slots it writes.
  template <typename Body>
  std::uint64_t send(ProcId from, ProcId to, std::uint64_t reply_to, Body&& body);
  // send(), once the body is in its message slot (World::new_message_slot).
  std::uint64_t send_stored(ProcId from, ProcId to, std::uint64_t reply_to, std::uint64_t slot);

  std::uint64_t partition(std::vector<std::vector<ProcId>> groups, bool one_way, std::string label);
  void heal(std::optional<std::uint64_t> id = std::nullopt);
  void add_rule(LinkRule r) { rules_.push_back(std::move(r)); }
  // No more holding, dropping or delaying (messages already held keep their time).
  void clear_rules() { rules_.clear(); }
  bool blocked(ProcId from, ProcId to) const;

  std::uint64_t messages_sent() const { return sent_; }
  void digest(Digest& d) const;  // partitions and rules

 private:
  // Links are directed: a -> b draws its delays from its own stream, and
  // keeps its own FIFO time. Two processes' two links share one cache line
  // (a LinkPair), so a request and its reply touch one line of link state,
  // and a client's ten links to the lock's five nodes five lines. (A link of
  // 64 bytes of its own, found through a row of indices, missed the cache
  // at each use with 1,000 clients: 4% slower; bench/README.md, "Links in
  // pairs".)
  struct alignas(64) LinkPair {
    Rng::State stream[2]{};  // [0]: from the lower id to the higher; all zero: not made yet
  };
  // What a message touches only in some worlds: a FIFO link's time, and
  // whether a link whose stream is not made has carried a message (the
  // world's digest lists the links in order of first use).
  struct LinkInfo {
    Instant last_delivery;
    bool used = false;
  };
  static bool made(const Rng::State& s) { return (s[0] | s[1] | s[2] | s[3]) != 0; }
  // The pair of processes a link joins, by the row it lies in (its higher
  // process) and its place there (its lower one), and which of the two it is.
  struct Ends {
    ProcId hi, lo;
    std::size_t down;  // 1: from the higher id to the lower
  };
  static Ends ends(ProcId from, ProcId to) { return from > to ? Ends{from, to, 1} : Ends{to, from, 0}; }
  // The link from -> to, as 2 * its pair + its direction: found, or made.
  std::size_t link(ProcId from, ProcId to);
  // The same, if the link has carried a message.
  std::optional<std::size_t> find_link(ProcId from, ProcId to) const;
  Rng::State& stream(std::size_t k) { return pairs_[k >> 1].stream[k & 1]; }
  const Rng::State& stream(std::size_t k) const { return pairs_[k >> 1].stream[k & 1]; }
  Rng fork_link_rng(ProcId from, ProcId to) const;
  // A link's stream, drawn from in its pair: made at its first draw (a
  // stream forked by name is the same whenever it is made, and a link with
  // a fixed delay, no loss and no drop rule never draws).
  Rng::Ref link_rng(std::size_t k, ProcId from, ProcId to) {
    Rng::State& s = stream(k);
    if (!made(s)) s = fork_link_rng(from, to).state();
    return Rng::Ref(s);
  }
  // A message not sent on (a partition, a drop rule, loss): noted, its slot freed.
  std::uint64_t drop(ProcId from, ProcId to, std::uint64_t id, std::uint64_t slot, std::uint64_t content,
                     std::string_view why);

  World& world_;
  NetworkConfig config_;
  // Where the pairs are: each process has a row of them, one per process
  // of a lower id (or its own) from the lowest it has exchanged messages
  // with: a lock node's row spans the clients (whose ids come first). A row is
  // widened to at least twice its width (copied to the end of pairs_), so
  // memory stays linear in processes whatever order links come in. (A table
  // with a cell for every pair of processes grew as the square of them: the
  // benchmark's workload with ten thousand clients peaked at 453 MB;
  // bench/README.md, "Links by sender".)
  struct LinkRow {
    ProcId lo = 0;            // the lower process of the row's first pair
    std::uint32_t width = 0;  // pairs
    std::size_t at = 0;       // where they start in pairs_
  };
  std::size_t widen(LinkRow& row, ProcId hi, ProcId lo);  // to take pair (lo, hi); returns its place
  std::vector<LinkRow> link_rows_;  // by the higher process of a pair
  std::vector<LinkPair> pairs_;
  std::vector<LinkInfo> link_info_;  // by link: 2 * pair + direction
  std::vector<std::pair<ProcId, ProcId>> links_used_;  // in order of first use (the digest's order)
  std::vector<Partition> partitions_;
  std::vector<LinkRule> rules_;
  std::uint64_t next_partition_ = 1;
  std::uint64_t next_message_ = 1;
  std::uint64_t sent_ = 0;
};

}  // namespace locksim
