#include "lockalgos/libraries.hpp"

#include <algorithm>
#include <cstddef>

namespace locksim {

namespace {

// The job keys every library scenario's [[client]] takes (harness/scenario.cpp
// reads them; an adapter does the same job with the real library).
const LibraryOption kJob{"job", "\"read-modify-write\" (default: acquire, read the counter, work, write it + 1, release) | \"hold\""};
const LibraryOption kWork{"work", "how long the work between the read and the write takes (default 1s; a range \"a..b\" is drawn)"};
const LibraryOption kRepeat{"repeat", "how many rounds, or \"forever\" (default 1)"};
const LibraryOption kCheckBeforeWrite{
    "check_before_write", "true: before writing, compare the lock's own expiry with the local clock and give up if it passed (default false)"};
const LibraryOption kCheck{"check", "what the application asks the library before its write (one of the library's checks below; default: nothing)"};

const std::vector<LibraryInfo>& table() {
  static const std::vector<LibraryInfo> libs = {
      {.id = "node-redlock@4.2.0",
       .algorithm = "redlock",
       .flavour = "node-redlock-v4",
       .version = "4.2.0",
       .origin = "npm redlock@4.2.0, redlock.js (what `npm install redlock` gives)",
       .help = "Redlock over every client at once, every reply awaited; acquire() checks validity at each try and unlocks after a failed one",
       .options = {kJob, kWork, kRepeat, kCheckBeforeWrite}},
      {.id = "node-redlock@5.0.0-beta.2",
       .algorithm = "redlock",
       .flavour = "node-redlock-v5",
       .version = "5.0.0-beta.2",
       .origin = "npm redlock@5.0.0-beta.2, dist/cjs/index.js (the issue's; `npm install redlock` gives 4.2.0)",
       .help = "Redlock over every client at once; acquire() never checks validity; using() extends 500 ms before expiry",
       .options = {kJob, kWork, kRepeat, kCheckBeforeWrite,
                   {"using", "true: the job runs inside redlock.using(): the lock is extended automatically "
                             "automaticExtensionThreshold (500 ms) before it expires, and the routine reads "
                             "signal.aborted before its write (default false: acquire() and release())"}}},
      {.id = "redis-semaphore@5.8.0",
       .algorithm = "redis-semaphore",
       .flavour = "mutex",
       .version = "5.8.0",
       .origin = "npm redis-semaphore@5.8.0, lib/Lock.js, lib/mutex/*.js",
       .help = "its Mutex: SET NX PX every 10 ms until acquireTimeout, a refresh timer every 0.8 x lockTimeout, isAcquired a local flag",
       .options = {kJob, kWork, kRepeat, kCheck},
       .checks = {{"is-acquired", LibraryCheck::IsAcquired, "mutex.isAcquired: a flag only the refresh timer (or release) clears"},
                  {"on-lock-lost", LibraryCheck::OnLockLost, "an onLockLost handler that aborts the work (called as isAcquired turns false)"}}},
      {.id = "redis-semaphore-redlock@5.8.0",
       .algorithm = "redis-semaphore",
       .flavour = "redlock-mutex",
       .version = "5.8.0",
       .origin = "npm redis-semaphore@5.8.0, lib/Lock.js, lib/redlockMutex/*.js",
       .help = "its RedlockMutex: SET NX PX on every node, round((n+1)/2) needed, no validity counted; refreshed as the Mutex",
       .options = {kJob, kWork, kRepeat, kCheck},
       .checks = {{"is-acquired", LibraryCheck::IsAcquired, "mutex.isAcquired: a flag only the refresh timer (or release) clears"},
                  {"on-lock-lost", LibraryCheck::OnLockLost, "an onLockLost handler that aborts the work (called as isAcquired turns false)"}}},
      {.id = "redis-py@4.3.4",
       .algorithm = "redis-single",
       .flavour = "redis-py",
       .version = "4.3.4",
       .origin = "Debian python3-redis 4.3.4, /usr/lib/python3/dist-packages/redis/lock.py",
       .help = "redis.lock.Lock: SET NX PX, 0.1 s between tries for ever, release by a Lua compare-and-delete; no deadline, no renewal",
       .options = {kJob, kWork, kRepeat, kCheck},
       .checks = {{"owned", LibraryCheck::Owned, "lock.owned(): GET the key and compare with the lock's token (a round trip)"}}},
      {.id = "kazoo@2.8.0",
       .algorithm = "zookeeper",
       .flavour = "kazoo",
       .version = "2.8.0",
       .origin = "Debian python3-kazoo 2.8.0, kazoo/recipe/lock.py, kazoo/protocol/connection.py, kazoo/client.py",
       .help = "kazoo.recipe.lock.Lock: an ephemeral-sequential node, watch the predecessor; SUSPENDED and LOST reach the client, never the holder",
       .options = {kJob, kWork, kRepeat, kCheck},
       .checks = {{"state", LibraryCheck::State, "zk.state == KazooState.CONNECTED (what the connection thread last set)"},
                  {"exists", LibraryCheck::Exists, "zk.exists(lock node): a round trip, queued while SUSPENDED"}}},
      {.id = "python-etcd3@0.12.0",
       .algorithm = "etcd",
       .flavour = "python-etcd3",
       .version = "0.12.0",
       .origin = "Debian python3-etcd3 0.12.0, etcd3/locks.py",
       .help = "etcd3.Lock: a Txn on one key with a fresh lease, nothing kept alive; acquire(timeout=0) polled (Debian's tenacity 8.2 breaks its wait)",
       .options = {kJob, kWork, kRepeat, kCheck},
       .checks = {{"is-acquired", LibraryCheck::IsAcquired, "lock.is_acquired(): get(key) and compare with its uuid (a round trip)"}}},
      {.id = "etcd3-node@1.1.2",
       .algorithm = "etcd",
       .flavour = "etcd3-node",
       .version = "1.1.2",
       .origin = "npm etcd3@1.1.2, lib/lock.js, lib/lease.js",
       .help = "etcd3's Lock: a leased key kept alive every ttl/3; acquire() fails at once when held (the job tries again); no loss reaches the holder",
       .options = {kJob, kWork, kRepeat}},
  };
  return libs;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::span<const LibraryInfo> libraries() { return table(); }

const LibraryInfo* find_library(std::string_view id) {
  for (const LibraryInfo& l : table())
    if (l.id == id) return &l;
  return nullptr;
}

std::string_view nearest_library(std::string_view id) {
  // The name without a version (or with another version) means the library.
  const std::string_view name = id.substr(0, id.find('@'));
  for (const LibraryInfo& l : table())
    if (l.id.substr(0, l.id.find('@')) == name) return l.id;
  std::string_view best;
  std::size_t best_d = 4;
  for (const LibraryInfo& l : table())
    if (const std::size_t d = edit_distance(id, l.id); d < best_d) {
      best_d = d;
      best = l.id;
    }
  return best;
}

}  // namespace locksim
