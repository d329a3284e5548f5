// Time in locksim: integer nanoseconds, as strong types.
//
// `Duration` is a signed span; `Instant` is a point on some clock's axis. True
// time (the simulator's own) and every process's local clock readings are all
// `Instant`s, but only the kernel, the trace and the checkers ever see true time.
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace locksim {

class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration ns(std::int64_t n) { return Duration{n}; }
  static constexpr Duration us(std::int64_t n) { return Duration{n * 1'000}; }
  static constexpr Duration ms(std::int64_t n) { return Duration{n * 1'000'000}; }
  static constexpr Duration s(std::int64_t n) { return Duration{n * 1'000'000'000}; }
  static constexpr Duration zero() { return Duration{0}; }
  static constexpr Duration max() { return Duration{std::numeric_limits<std::int64_t>::max() / 4}; }

  constexpr std::int64_t count_ns() const { return ns_; }
  constexpr std::int64_t whole_ms() const { return ns_ / 1'000'000; }
  constexpr bool is_zero() const { return ns_ == 0; }

  constexpr Duration operator-() const { return Duration{-ns_}; }
  constexpr Duration operator+(Duration o) const { return Duration{ns_ + o.ns_}; }
  constexpr Duration operator-(Duration o) const { return Duration{ns_ - o.ns_}; }
  constexpr Duration operator*(std::int64_t k) const { return Duration{ns_ * k}; }
  constexpr Duration operator/(std::int64_t k) const { return Duration{ns_ / k}; }
  // How many whole `o` fit in this duration.
  constexpr std::int64_t operator/(Duration o) const { return ns_ / o.ns_; }
  constexpr Duration& operator+=(Duration o) { ns_ += o.ns_; return *this; }
  constexpr Duration& operator-=(Duration o) { ns_ -= o.ns_; return *this; }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  constexpr explicit Duration(std::int64_t n) : ns_(n) {}
  std::int64_t ns_ = 0;
};

class Instant {
 public:
  constexpr Instant() = default;
  static constexpr Instant from_ns(std::int64_t n) { return Instant{n}; }
  static constexpr Instant zero() { return Instant{0}; }
  static constexpr Instant never() { return Instant{std::numeric_limits<std::int64_t>::max() / 2}; }

  constexpr std::int64_t ns() const { return ns_; }
  constexpr Duration since_zero() const { return Duration::ns(ns_); }

  constexpr Instant operator+(Duration d) const { return Instant{ns_ + d.count_ns()}; }
  constexpr Instant operator-(Duration d) const { return Instant{ns_ - d.count_ns()}; }
  constexpr Duration operator-(Instant o) const { return Duration::ns(ns_ - o.ns_); }
  constexpr Instant& operator+=(Duration d) { ns_ += d.count_ns(); return *this; }
  constexpr auto operator<=>(const Instant&) const = default;

 private:
  constexpr explicit Instant(std::int64_t n) : ns_(n) {}
  std::int64_t ns_ = 0;
};

constexpr Instant max(Instant a, Instant b) { return a < b ? b : a; }
constexpr Instant min(Instant a, Instant b) { return a < b ? a : b; }
constexpr Duration max(Duration a, Duration b) { return a < b ? b : a; }
constexpr Duration min(Duration a, Duration b) { return a < b ? a : b; }

// Parses "250ms", "10s", "1.5s", "2m", "1h", "300us", "42ns", with an optional
// leading sign ("+20s", "-3s"). Returns nullopt on anything else; the caller
// names the file, line and key in its error.
std::optional<Duration> parse_duration(std::string_view text);
// Whether `text` is written as a duration but is longer than Duration::max(),
// and that maximum in words ("about 73 years"), for the error that says so.
bool duration_too_long(std::string_view text);
std::string longest_duration();

// "31.002s", "250ms", "1.5us": the shortest exact rendering with a unit a person reads.
std::string format_duration(Duration d);
// True-time stamps in reports: seconds with millisecond precision ("31.002s"),
// more digits only when the instant is not a whole millisecond.
std::string format_instant(Instant t);

}  // namespace locksim
