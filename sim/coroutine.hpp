// The coroutine library's types, for every file that names one: this header,
// never <coroutine> itself. g++ 12's libstdc++ has <coroutine>; the libc++ of
// Debian's emscripten 3.1.6 (the playground's WebAssembly build, web/) has
// only the Coroutines TS's <experimental/coroutine>, whose types clang 14
// accepts for co_await and co_return alike. Code says coroutine_handle<>,
// noop_coroutine(), suspend_always, whichever library provides them.
#pragma once

#if __has_include(<coroutine>)
#include <coroutine>
namespace locksim {
using std::coroutine_handle;
using std::noop_coroutine;
using std::suspend_always;
using std::suspend_never;
}  // namespace locksim
#elif __has_include(<experimental/coroutine>)
#include <experimental/coroutine>
namespace locksim {
using std::experimental::coroutine_handle;
using std::experimental::noop_coroutine;
using std::experimental::suspend_always;
using std::experimental::suspend_never;
}  // namespace locksim
#else
#error "locksim needs <coroutine> (C++20) or <experimental/coroutine>"
#endif
