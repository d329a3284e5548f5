// A sleep on the process's monotonic clock that another coroutine of the same
// process can cut short (ring): the sleeper then finds the clock short of its
// deadline and decides again.
#pragma once

#include <coroutine>
#include <cstdint>
#include <utility>

#include "sim/process.hpp"
#include "sim/time.hpp"

namespace locksim {

class Alarm {
 public:
  explicit Alarm(Process& p) : p_(p) {}
  auto sleep_until(Instant mono_deadline) {
    struct Awaiter {
      Alarm& a;
      Instant deadline;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> h) {
        a.sleeper_ = h;
        a.timer_ = a.p_.start_timer(deadline, h, 0);
      }
      void await_resume() noexcept {
        a.sleeper_ = {};
        a.timer_ = 0;
      }
    };
    return Awaiter{*this, mono_deadline};
  }
  bool sleeping() const { return static_cast<bool>(sleeper_); }
  void ring() {
    if (!sleeper_) return;
    p_.cancel_timer(std::exchange(timer_, 0));
    p_.resume_soon(std::exchange(sleeper_, {}));
  }
  // The sleeper is gone (its process crashed): forget it.
  void reset() {
    sleeper_ = {};
    timer_ = 0;
  }

 private:
  Process& p_;
  std::coroutine_handle<> sleeper_;
  std::uint64_t timer_ = 0;
};

}  // namespace locksim
