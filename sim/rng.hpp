// Seeded randomness: xoshiro256** seeded through splitmix64, and our own draw
// functions (the standard library's distributions differ between
// implementations, and a trace must be the same bytes on every machine).
//
// Each component forks its own stream by name (`fork("client3")`), so adding a
// client or a fault changes only the draws of what it touches.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>

#include "sim/time.hpp"

namespace locksim {

constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

constexpr std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// One 64-bit word into a running hash (a multiply-rotate round, as in the
// xxHash family), and a string a word at a time: cheap enough for every event
// and every message of a long run (the trace hash, message fingerprints).
constexpr std::uint64_t hash_mix(std::uint64_t h, std::uint64_t x) {
  h ^= x * 0x9E3779B97F4A7C15ULL;
  h = (h << 31) | (h >> 33);
  return h * 0xBF58476D1CE4E5B9ULL;
}
// The last n < 8 bytes at p as the low bytes of a word (what a memcpy of n
// bytes into a zeroed word gives on a little-endian machine), read in whole
// loads: a memcpy of a variable length goes through the stack, and the word
// loaded back waits for its narrower stores (a store-forwarding stall, on
// every Redis command's key, in a profile of explore).
inline std::uint64_t tail_word(const char* p, std::size_t n) {
  auto byte = [&](std::size_t i) { return std::uint64_t{static_cast<unsigned char>(p[i])}; };
  if (n >= 4) {  // two 4-byte loads that overlap: the shared bytes land in the same place
    std::uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + n - 4, 4);
    return std::uint64_t{lo} | (std::uint64_t{hi} << (8 * (n - 4)));
  }
  if (n == 0) return 0;
  return byte(0) | byte(n / 2) << (8 * (n / 2)) | byte(n - 1) << (8 * (n - 1));
}
inline std::uint64_t hash_mix(std::uint64_t h, std::string_view s) {
  std::uint64_t word = 0;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::memcpy(&word, s.data() + i, 8);
    h = hash_mix(h, word);
  }
  word = tail_word(s.data() + i, s.size() - i);
  return hash_mix(h, word ^ (static_cast<std::uint64_t>(s.size()) << 56));
}

// The draws every stream offers, written once over its next(): a stream that
// owns its state (Rng) and one drawn from where a state is kept (Rng::Ref, a
// network link's).
template <typename Stream>
class RngDraws {
 public:
  // Uniform in [0, n), unbiased (Lemire's multiply-and-reject). REQUIRES: n > 0.
  std::uint64_t below(std::uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(self().next()) * n;
    auto low = static_cast<std::uint64_t>(m);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<unsigned __int128>(self().next()) * n;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform integer in [lo, hi] inclusive. REQUIRES: lo <= hi.
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    const auto span = static_cast<std::uint64_t>(hi - lo);
    if (span == ~std::uint64_t{0}) return static_cast<std::int64_t>(self().next());
    return lo + static_cast<std::int64_t>(below(span + 1));
  }

  // Uniform duration in [lo, hi], at nanosecond resolution.
  Duration between(Duration lo, Duration hi) {
    return Duration::ns(between(lo.count_ns(), hi.count_ns()));
  }

  // True with probability p, compared on 53 bits so the result is exact and portable.
  bool chance(double p) {
    if (p <= 0.0) return false;
    if (p >= 1.0) return true;
    const auto threshold = static_cast<std::uint64_t>(p * 9007199254740992.0);  // 2^53
    return (self().next() >> 11) < threshold;
  }

  // `bytes` random bytes as lower-case hex: lock values, like the 20 urandom bytes of redlock-rb.
  std::string hex_token(int bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(static_cast<std::size_t>(bytes) * 2);
    std::uint64_t word = 0;
    for (int i = 0; i < bytes; ++i) {
      if (i % 8 == 0) word = self().next();
      const auto byte = static_cast<unsigned>(word & 0xff);
      word >>= 8;
      out += digits[byte >> 4];
      out += digits[byte & 0xf];
    }
    return out;
  }

 private:
  Stream& self() { return static_cast<Stream&>(*this); }
};

// xoshiro256** (Blackman and Vigna): one step of the state, its output.
constexpr std::uint64_t xoshiro_next(std::array<std::uint64_t, 4>& s) {
  const std::uint64_t result = std::rotl(s[1] * 5, 7) * 9;
  const std::uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = std::rotl(s[3], 45);
  return result;
}

class Rng : public RngDraws<Rng> {
 public:
  explicit Rng(std::uint64_t seed = 0) { reseed(seed); }

  void reseed(std::uint64_t seed) {
    seed_ = seed;
    std::uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }
  std::uint64_t seed() const { return seed_; }
  // Where the stream is (explore --exhaustive's fingerprint of a state).
  std::uint64_t position() const { return hash_mix(hash_mix(hash_mix(hash_mix(seed_, s_[0]), s_[1]), s_[2]), s_[3]); }

  // A child stream named `name`: independent of every sibling, and of how many
  // draws this stream has made.
  Rng fork(std::string_view name) const {
    std::uint64_t mix = seed_ ^ fnv1a64(name);
    return Rng{splitmix64(mix)};
  }

  // fork() of the name that is `parts` one after the other (FNV-1a runs on
  // across them), without building it: the same stream.
  Rng fork_parts(std::initializer_list<std::string_view> parts) const {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::string_view p : parts) h = fnv1a64(p, h);
    std::uint64_t mix = seed_ ^ h;
    return Rng{splitmix64(mix)};
  }

  // The four words a stream has reached: what a network link keeps (32
  // bytes, two links to a cache line; see Network), drawn from in place
  // through a Ref. A stream made by reseed() or fork() is never all zero
  // (its words are four outputs of splitmix64's bijective mix from four
  // distinct states, so at most one is zero, and xoshiro256** never reaches
  // zero from a state that is not), so all zero can mean "not made yet".
  using State = std::array<std::uint64_t, 4>;
  const State& state() const { return s_; }
  void set_state(const State& s) { s_ = s; }
  class Ref : public RngDraws<Ref> {
   public:
    explicit Ref(State& s) : s_(&s) {}
    std::uint64_t next() { return xoshiro_next(*s_); }

   private:
    State* s_;
  };

  std::uint64_t next() { return xoshiro_next(s_); }

 private:
  State s_{};
  std::uint64_t seed_ = 0;
};

// A fixed duration or a uniform range "1ms..3ms".
struct DurationRange {
  Duration lo, hi;
  static DurationRange fixed(Duration d) { return {d, d}; }
  bool is_fixed() const { return lo == hi; }
  template <typename Stream>  // an Rng, or an Rng::Ref made for the draw
  Duration draw(Stream&& rng) const { return is_fixed() ? lo : rng.between(lo, hi); }
};

std::string format_range(const DurationRange& r);

}  // namespace locksim
