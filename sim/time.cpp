#include "sim/time.hpp"

#include <cctype>
#include <cstdlib>

namespace locksim {

namespace {

enum class Parsed : std::uint8_t { Ok, Malformed, TooLong };

Parsed parse(std::string_view text, Duration& out) {
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  // Integer and fraction parts as decimal digits, no floating point: "1.5s" is exact.
  std::int64_t whole = 0;
  std::int64_t frac = 0, frac_scale = 1;
  bool digits = false, huge = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (whole > (std::int64_t{1} << 50)) huge = true;  // keep reading: the unit may still be wrong
    else whole = whole * 10 + (text[i] - '0');
    ++i;
    digits = true;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      if (frac_scale < 1'000'000'000) {
        frac = frac * 10 + (text[i] - '0');
        frac_scale *= 10;
      }
      ++i;
      digits = true;
    }
  }
  if (!digits) return Parsed::Malformed;
  const std::string_view unit = text.substr(i);
  std::int64_t unit_ns = 0;
  if (unit == "ns") unit_ns = 1;
  else if (unit == "us" || unit == "µs") unit_ns = 1'000;
  else if (unit == "ms") unit_ns = 1'000'000;
  else if (unit == "s") unit_ns = 1'000'000'000;
  else if (unit == "m" || unit == "min") unit_ns = 60'000'000'000;
  else if (unit == "h") unit_ns = 3'600'000'000'000;
  else return Parsed::Malformed;
  if (huge || whole > Duration::max().count_ns() / unit_ns) return Parsed::TooLong;
  const std::int64_t ns = whole * unit_ns + frac * unit_ns / frac_scale;
  if (ns > Duration::max().count_ns()) return Parsed::TooLong;
  out = Duration::ns(negative ? -ns : ns);
  return Parsed::Ok;
}

}  // namespace

std::optional<Duration> parse_duration(std::string_view text) {
  Duration d;
  if (parse(text, d) != Parsed::Ok) return std::nullopt;
  return d;
}

bool duration_too_long(std::string_view text) {
  Duration d;
  return parse(text, d) == Parsed::TooLong;
}

std::string longest_duration() {
  // Duration::max() is 2^61 ns: 73 years and a few weeks.
  constexpr std::int64_t year_ns = 31'557'600'000'000'000;  // 365.25 days
  return "about " + std::to_string(Duration::max().count_ns() / year_ns) + " years";
}

namespace {
std::string trim_decimal(std::int64_t value, std::int64_t scale, int digits) {
  // value/scale rendered with up to `digits` decimals, trailing zeros dropped.
  std::string out = std::to_string(value / scale);
  std::int64_t rest = value % scale;
  if (rest != 0) {
    std::string f = std::to_string(rest);
    f.insert(0, static_cast<std::size_t>(digits) - f.size(), '0');
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}
}  // namespace

std::string format_duration(Duration d) {
  std::int64_t n = d.count_ns();
  std::string sign = n < 0 ? "-" : "";
  if (n < 0) n = -n;
  if (n == 0) return "0s";
  if (n >= 1'000'000'000) return sign + trim_decimal(n, 1'000'000'000, 9) + "s";
  if (n >= 1'000'000) return sign + trim_decimal(n, 1'000'000, 6) + "ms";
  if (n >= 1'000) return sign + trim_decimal(n, 1'000, 3) + "us";
  return sign + std::to_string(n) + "ns";
}

std::string format_instant(Instant t) {
  std::int64_t n = t.ns();
  std::string sign = n < 0 ? "-" : "";
  if (n < 0) n = -n;
  std::string whole = std::to_string(n / 1'000'000'000);
  std::int64_t rest = n % 1'000'000'000;
  std::string f = std::to_string(rest);
  f.insert(0, 9 - f.size(), '0');
  // Always three decimals; more only when they carry information.
  std::size_t keep = 3;
  while (keep < 9 && f.find_first_not_of('0', keep) != std::string::npos) keep += 3;
  return sign + whole + "." + f.substr(0, keep) + "s";
}

}  // namespace locksim
