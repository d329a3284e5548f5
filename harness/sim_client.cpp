#include "harness/sim_client.hpp"

namespace locksim {

Client::Client(World& world, const ClientConfig& config, const AlgorithmInfo& algorithm,
               const LockConfig& lock_config, LockTargets targets, ProcId storage, bool fenced_reads)
    : Process(world, config.name, ProcessRole::Client, config.clock),
      config_(config),
      algorithm_(algorithm),
      lock_config_(lock_config),
      targets_(std::move(targets)),
      storage_(storage),
      fenced_reads_(fenced_reads),
      lock_(algorithm.make(env_, targets_, lock_config)) {}

// The coroutines refer to the lock: they go first.
Client::~Client() { destroy_coroutines(); }

void Client::schedule_start() {
  world().at(Instant::zero() + config_.start.draw(rng()), [this] {
    // Down, or restarted already (on_restart started the job): no second job.
    if (state() == State::Down || epoch() > 0) return;
    note(Ev::Started);
    start_job();
  });
}

void Client::start_job() { spawn(run_job(env_, *lock_, config_, lock_config_.fencing, fenced_reads_, storage_)); }

void Client::on_message(Message& m) {
  if (!lock_->on_push(m.from, m.body)) Process::on_message(m);
}

// A restarted client is a new process image: the crash destroyed its
// coroutines, and it has forgotten any lock it held. A new lock, and its job afresh.
void Client::on_restart() {
  lock_ = algorithm_.make(env_, targets_, lock_config_);
  start_job();
}

}  // namespace locksim
