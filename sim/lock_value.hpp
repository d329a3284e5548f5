// A value a client writes into a Redis key: the lock's random value, mostly.
//
// The recipes draw their values at random (redlock-rb's 20 urandom bytes as
// hex, Redisson's UUID and thread id "<hex>:1"): such a value is kept as the
// words drawn, so it is copied, compared and hashed as integers, with no
// allocation, and spelled as hex only where text is produced (a report, the
// trace's detail, the RESP of live mode and diff-redis). Any other value (a
// script's argument in diff-redis, the counter INCR keeps, a multi-lock's
// list, a timestamp) is kept as text.
//
// One spelling per value: from_text() turns a text that reads as a random
// value (16 to 48 lower-case hex digits, an even number, and optionally ":"
// and a decimal integer without leading zeros) into that form, so two
// LockValues are equal exactly when their texts are.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "sim/rng.hpp"

namespace locksim {

class LockValue {
 public:
  static constexpr int kMinBytes = 8;
  static constexpr int kMaxBytes = 24;

  LockValue() = default;  // the empty text
  // From text (a script, a reply, a counter): the random form if it reads as one.
  LockValue(std::string_view text) { *this = from_text(text); }  // NOLINT: implicit, values are text to users
  LockValue(const std::string& text) : LockValue(std::string_view(text)) {}  // NOLINT
  LockValue(const char* text) : LockValue(std::string_view(text)) {}  // NOLINT

  // `bytes` random bytes from `rng`, drawn as Rng::hex_token draws them (the
  // same words from the stream, spelled the same), and ":suffix" if suffix >= 0.
  static LockValue random(Rng& rng, int bytes, std::int64_t suffix = -1);
  static LockValue from_text(std::string_view text);

  bool is_random() const { return std::holds_alternative<Random>(v_); }
  bool empty() const;
  // The value as the protocol spells it.
  std::string text() const;
  // Its text, written into `buf` without an allocation when random; returns
  // a view of `buf` or of the stored text.
  std::string_view text(std::array<char, 80>& buf) const;
  // Into a running hash_mix: text as hash_mix(h, text()), a random value as its words.
  std::uint64_t mix_into(std::uint64_t h) const;

  friend bool operator==(const LockValue& a, const LockValue& b) { return a.v_ == b.v_; }

 private:
  struct Random {
    std::array<std::uint64_t, 3> words{};  // byte i is bits 8*(i%8) of words[i/8]; unused bytes zero
    std::int64_t suffix = -1;              // ":n", -1: none
    std::uint8_t bytes = 0;
    bool operator==(const Random&) const = default;
  };
  explicit LockValue(const Random& r) : v_(std::in_place_type<Random>, r) {}
  std::variant<std::string, Random> v_;
};

inline std::string operator+(const std::string& a, const LockValue& b) { return a + b.text(); }
inline std::string operator+(const char* a, const LockValue& b) { return a + b.text(); }
inline std::string operator+(const LockValue& a, const std::string& b) { return a.text() + b; }
inline std::string operator+(const LockValue& a, const char* b) { return a.text() + b; }

}  // namespace locksim
