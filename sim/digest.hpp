// A 64-bit fingerprint of a simulation's state, folded field by field
// (FNV-1a over 64-bit words), for explore --exhaustive's set of states seen
// (TLC's fingerprints). Fold fields in a fixed order; a multiset (the event
// queue's events) is folded with unordered().
#pragma once

#include <cstdint>
#include <string_view>

#include "sim/time.hpp"

namespace locksim {

class Digest {
 public:
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h_ ^= (v >> (8 * i)) & 0xff;
      h_ *= 0x100000001b3ULL;
    }
  }
  void add(std::int64_t v) { add(static_cast<std::uint64_t>(v)); }
  void add(int v) { add(static_cast<std::uint64_t>(static_cast<std::int64_t>(v))); }
  void add(bool v) { add(std::uint64_t{v}); }
  void add(Instant t) { add(t.ns()); }
  void add(Duration d) { add(d.count_ns()); }
  void add(std::string_view s) {
    add(static_cast<std::uint64_t>(s.size()));
    for (char c : s) {
      h_ ^= static_cast<unsigned char>(c);
      h_ *= 0x100000001b3ULL;
    }
  }
  // Adds `v` so that the order of unordered() calls does not matter.
  void unordered(std::uint64_t v) {
    std::uint64_t z = v + 0x9e3779b97f4a7c15ULL;  // splitmix64's finaliser spreads it
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    sum_ += z ^ (z >> 31);
  }
  std::uint64_t value() const {
    Digest d = *this;
    d.add(sum_);
    return d.h_;
  }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
  std::uint64_t sum_ = 0;
};

}  // namespace locksim
