#include "harness/client.hpp"

namespace locksim {

Client::Client(World& world, const ClientConfig& config, const AlgorithmInfo& algorithm,
               const LockConfig& lock_config, std::vector<ProcId> nodes, ProcId storage, ProcId sentinel)
    : Process(world, config.name, ProcessRole::Client, config.clock),
      config_(config),
      lock_config_(lock_config),
      storage_(storage),
      lock_(algorithm.make(LockEnv{*this, std::move(nodes), lock_config, sentinel})) {}

void Client::schedule_start() {
  world().at(Instant::zero() + config_.start.draw(rng()), [this] {
    // Down, or restarted already (on_restart started the job): no second job.
    if (state() == State::Down || epoch() > 0) return;
    note(Ev::Started);
    spawn(run_job());
  });
}

void Client::on_message(Message& m) {
  if (!lock_->on_push(m)) Process::on_message(m);
}

// A restarted client has forgotten any lock it held, and starts its job afresh.
void Client::on_restart() { spawn(run_job()); }

Task<void> Client::run_job() {
  for (int round = 0; config_.repeat == kForever || round < config_.repeat; ++round) {
    if (round > 0) co_await sleep(config_.think.draw(rng()));
    if (config_.job == "hold") co_await hold();
    else co_await read_modify_write();
  }
  note(Ev::JobDone);
}

// Take the lock, keep it a while, give it back: the benchmark's workload, and
// scenarios where only mutual exclusion is judged.
Task<void> Client::hold() {
  const std::optional<Grant> grant = co_await take_lock();
  if (!grant) co_return;
  co_await sleep(config_.hold.draw(rng()));
  co_await give_back(*grant);
}

Task<void> Client::read_modify_write() {
  const std::optional<Grant> grant = co_await take_lock();
  if (!grant) co_return;

  const bool fenced = lock_config_.fencing == Fencing::Token;
  bool write = true;
  std::int64_t counter = 0;
  if (lock_config_.fencing == Fencing::LockValue) {
    // antirez's proposal: mark the resource as ours before touching it.
    note(Ev::Claiming, {.key = grant->value});
    co_await yield();
    const auto claimed = co_await call(storage_, claim_request(grant->value), config_.storage_timeout);
    if (!claimed || !std::get<storage::Reply>(*claimed).accepted) {
      note(Ev::WriteRejected, {.detail = "the claim was refused"});
      co_await yield();
      co_await give_back(*grant);
      co_return;
    }
  }
  const auto read = co_await call(storage_, read_request(), config_.storage_timeout);
  if (read) {
    counter = std::get<storage::Reply>(*read).value;
    note(Ev::Read, {.value = counter});
    co_await yield();
    co_await sleep(config_.work.draw(rng()));
  } else {
    write = false;
    note(Ev::WriteRejected, {.detail = "storage did not answer the read"});
  }

  if (write && config_.check_before_write && grant->valid_until) {
    // The seed's `if lock.notExpired: commit`, on this client's own clock.
    const Duration left = *grant->valid_until - mono_now();
    if (left <= Duration::zero()) {
      note(Ev::Lost, {.value = left.count_ns(),
                      .detail = "checked on its own clock, its lease ended " + format_duration(-left) +
                                " ago; it abandons the write"});
      co_await yield();
      write = false;
    } else {
      note(Ev::Checked, {.value = left.count_ns(), .detail = format_duration(left) + " left"});
      co_await yield();
    }
  }

  if (write && !lock_->still_held()) write = false;  // the lock already said so (Ev::Lost)

  if (write) {
    const std::int64_t token = fenced ? grant->token : -1;
    note(Ev::Writing, {.value = counter + 1, .token = token});
    co_await yield();
    const std::string owner = lock_config_.fencing == Fencing::LockValue ? grant->value : "";
    const auto reply = co_await call(storage_, write_request(counter + 1, token, owner), config_.storage_timeout);
    if (reply && std::get<storage::Reply>(*reply).accepted)
      note(Ev::Wrote, {.value = counter + 1, .token = token});
    else
      note(Ev::WriteRejected, {.value = counter + 1, .token = token,
                               .detail = reply ? std::get<storage::Reply>(*reply).reason : "storage did not answer"});
    co_await yield();
  }

  co_await give_back(*grant);
}

// Requests are built here, outside the coroutines (task.hpp: aggregates in co_await).
Payload Client::read_request() {
  storage::Request r;
  r.op = storage::Request::Op::Read;
  return r;
}
Payload Client::write_request(std::int64_t value, std::int64_t token, std::string owner) {
  storage::Request r;
  r.op = storage::Request::Op::Write;
  r.value = value;
  r.token = token;
  r.owner = std::move(owner);
  return r;
}
Payload Client::claim_request(std::string owner) {
  storage::Request r;
  r.op = storage::Request::Op::Claim;
  r.owner = std::move(owner);
  return r;
}

Task<std::optional<Grant>> Client::take_lock() {
  co_await mark(Ev::Acquiring);
  std::optional<Grant> grant = co_await lock_->acquire();
  if (!grant) {
    co_await mark(Ev::AcquireFailed);
    co_return std::nullopt;
  }
  note(Ev::Acquired, {.value = grant->valid_until ? grant->valid_until->ns() : -1,
                      .token = grant->token,
                      .key = grant->value,
                      .detail = grant->where});
  co_await yield();
  co_return grant;
}

Task<void> Client::give_back(const Grant& grant) {
  note(Ev::Releasing, {.key = grant.value});
  co_await yield();
  const bool released = co_await lock_->release(grant);
  note(released ? Ev::Released : Ev::ReleaseFailed, {.key = grant.value});
}

}  // namespace locksim
