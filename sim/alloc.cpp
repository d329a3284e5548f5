// The program's small-object allocator: operator new and delete replaced by
// per-thread free lists of blocks up to 4 KiB, kept for reuse instead of
// being returned to malloc.
//
// Why: a simulation allocates and frees the same few sizes all the time (a
// coroutine frame per call and per fan-out node, a message's strings, a
// timer's std::function), and `explore` does so again for every run, about
// 290 allocations per run of scenarios/kleppmann/gc-pause.toml. glibc's
// per-thread cache holds only 7 blocks per size, so most frees fell through
// to _int_free: new and delete were 15% of explore's instructions
// (bench/README.md, "explore"). Here a block freed is the next one of its
// size handed out on that thread, in a few instructions; a thread's runs
// reuse what the runs before them freed.
//
// Up to 4 KiB, not 512 bytes: explore's runs also make and free a few blocks
// of 0.5-4 KiB each (a run's vectors, the larger coroutine frames, the
// processes), which went to glibc's _int_malloc and _int_free at about 250
// instructions each: 2% of a run of gc-pause.toml (bench/README.md).
//
// Nothing the simulation computes depends on where a block lies (events are
// ordered by time and sequence, never by address), so this changes no trace.
// Each block carries a 16-byte header naming its size class (0: a large
// block straight from malloc), so a block may be freed on any thread, and
// after the thread's lists are drained at its exit. Under AddressSanitizer
// or ThreadSanitizer the default operators stay, so they see every block.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define LOCKSIM_DEFAULT_NEW 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOCKSIM_DEFAULT_NEW 1
#endif

#ifndef LOCKSIM_DEFAULT_NEW

namespace {

constexpr std::size_t kHeader = 16;   // keeps malloc's 16-byte alignment
constexpr std::size_t kGrain = 16;    // size classes 16, 32, ... 4,096 bytes
constexpr std::size_t kClasses = 256;
constexpr std::size_t kKeepBytes = 256 * 1024;  // per class and thread, at most
constexpr std::uint32_t kKeepLarge = 16;        // blocks kept per class over 512 bytes (8 MiB in all, at most)

struct FreeBlock {
  FreeBlock* next;
};

// Trivially destructible, so usable until the thread's storage goes.
struct Pool {
  FreeBlock* head[kClasses];
  std::uint32_t count[kClasses];
  bool closed;  // the thread is exiting: blocks go back to malloc
  bool armed;   // `drain` is registered
};
constinit thread_local Pool pool{};

// How many free blocks of class c (1-based) a thread keeps: a table, not a division per free.
struct KeepLimits {
  std::uint32_t of[kClasses + 1];
  constexpr KeepLimits() : of{} {
    for (std::size_t c = 1; c <= kClasses; ++c)
      of[c] = c * kGrain <= 512 ? static_cast<std::uint32_t>(kKeepBytes / (c * kGrain)) : kKeepLarge;
  }
};
constexpr KeepLimits kKeep;

// Returns a thread's kept blocks to malloc when the thread ends.
struct Drain {
  bool armed = false;
  ~Drain() {
    pool.closed = true;
    for (std::size_t c = 0; c < kClasses; ++c) {
      while (FreeBlock* b = pool.head[c]) {
        pool.head[c] = b->next;
        std::free(reinterpret_cast<char*>(b) - kHeader);
      }
      pool.count[c] = 0;
    }
  }
};
thread_local Drain drain;

void* from_malloc(std::size_t bytes, std::uint32_t size_class) {
  void* raw = std::malloc(kHeader + bytes);
  if (!raw) throw std::bad_alloc();
  *static_cast<std::uint32_t*>(raw) = size_class;
  return static_cast<char*>(raw) + kHeader;
}

void* allocate(std::size_t n) {
  const std::size_t c = n == 0 ? 1 : (n + kGrain - 1) / kGrain;
  if (c > kClasses || pool.closed) return from_malloc(n, 0);
  if (FreeBlock* b = pool.head[c - 1]) {
    pool.head[c - 1] = b->next;
    --pool.count[c - 1];
    return b;
  }
  if (!pool.armed) {
    pool.armed = true;
    drain.armed = true;  // constructs `drain`, whose destructor then runs at the thread's exit
  }
  return from_malloc(c * kGrain, static_cast<std::uint32_t>(c));
}

void release(void* p) noexcept {
  if (!p) return;
  char* raw = static_cast<char*>(p) - kHeader;
  const std::uint32_t c = *reinterpret_cast<const std::uint32_t*>(raw);
  if (c != 0 && !pool.closed && pool.count[c - 1] < kKeep.of[c]) {
    FreeBlock* b = static_cast<FreeBlock*>(p);
    b->next = pool.head[c - 1];
    pool.head[c - 1] = b;
    ++pool.count[c - 1];
    return;
  }
  std::free(raw);
}

// A block aligned to `align` (more than 16: an alignas type, such as the
// network's cache-line pairs of links), carved from a pooled block `align`
// bytes longer; the pooled block's address is kept in the word before it.
// (Left to the default, it went to glibc's memalign and free each time:
// explore makes a world's links anew in each run.)
void* allocate_aligned(std::size_t n, std::align_val_t al) {
  const auto align = static_cast<std::size_t>(al);
  char* raw = static_cast<char*>(allocate(n + align));
  const auto at = (reinterpret_cast<std::uintptr_t>(raw) + align) & ~(std::uintptr_t{align} - 1);
  char* p = raw + (at - reinterpret_cast<std::uintptr_t>(raw));  // 16 bytes past raw at least: room for the word
  reinterpret_cast<void**>(p)[-1] = raw;
  return p;
}

void release_aligned(void* p) noexcept {
  if (p) release(static_cast<void**>(p)[-1]);
}

}  // namespace

void* operator new(std::size_t n, std::align_val_t al) { return allocate_aligned(n, al); }
void* operator new[](std::size_t n, std::align_val_t al) { return allocate_aligned(n, al); }
void operator delete(void* p, std::align_val_t) noexcept { release_aligned(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release_aligned(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release_aligned(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release_aligned(p); }

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }

#endif  // LOCKSIM_DEFAULT_NEW
