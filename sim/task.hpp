// Task<T>: a lazy coroutine with symmetric transfer (in the manner of cppcoro's
// task<T>). It does not start until awaited (or spawned on a process), and the
// Task object owns its frame: destroying the Task destroys the frame and,
// through the frame's locals, every Task it is awaiting. That is how a crash
// destroys a process's coroutines and runs their RAII clean-up.
//
// g++ 12 bug, and our rule: never write an aggregate temporary with
// non-trivial members (a braced `{.key = ...}` holding a std::string) inside a
// co_await expression. g++ 12 copies such a temporary bit by bit into the
// frame, so its strings end up pointing into the wrong storage. Build it as a
// named local first, or call a function that takes plain arguments. The tidy
// test rejects `co_await ... {.` in our sources. Likewise, no co_await inside
// `?:` (g++ 12 destroys the result of the branch not taken).
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include "sim/coroutine.hpp"

namespace locksim {

template <typename T = void>
class Task;

namespace detail {

struct FinalAwaiter {
  bool await_ready() const noexcept { return false; }
  template <typename P>
  coroutine_handle<> await_suspend(coroutine_handle<P> h) const noexcept {
    auto cont = h.promise().continuation;
    return cont ? cont : noop_coroutine();
  }
  void await_resume() const noexcept {}
};

struct PromiseBase {
  coroutine_handle<> continuation;
  std::exception_ptr error;
  suspend_always initial_suspend() const noexcept { return {}; }
  FinalAwaiter final_suspend() const noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <typename T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <typename U>
  void return_value(U&& v) { value.emplace(std::forward<U>(v)); }
  T take() {
    if (error) std::rethrow_exception(error);
    return std::move(*value);
  }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() const noexcept {}
  void take() const {
    if (error) std::rethrow_exception(error);
  }
};

}  // namespace detail

template <typename T>
class [[nodiscard]] Task {
 public:
  using promise_type = detail::Promise<T>;
  using Handle = coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle h) : h_(h) {}
  Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
  Task& operator=(Task&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { reset(); }

  bool valid() const { return static_cast<bool>(h_); }
  bool done() const { return !h_ || h_.done(); }
  Handle handle() const { return h_; }
  // The result (or the exception) of a finished task. REQUIRES: done().
  T result() { return h_.promise().take(); }

  auto operator co_await() && noexcept {
    struct Awaiter {
      Handle h;
      bool await_ready() const noexcept { return !h || h.done(); }
      coroutine_handle<> await_suspend(coroutine_handle<> awaiting) noexcept {
        h.promise().continuation = awaiting;
        return h;  // symmetric transfer: start the child on this stack frame's behalf
      }
      T await_resume() { return h.promise().take(); }
    };
    return Awaiter{h_};
  }

 private:
  void reset() {
    if (h_) h_.destroy();
    h_ = {};
  }
  Handle h_;
};

namespace detail {
template <typename T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>{coroutine_handle<Promise<T>>::from_promise(*this)};
}
inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>{coroutine_handle<Promise<void>>::from_promise(*this)};
}
}  // namespace detail

}  // namespace locksim
