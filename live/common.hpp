// What every piece of live/ shares: an address on the loopback interface, the
// error it throws, and real-time deadlines.
//
// live/ is LIVE mode's infrastructure: it runs real redis-server processes and
// talks to them over real TCP, in real time. Nothing here is deterministic,
// and nothing under sim/ or lockalgos/ may include it.
#pragma once

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/time.hpp"

namespace locksim::live {

// Everything LIVE mode starts listens on 127.0.0.1 only.
struct Endpoint {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  auto operator<=>(const Endpoint&) const = default;
  std::string text() const { return host + ":" + std::to_string(port); }
};

// Anything that went wrong with a real process or connection; the message
// says what and, where there is one, ends with the tail of the server's log.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A wait that did not end in time.
class Timeout : public Error {
 public:
  using Error::Error;
};

using RealClock = std::chrono::steady_clock;

inline RealClock::duration real(Duration d) { return std::chrono::nanoseconds(d.count_ns()); }

// A point in real (monotonic) time that every bounded wait counts down to.
class Deadline {
 public:
  explicit Deadline(Duration within) : at_(RealClock::now() + real(within)) {}
  bool passed() const { return RealClock::now() >= at_; }
  // What is left, never negative.
  Duration left() const {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(at_ - RealClock::now()).count();
    return Duration::ns(ns > 0 ? ns : 0);
  }
  RealClock::time_point at() const { return at_; }

 private:
  RealClock::time_point at_;
};

}  // namespace locksim::live
