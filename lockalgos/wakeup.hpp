// ClientWakeup, the Wakeup of sim/world.hpp over ClientEnv: one coroutine of
// a client waits; others of the same client fire it (an unlock message, a
// watch notification, a state change). A fire with nobody waiting is
// remembered until the next wait. The waiter resumes at the instant of the
// fire, after whatever is already due (ClientEnv::resume_soon).
#pragma once

#include <coroutine>
#include <utility>

#include "lockalgos/client.hpp"

namespace locksim {

class ClientWakeup {
 public:
  explicit ClientWakeup(ClientEnv& env) : env_(env) {}
  ClientWakeup(const ClientWakeup&) = delete;
  ClientWakeup& operator=(const ClientWakeup&) = delete;

  class Awaiter {
   public:
    explicit Awaiter(ClientWakeup& w) : w_(w) {}
    Awaiter(const Awaiter&) = delete;
    Awaiter& operator=(const Awaiter&) = delete;
    // Destroyed while waiting (a crash): the ClientWakeup must not name this frame.
    ~Awaiter() {
      if (h_ && w_.waiter_ == h_) w_.waiter_ = {};
    }
    bool await_ready() const noexcept { return w_.fired_; }
    void await_suspend(std::coroutine_handle<> h) noexcept { w_.waiter_ = h_ = h; }
    void await_resume() noexcept {
      w_.fired_ = false;
      h_ = {};
    }

   private:
    ClientWakeup& w_;
    std::coroutine_handle<> h_;
  };

  Awaiter wait() { return Awaiter(*this); }
  bool waiting() const { return static_cast<bool>(waiter_); }
  void fire() {
    fired_ = true;
    if (waiter_) env_.resume_soon(std::exchange(waiter_, {}));
  }

 private:
  ClientEnv& env_;
  std::coroutine_handle<> waiter_;
  bool fired_ = false;
};

}  // namespace locksim
