#include "sim/lock_value.hpp"

#include <charconv>

namespace locksim {

namespace {
constexpr char kDigits[] = "0123456789abcdef";

// A character's value as a lower-case hex digit, -1 if it is none: a table,
// as a released lock's value is read back from its text (Grant::value).
struct HexDigits {
  std::int8_t of[256];
  constexpr HexDigits() : of{} {
    for (int c = 0; c < 256; ++c) of[c] = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  }
};
constexpr HexDigits kHex;
int hex_digit(char c) { return kHex.of[static_cast<unsigned char>(c)]; }
}  // namespace

LockValue LockValue::random(Rng& rng, int bytes, std::int64_t suffix) {
  if (bytes < kMinBytes || bytes > kMaxBytes) {  // kept as text: the same draws
    LockValue v;
    std::string text = rng.hex_token(bytes);
    if (suffix >= 0) {
      text += ':';  // not ":" + std::to_string(...): a g++ 12 -Wrestrict false positive
      text += std::to_string(suffix);
    }
    v.v_ = std::move(text);
    return v;
  }
  Random r;
  r.bytes = static_cast<std::uint8_t>(bytes);
  r.suffix = suffix;
  // Rng::hex_token: a word per 8 bytes, its low byte first.
  for (int i = 0; i * 8 < bytes; ++i) {
    std::uint64_t w = rng.next();
    const int used = bytes - i * 8;
    if (used < 8) w &= (std::uint64_t{1} << (8 * used)) - 1;
    r.words[static_cast<std::size_t>(i)] = w;
  }
  return LockValue(r);  // built as the random form: no empty text made and replaced
}

LockValue LockValue::from_text(std::string_view text) {
  const std::size_t colon = text.find(':');
  const std::string_view hex = text.substr(0, colon);
  Random r;
  bool random = hex.size() % 2 == 0 && hex.size() >= 2 * kMinBytes && hex.size() <= 2 * kMaxBytes;
  for (std::size_t i = 0; random && i < hex.size(); i += 2) {
    const int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if ((hi | lo) < 0) random = false;
    else r.words[i / 16] |= std::uint64_t(hi * 16 + lo) << (4 * (i % 16));
  }
  if (random && colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    const bool canonical = !digits.empty() && digits.size() <= 18 && (digits[0] != '0' || digits.size() == 1);
    std::int64_t n = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    random = canonical && ec == std::errc{} && end == digits.data() + digits.size() && n >= 0;
    r.suffix = n;
  }
  if (!random) {
    LockValue v;
    v.v_ = std::string(text);
    return v;
  }
  r.bytes = static_cast<std::uint8_t>(hex.size() / 2);
  return LockValue(r);
}

bool LockValue::empty() const {
  const std::string* s = std::get_if<std::string>(&v_);
  return s && s->empty();
}

std::string_view LockValue::text(std::array<char, 80>& buf) const {
  if (const std::string* s = std::get_if<std::string>(&v_)) return *s;
  const Random& r = std::get<Random>(v_);
  std::size_t n = 0;
  for (int i = 0; i < r.bytes; ++i) {
    const auto byte = static_cast<unsigned>((r.words[static_cast<std::size_t>(i / 8)] >> (8 * (i % 8))) & 0xff);
    buf[n++] = kDigits[byte >> 4];
    buf[n++] = kDigits[byte & 0xf];
  }
  if (r.suffix >= 0) {
    buf[n++] = ':';
    const auto [end, ec] = std::to_chars(buf.data() + n, buf.data() + buf.size(), r.suffix);
    n = static_cast<std::size_t>(end - buf.data());
  }
  return {buf.data(), n};
}

std::string LockValue::text() const {
  std::array<char, 80> buf;
  return std::string(text(buf));
}

// The trace hash takes a random value's words, not its hex (four mixes for
// redlock-rb's 20 bytes where the text took six and a table lookup per
// byte). Two values are equal exactly when their words, length and suffix
// are (from_text keeps one spelling per value), so the hash still changes
// whenever the text would; the tag keeps a random value apart from a text.
std::uint64_t LockValue::mix_into(std::uint64_t h) const {
  const Random* r = std::get_if<Random>(&v_);
  if (!r) return hash_mix(h, std::get<std::string>(v_));
  for (int i = 0; i * 8 < r->bytes; ++i) h = hash_mix(h, r->words[static_cast<std::size_t>(i)]);
  constexpr std::uint64_t kRandomTag = 0x52414e44ULL << 32;  // "RAND"
  return hash_mix(hash_mix(h, kRandomTag | r->bytes), static_cast<std::uint64_t>(r->suffix));
}

}  // namespace locksim
