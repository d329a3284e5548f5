// Fan-outs over calls (in the manner of cppcoro's when_all): one request to
// each of several nodes, all sent at the same instant, awaited as ONE
// frame-less awaiter — no coroutine frame per node.
//
//   when_all(env, calls):        every call answered, timed out or refused.
//   when_quorum(env, calls, q):  as soon as q.need replies satisfy q.accept;
//                                or when every call has ended; or once
//                                q.against_need calls
//                                ended against (node-redlock v5 rejects early:
//                                redlock@5.0.0-beta.2 dist/cjs/index.js:333-339,
//                                _attemptOperation resolves "against" once
//                                votesAgainst.size === quorumSize).
//
// A fan-out resolves inside the event of the reply that decides it, and its
// waiter resumes at that instant after whatever is already due
// (ClientEnv::resume_soon): replies that arrive in between still count. The
// calls still pending when it resumes are cancelled, so their late replies are
// discarded; destroying it while pending (a crash) cancels them all.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "lockalgos/client.hpp"
#include "sim/coroutine.hpp"

namespace locksim {

// One request of a fan-out.
struct Call {
  Call(ProcId to, Payload request, Duration timeout) : to(to), request(std::move(request)), timeout(timeout) {}
  // A Redis request, moved once, into its place (emplace_back it).
  Call(ProcId to, redis::Request&& request, Duration timeout)
      : to(to), request(std::in_place, std::in_place_type<redis::Request>, std::move(request)), timeout(timeout) {}
  // A request already written in its place (ClientEnv::stage), which leaves
  // from there without a move (Redlock's SETs, a third of the
  // benchmark's messages). The fan-out that takes the call owns the stage.
  Call(ProcId to, StageId staged, Duration timeout) : to(to), timeout(timeout), staged(staged) {}
  ProcId to;
  std::optional<Payload> request;  // none when staged (a Payload made empty costs a zero-fill)
  Duration timeout;  // zero: none
  StageId staged = 0;
};

// When a fan-out may resolve before every call has ended.
template <typename Reply>
struct Quorum {
  std::size_t need = std::numeric_limits<std::size_t>::max();  // replies that satisfy `accept`
  bool (*accept)(const Reply&) = nullptr;
  // Resolve once this many calls have ended against: not accepted and, when
  // `against` is given, satisfying it (nullopt: timed out, refused, cancelled).
  // node-redlock v5's votesAgainst (every call not accepted), redsync's
  // failFast "taken" (a reply that is neither OK nor an error).
  std::size_t against_need = std::numeric_limits<std::size_t>::max();
  bool (*against)(const std::optional<Reply>&) = nullptr;
};

// The replies of a fan-out, by the calls' order: nullopt for a call that timed
// out, was refused, answered with another type than `Reply`, or was cancelled.
template <typename Reply>
using Replies = std::vector<std::optional<Reply>>;

template <typename Reply>
class FanOut final : ReplySink {
 public:
  FanOut(ClientEnv& env, std::vector<Call>&& calls, Quorum<Reply> quorum)
      : env_(env), calls_(std::move(calls)), quorum_(quorum), ids_(calls_.size(), 0), replies_(calls_.size()) {}
  FanOut(const FanOut&) = delete;
  FanOut& operator=(const FanOut&) = delete;
  ~FanOut() {
    cancel_pending();
    for (Call& c : calls_)  // never sent (destroyed before it was awaited)
      if (c.staged != 0) env_.unstage(std::exchange(c.staged, 0));
  }

  bool await_ready() const noexcept { return decided(); }
  void await_suspend(coroutine_handle<> h) {
    waiter_ = h;
    for (std::size_t i = 0; i < calls_.size(); ++i) {
      Call& c = calls_[i];
      const auto tag = static_cast<std::uint32_t>(i);
      ids_[i] = c.staged != 0 ? env_.start_staged(c.to, std::exchange(c.staged, 0), c.timeout, *this, tag)
                              : env_.start_call(c.to, std::move(*c.request), c.timeout, *this, tag);
    }
  }
  Replies<Reply> await_resume() {
    cancel_pending();
    return std::move(replies_);
  }

 private:
  void on_reply(std::uint32_t tag, Payload* reply) override {
    ids_[tag] = 0;
    ++answered_;
    if (reply) {
      if constexpr (std::is_same_v<Reply, Payload>) {
        replies_[tag].emplace(std::move(*reply));
      } else if (Reply* r = std::get_if<Reply>(reply)) {
        replies_[tag].emplace(std::move(*r));
      }
    }
    if (replies_[tag] && quorum_.accept && quorum_.accept(*replies_[tag]))
      ++accepted_;
    else if (!quorum_.against || quorum_.against(replies_[tag]))
      ++against_;
    if (!resolved_ && decided()) {
      resolved_ = true;
      env_.resume_soon(waiter_);
    }
  }

  bool decided() const {
    const std::size_t n = calls_.size();
    return answered_ == n || accepted_ >= quorum_.need || against_ >= quorum_.against_need;
  }

  void cancel_pending() {
    for (CallId& id : ids_)
      if (id != 0) env_.cancel_call(std::exchange(id, 0));
  }

  ClientEnv& env_;
  std::vector<Call> calls_;  // their requests are moved out as they leave
  Quorum<Reply> quorum_;
  std::vector<CallId> ids_;  // 0: ended (or not started)
  Replies<Reply> replies_;
  std::size_t answered_ = 0, accepted_ = 0, against_ = 0;
  bool resolved_ = false;
  coroutine_handle<> waiter_;
};

template <typename Reply = Payload>
FanOut<Reply> when_all(ClientEnv& env, std::vector<Call> calls) {
  return FanOut<Reply>(env, std::move(calls), Quorum<Reply>{});
}

template <typename Reply = Payload>
FanOut<Reply> when_quorum(ClientEnv& env, std::vector<Call> calls, Quorum<Reply> quorum) {
  return FanOut<Reply>(env, std::move(calls), quorum);
}

}  // namespace locksim
