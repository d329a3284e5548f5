// The storage's protocol: reads, writes and claims of the resource the lock
// protects (sim/storage.hpp), and their replies.
#pragma once

#include <cstdint>
#include <string>

namespace locksim {

namespace storage {

struct Request {
  // Claim: antirez's proposal — mark the resource as ours (owner = our lock value)
  // before working; with fencing = "lock-value" a write must then name the owner.
  enum class Op : std::uint8_t { Read, Write, Claim };
  Op op = Op::Read;
  std::int64_t value = 0;   // for Write: the new counter value
  std::int64_t token = -1;  // fencing token presented, -1: none
  std::string owner;        // Claim, Write: the lock value (fencing = "lock-value")
};

struct Reply {
  bool accepted = true;
  std::int64_t value = 0;  // Read: the counter; Write: the value now stored
  std::string reason;      // why a write was rejected
};

std::string describe(const Request& r);
std::string describe(const Reply& r);

}  // namespace storage

}  // namespace locksim
