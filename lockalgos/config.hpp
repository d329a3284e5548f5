// [lock]: the algorithm and its options, as the scenario file gives them. The
// loader parses the part every algorithm shares; the algorithm parses the rest
// into its own typed options (lockalgos/options.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockalgos/options.hpp"
#include "sim/fencing.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"

namespace locksim {

std::string_view fencing_name(Fencing f);

inline constexpr int kForever = -1;  // for counts: retry_count, repeat

// What a library's application asks the library before it writes: [[client]]
// check = "..." in a library scenario (lockalgos/libraries.hpp names them as
// each library does). None: it writes without asking.
enum class LibraryCheck : std::uint8_t {
  None,
  Aborted,     // node-redlock using(): the routine reads signal.aborted
  IsAcquired,  // a library's own "do I still hold it" (a flag, or a round trip: the library's)
  Owned,       // redis-py Lock.owned(): GET the key, compare with our token
  State,       // kazoo: client.state == KazooState.CONNECTED
  Exists,      // kazoo: client.exists() on the lock's node
  OnLockLost,  // redis-semaphore: an onLockLost handler that aborts the work
};

// How a client's application uses its library beyond acquire and release:
// the library's own [[client]] keys, typed. Default: acquire, work, write,
// release, and ask nothing.
struct LibraryUse {
  bool using_routine = false;  // node-redlock: the job runs inside using(): extended automatically, aborted on loss
  LibraryCheck check = LibraryCheck::None;
};

struct LockConfig {
  // The common part.
  std::string library;                     // "kazoo@2.8.0" (lockalgos/libraries.hpp); empty: none named
  std::string algorithm;                   // "redis-single", "setnx", ... (a library's, if it names one)
  std::string flavour;                     // empty: the algorithm's default
  std::optional<Duration> ttl;             // none: no expiry (setnx)
  Fencing fencing = Fencing::None;
  std::string key = "lock";
  int line = 0;                            // where [lock] is, for errors found later

  // The algorithm's own options, parsed from the same table by its registry
  // entry's parse (never null once loaded).
  std::shared_ptr<const AlgorithmOptions> options;
  template <typename T>
  const T& options_as() const {
    return static_cast<const T&>(*options);
  }

  // The table as written, in file order: what the scenario writer writes back,
  // and what set_lock_option (harness/scenario.hpp) edits and parses again.
  struct Written {
    std::string key;
    std::string text;  // the value's TOML text: "\"10s\"", "0.01", "true"
    int line = 0;      // where the file has it ([lock]'s line: set by a program)
  };
  std::vector<Written> written;
};

}  // namespace locksim
