// Wakeup: one coroutine waits; others of the same owner fire it (an unlock
// message, a watch notification, a state change). A fire with nobody waiting
// is remembered until the next wait. The waiter resumes at the instant of the
// fire, after whatever is already due: through its owner's resume_soon(), a
// simulated process's (sim/process.hpp) or a client's environment's
// (lockalgos/client.hpp), so a pause holds it and a crash drops it.
#pragma once

#include <coroutine>
#include <utility>

namespace locksim {

// Owner: anything with resume_soon(std::coroutine_handle<>).
template <typename Owner>
class Wakeup {
 public:
  explicit Wakeup(Owner& owner) : owner_(owner) {}
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  class Awaiter {
   public:
    explicit Awaiter(Wakeup& w) : w_(w) {}
    Awaiter(const Awaiter&) = delete;
    Awaiter& operator=(const Awaiter&) = delete;
    // Destroyed while waiting (a crash): the Wakeup must not name this frame.
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
    Wakeup& w_;
    std::coroutine_handle<> h_;
  };

  Awaiter wait() { return Awaiter(*this); }
  bool waiting() const { return static_cast<bool>(waiter_); }
  void fire() {
    fired_ = true;
    if (waiter_) owner_.resume_soon(std::exchange(waiter_, {}));
  }

 private:
  Owner& owner_;
  std::coroutine_handle<> waiter_;
  bool fired_ = false;
};

}  // namespace locksim
