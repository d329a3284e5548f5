// A simulated client: a process that runs the client's job (harness/job.hpp)
// under a lock, both written against ClientEnv. SimClientEnv is the
// simulator's ClientEnv: every primitive is the process's own kernel call, so
// a client sees its own clocks and nothing of the world.
#pragma once

#include <memory>

#include "harness/job.hpp"
#include "harness/scenario.hpp"
#include "lockalgos/client.hpp"
#include "lockalgos/lock.hpp"
#include "lockalgos/registry.hpp"
#include "sim/world.hpp"

namespace locksim {

// ClientEnv over one simulated process.
class SimClientEnv final : public ClientEnv {
 public:
  explicit SimClientEnv(Process& self) : self_(self) {}

  Instant wall_now() const override { return self_.wall_now(); }
  Instant mono_now() const override { return self_.mono_now(); }
  void send(ProcId to, Payload body) override { self_.send(to, std::move(body)); }
  void spawn(Task<void> task) override { self_.spawn(std::move(task)); }
  Rng& rng() override { return self_.rng(); }
  void note(Ev kind, TraceEvent&& fields) override { self_.note(kind, std::move(fields)); }
  bool detailed() const override { return self_.detailed(); }
  const std::string& name_of(ProcId node) const override { return self_.world().trace().name(node); }
  std::optional<ProcId> find(std::string_view name) const override { return self_.world().find(name); }

  CallId start_call(ProcId to, Payload&& request, Duration timeout, ReplySink& sink, std::uint32_t tag) override {
    return self_.start_call(to, std::move(request), timeout, sink, tag);
  }
  // A staged request is its message slot (id: slot + 1): it leaves without a move.
  Payload& stage(StageId& id) override {
    const std::uint64_t slot = self_.world().new_message_slot();
    id = slot + 1;
    return self_.world().message_body(slot);
  }
  CallId start_staged(ProcId to, StageId id, Duration timeout, ReplySink& sink, std::uint32_t tag) override {
    return self_.start_call_in_slot(to, id - 1, timeout, sink, tag);
  }
  void send_staged(ProcId to, StageId id) override { self_.send_in_slot(to, id - 1); }
  void unstage(StageId id) override { self_.world().free_message_slot(id - 1); }
  void cancel_call(CallId id) override { self_.cancel_call(id); }
  WakeId wake_at(Instant mono_deadline, coroutine_handle<> h) override { return self_.wake_at(mono_deadline, h); }
  void cancel_wake(WakeId id) override { self_.cancel_wake(id); }
  void resume_soon(coroutine_handle<> h) override { self_.resume_soon(h); }

 private:
  Process& self_;
};

class Client : public Process {
 public:
  // REQUIRES: `config` and `lock_config` outlive the client.
  Client(World& world, const ClientConfig& config, const AlgorithmInfo& algorithm, const LockConfig& lock_config,
         LockTargets targets, ProcId storage, bool fenced_reads = false);
  ~Client() override;

  // Start the job at the configured time.
  void schedule_start();

 protected:
  void on_restart() override;
  void on_message(Message& m) override;

 private:
  void start_job();

  SimClientEnv env_{*this};
  const ClientConfig& config_;
  const AlgorithmInfo& algorithm_;
  const LockConfig& lock_config_;
  LockTargets targets_;
  ProcId storage_;
  bool fenced_reads_;           // [storage] fenced_reads: reads present the token
  std::unique_ptr<Lock> lock_;  // a new one for each process image
};

}  // namespace locksim
