// The resource the lock protects: a counter that clients read and write over
// the network. With fencing = "token" it remembers the highest token it has
// seen and rejects any lower one (Kleppmann 2016, fig. 2). Tokens are seen
// on writes only, unless reads are fenced too ([storage] fenced_reads): then
// a read presents its token, a read with a lower token than the highest seen
// is refused, and the read's token counts as seen, so a holder paused
// between its read and its write cannot write after the next holder's read
// (catalogue K9).
#pragma once

#include "sim/fencing.hpp"
#include "sim/world.hpp"

namespace locksim {

// The storage's rules, apart from the process that serves them: what a
// request does to the counter, and the event that says so. The simulated
// Storage serves them over the network; the live run serves the same rules
// inside locksim (live/live_run.cpp), so that the two judge a token alike.
class StorageRules {
 public:
  StorageRules(std::int64_t initial, Fencing fencing, bool fenced_reads);

  // What serving `req` from `from` did: the reply, and the event to note.
  struct Served {
    storage::Reply reply;
    Ev kind;
    TraceEvent fields;
  };
  Served serve(const storage::Request& req, ProcId from);

  std::int64_t counter() const { return counter_; }
  std::int64_t highest_token() const { return highest_token_; }
  const std::string& owner() const { return owner_; }
  Fencing fencing() const { return fencing_; }
  bool fenced_reads() const { return fenced_reads_; }

 private:
  Served read(const storage::Request& req, ProcId from);
  Served write(const storage::Request& req, ProcId from);
  // Token fencing: why `token` is refused ("" when it is not).
  std::string token_refusal(std::int64_t token) const;

  Fencing fencing_;
  bool fenced_reads_;           // Token only: reads present, and are checked against, the token
  std::int64_t counter_;        // durable: a crash of the storage keeps it
  std::int64_t highest_token_ = -1;  // the highest token seen (on writes; on reads too when fenced)
  std::string owner_;           // LockValue: the last claim
};

class Storage : public Process {
 public:
  Storage(World& world, std::string name, const ClockSpec& clock, std::int64_t initial,
          Fencing fencing, bool fenced_reads = false);
  std::int64_t counter() const { return rules_.counter(); }
  std::int64_t highest_token() const { return rules_.highest_token(); }

  void digest(Digest& d) const override {
    d.add(rules_.counter());
    d.add(rules_.highest_token());
    d.add(rules_.owner());
  }

 protected:
  void on_message(Message& m) override;

 private:
  StorageRules rules_;
};

}  // namespace locksim
