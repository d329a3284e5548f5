// An algorithm's own [lock] options: it parses them itself, into a typed
// struct (enums, not strings), from an OptionReader — which the scenario
// loader implements over the file, so every rejection stays
// "file:line: [lock] 'key': what". The reader only sees keys the algorithm
// lists in its registry entry; the loader has rejected the others.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/rng.hpp"
#include "sim/servers/kind.hpp"
#include "sim/time.hpp"

namespace locksim {

enum class Sign : std::uint8_t { Any, NonNegative, Positive, NonZero };

class OptionReader {
 public:
  virtual ~OptionReader() = default;
  // Each getter answers nullopt for a key that is absent, and rejects a key
  // whose value is not what it asks for (it throws the loader's error).
  virtual bool has(std::string_view key) const = 0;
  virtual std::optional<Duration> duration(std::string_view key, Sign sign = Sign::NonNegative) = 0;
  // A duration, or a range "a..b" drawn from.
  virtual std::optional<DurationRange> range(std::string_view key) = 0;
  // A whole number from `lo`, or "forever" (kForever).
  virtual std::optional<int> count(std::string_view key, int lo) = 0;
  virtual std::optional<double> number(std::string_view key) = 0;
  virtual std::optional<std::int64_t> integer(std::string_view key, std::int64_t lo, std::int64_t hi) = 0;
  virtual std::optional<bool> boolean(std::string_view key) = 0;
  // One of `names` (a string): its index.
  virtual std::optional<std::size_t> choice_index(std::string_view key, const std::vector<std::string_view>& names) = 0;
  // Reject a key that is given: "file:line: [lock] 'key': what".
  [[noreturn]] virtual void fail(std::string_view key, const std::string& what) = 0;

  // One of the named values: choice("release", {{"del", Release::Del}, ...}).
  template <typename E>
  std::optional<E> choice(std::string_view key, std::initializer_list<std::pair<std::string_view, E>> options) {
    std::vector<std::string_view> names;
    for (const auto& o : options) names.push_back(o.first);
    const auto i = choice_index(key, names);
    if (!i) return std::nullopt;
    return (options.begin() + *i)->second;
  }
};

// What every algorithm's options struct answers, whatever else it holds.
class AlgorithmOptions {
 public:
  virtual ~AlgorithmOptions() = default;
  // The lease the lock lives by (its ttl, a session timeout, a lease TTL, a
  // watchdog's timeout): what explore draws fault magnitudes against.
  virtual Duration lease() const = 0;
  // How long after its holder falls silent the lock may still be kept from
  // everyone else: the lease, and whatever the service adds after it (a
  // session invalidated late, a lock-delay). A fault must outlast this to
  // let a second holder in; explore draws magnitudes against it too.
  virtual Duration handover() const { return lease(); }
  virtual ServerSetup server() const { return {}; }
};

}  // namespace locksim
