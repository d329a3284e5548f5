// A client process: runs its job (read-modify-write of the protected counter)
// under a lock, and tells the trace each step of the lock's life as it sees it.
#pragma once

#include <memory>

#include "harness/scenario.hpp"
#include "lockalgos/lock.hpp"
#include "lockalgos/registry.hpp"
#include "sim/world.hpp"

namespace locksim {

class Client : public Process {
 public:
  // REQUIRES: `config` and `lock_config` outlive the client.
  Client(World& world, const ClientConfig& config, const AlgorithmInfo& algorithm,
         const LockConfig& lock_config, std::vector<ProcId> nodes, ProcId storage, ProcId sentinel);

  // Start the job at the configured time.
  void schedule_start();

 protected:
  void on_restart() override;
  void on_message(Message& m) override;

 private:
  Task<void> run_job();
  Task<void> read_modify_write();
  Task<void> hold();
  // Acquire and record it (acquiring, acquired or acquire-failed).
  Task<std::optional<Grant>> take_lock();
  // Release and record it (releasing, released or release-failed).
  Task<void> give_back(const Grant& grant);
  static Payload read_request();
  static Payload write_request(std::int64_t value, std::int64_t token, std::string owner);
  static Payload claim_request(std::string owner);

  const ClientConfig& config_;
  const LockConfig& lock_config_;
  ProcId storage_;
  std::unique_ptr<Lock> lock_;
};

}  // namespace locksim
