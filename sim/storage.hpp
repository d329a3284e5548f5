// The resource the lock protects: a counter that clients read and write over
// the network. With fencing = "token" it remembers the highest token it has
// seen and rejects any lower one (Kleppmann 2016, fig. 2).
#pragma once

#include "sim/world.hpp"

namespace locksim {

// Token: rejects a token lower than the highest seen (Kleppmann).
// LockValue: a client claims the resource with its lock value, and a write is
// accepted only while that value is still the owner (antirez's check-and-set).
enum class StorageFencing : std::uint8_t { None, Token, LockValue };

class Storage : public Process {
 public:
  Storage(World& world, std::string name, const ClockSpec& clock, std::int64_t initial,
          StorageFencing fencing);

  std::int64_t counter() const { return counter_; }
  std::int64_t highest_token() const { return highest_token_; }
  void digest(Digest& d) const override {
    d.add(counter_);
    d.add(highest_token_);
    d.add(owner_);
  }

 protected:
  void on_message(Message& m) override;

 private:
  storage::Reply write(const storage::Request& req, ProcId from);

  StorageFencing fencing_;
  std::int64_t counter_;        // durable: a crash of the storage keeps it
  std::int64_t highest_token_ = -1;
  std::string owner_;           // LockValue: the last claim
};

}  // namespace locksim
