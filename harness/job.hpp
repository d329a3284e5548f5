// A client's job, written against ClientEnv (so the simulator and a live run
// share it): rounds of read-modify-write of the storage's counter under the
// lock (or of just holding the lock), telling the trace each step of the
// lock's life as the client sees it.
#pragma once

#include <cstdint>
#include <optional>

#include "harness/scenario.hpp"
#include "lockalgos/client.hpp"
#include "lockalgos/lock.hpp"

namespace locksim {

// Runs `config`'s rounds, then notes JobDone. With `fenced_reads` (and token
// fencing) a read presents the grant's token too. REQUIRES: everything it
// names outlives the task.
Task<void> run_job(ClientEnv& env, Lock& lock, const ClientConfig& config, Fencing fencing, bool fenced_reads,
                   ProcId storage);

}  // namespace locksim
