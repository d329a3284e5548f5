#include "harness/job.hpp"

namespace locksim {

namespace {

class Job {
 public:
  Job(ClientEnv& env, Lock& lock, const ClientConfig& config, Fencing fencing, bool fenced_reads, ProcId storage)
      : env_(env), lock_(lock), config_(config), fencing_(fencing),
        fenced_reads_(fenced_reads && fencing == Fencing::Token), storage_(storage) {}

  Task<void> run();

 private:
  Task<void> read_modify_write();
  Task<void> hold();
  // Acquire and record it (acquiring, acquired or acquire-failed).
  Task<std::optional<Grant>> take_lock();
  // Release and record it (releasing, released or release-failed).
  Task<void> give_back(const Grant& grant);
  static storage::Request read_request(std::int64_t token);
  static storage::Request write_request(std::int64_t value, std::int64_t token, std::string owner);
  static storage::Request claim_request(std::string owner);

  ClientEnv& env_;
  Lock& lock_;
  const ClientConfig& config_;
  Fencing fencing_;
  bool fenced_reads_;  // the read presents the token too ([storage] fenced_reads)
  ProcId storage_;
};

Task<void> Job::run() {
  lock_.use(config_.library);
  for (int round = 0; config_.repeat == kForever || round < config_.repeat; ++round) {
    if (round > 0) co_await env_.sleep(config_.think.draw(env_.rng()));
    if (config_.job == JobKind::Hold) co_await hold();
    else co_await read_modify_write();
  }
  env_.note(Ev::JobDone);
}

// Take the lock, keep it a while, give it back: the benchmark's workload, and
// scenarios where only mutual exclusion is judged.
Task<void> Job::hold() {
  const std::optional<Grant> grant = co_await take_lock();
  if (!grant) co_return;
  co_await env_.sleep(config_.hold.draw(env_.rng()));
  co_await give_back(*grant);
}

Task<void> Job::read_modify_write() {
  const std::optional<Grant> grant = co_await take_lock();
  if (!grant) co_return;

  const bool fenced = fencing_ == Fencing::Token;
  bool write = true;
  std::int64_t counter = 0;
  if (fencing_ == Fencing::LockValue) {
    // antirez's proposal: mark the resource as ours before touching it.
    env_.note(Ev::Claiming, {.key = grant->value});
    co_await env_.yield();
    const auto claimed = co_await env_.call_storage(storage_, claim_request(grant->value), config_.storage_timeout);
    if (!claimed || !claimed->accepted) {
      env_.note(Ev::WriteRejected, {.detail = "the claim was refused"});
      co_await env_.yield();
      co_await give_back(*grant);
      co_return;
    }
  }
  const auto read =
      co_await env_.call_storage(storage_, read_request(fenced_reads_ ? grant->token : -1), config_.storage_timeout);
  if (read && !read->accepted) {
    write = false;  // a fenced read with a superseded token: nothing was read, nothing will be written
    env_.note(Ev::WriteRejected, {.token = grant->token, .detail = "its read was refused: " + read->reason});
    co_await env_.yield();
  } else if (read) {
    counter = read->value;
    env_.note(Ev::Read, {.value = counter});
    co_await env_.yield();
    co_await env_.sleep(config_.work.draw(env_.rng()));
  } else {
    write = false;
    env_.note(Ev::WriteRejected, {.detail = "storage did not answer the read"});
  }

  // A check the library asks of the lock service, where the scenario uses
  // one (redsync's Valid()): the algorithm records Checked or Lost itself.
  std::optional<bool> confirmed;
  if (write && config_.check_before_write) confirmed = co_await lock_.confirm(*grant);
  if (confirmed && !*confirmed) write = false;
  const std::optional<Instant> believed = lock_.believed_until(*grant);
  if (write && config_.check_before_write && !confirmed && believed) {
    // The seed's `if lock.notExpired: commit`, on this client's own clock.
    const Duration left = *believed - env_.mono_now();
    if (left <= Duration::zero()) {
      env_.note(Ev::Lost, {.value = left.count_ns(),
                           .detail = "checked on its own clock, its lease ended " + format_duration(-left) +
                                     " ago; it abandons the write"});
      co_await env_.yield();
      write = false;
    } else {
      env_.note(Ev::Checked, {.value = left.count_ns(), .detail = format_duration(left) + " left"});
      co_await env_.yield();
    }
  }

  if (write && !lock_.still_held()) write = false;  // the lock already said so (Ev::Lost)

  // A library scenario's application asks its library (the library notes the answer).
  if (write && config_.library.check != LibraryCheck::None) {
    const bool still = co_await lock_.check(config_.library.check, *grant);
    write = still;
  }

  if (write) {
    const std::int64_t token = fenced ? grant->token : -1;
    env_.note(Ev::Writing, {.value = counter + 1, .token = token});
    co_await env_.yield();
    const std::string owner = fencing_ == Fencing::LockValue ? grant->value : "";
    const auto reply =
        co_await env_.call_storage(storage_, write_request(counter + 1, token, owner), config_.storage_timeout);
    if (reply && reply->accepted)
      env_.note(Ev::Wrote, {.value = counter + 1, .token = token});
    else
      env_.note(Ev::WriteRejected, {.value = counter + 1, .token = token,
                                    .detail = reply ? reply->reason : "storage did not answer"});
    co_await env_.yield();
  }

  co_await give_back(*grant);
}

// Requests are built here, outside the coroutines (task.hpp: aggregates in co_await).
storage::Request Job::read_request(std::int64_t token) {
  storage::Request r;
  r.op = storage::Request::Op::Read;
  r.token = token;
  return r;
}
storage::Request Job::write_request(std::int64_t value, std::int64_t token, std::string owner) {
  storage::Request r;
  r.op = storage::Request::Op::Write;
  r.value = value;
  r.token = token;
  r.owner = std::move(owner);
  return r;
}
storage::Request Job::claim_request(std::string owner) {
  storage::Request r;
  r.op = storage::Request::Op::Claim;
  r.owner = std::move(owner);
  return r;
}

Task<std::optional<Grant>> Job::take_lock() {
  co_await env_.mark(Ev::Acquiring);
  std::optional<Grant> grant = co_await lock_.acquire();
  if (!grant) {
    co_await env_.mark(Ev::AcquireFailed);
    co_return std::nullopt;
  }
  env_.note(Ev::Acquired, {.value = grant->valid_until ? grant->valid_until->ns() : -1,
                           .token = grant->token,
                           .key = grant->value,
                           .detail = grant->where});
  co_await env_.yield();
  co_return grant;
}

Task<void> Job::give_back(const Grant& grant) {
  env_.note(Ev::Releasing, {.key = grant.value});
  co_await env_.yield();
  const bool released = co_await lock_.release(grant);
  env_.note(released ? Ev::Released : Ev::ReleaseFailed, {.key = grant.value});
}

}  // namespace

Task<void> run_job(ClientEnv& env, Lock& lock, const ClientConfig& config, Fencing fencing, bool fenced_reads,
                   ProcId storage) {
  Job job(env, lock, config, fencing, fenced_reads, storage);
  co_await job.run();
}

}  // namespace locksim
