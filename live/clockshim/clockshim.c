/* The clock shim: an LD_PRELOAD library that offsets the WALL clock of the
 * process it is loaded into, so that locksim can step and drift a real
 * redis-server's clock (Kleppmann's clock-jump faults) without touching the
 * machine's clock.
 *
 * What it replaces: clock_gettime for CLOCK_REALTIME and CLOCK_REALTIME_COARSE,
 * gettimeofday and time. Every other clock (CLOCK_MONOTONIC above all) passes
 * through unchanged, as a real NTP step or slew would leave it.
 *
 * The offset comes from a small page (clock_page.h) in the file named by
 * $LOCKSIM_CLOCK_FILE, which locksim's ClockControl writes:
 *   wall = real + offset_ns + (real - anchor_ns) * drift_ppb / 1e9
 * Without the variable, or without a readable page, the shim changes nothing.
 *
 * What it assumes, and why it is written this way: it may be called before
 * the program's own start-up is done (jemalloc's initialisation reads clocks),
 * from any thread, in forked children. So it never calls dlsym, malloc or
 * stdio: the real time comes from raw syscalls (not the vDSO: finding that
 * would need dlsym), and the page is opened and mapped lazily with raw
 * syscalls on the first call. libfaketime's dlsym-based approach cannot start
 * Debian's redis-server ("Unexpected recursive calls to clock_gettime()").
 * Linux x86-64 / aarch64 with glibc; 64-bit time_t. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "clock_page.h"

#define EXPORT __attribute__((visibility("default")))

/* The mapped page, or null when there is none; valid once `initialised`. */
static struct locksim_clock_page* page_ptr;
static int initialised;

static struct locksim_clock_page* map_page(void) {
  const char* path = getenv(LOCKSIM_CLOCK_FILE_ENV); /* reads environ; no allocation */
  if (path == NULL || path[0] == '\0') return NULL;
  const long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  /* A page shorter than the struct would SIGBUS on access. */
  const long size = syscall(SYS_lseek, fd, 0L, SEEK_END);
  void* mapped = MAP_FAILED;
  if (size >= (long)sizeof(struct locksim_clock_page))
    mapped = (void*)syscall(SYS_mmap, NULL, sizeof(struct locksim_clock_page), PROT_READ, MAP_SHARED, fd, 0L);
  syscall(SYS_close, fd);
  return mapped == MAP_FAILED ? NULL : (struct locksim_clock_page*)mapped;
}

static const struct locksim_clock_page* page(void) {
  if (__atomic_load_n(&initialised, __ATOMIC_ACQUIRE)) return __atomic_load_n(&page_ptr, __ATOMIC_ACQUIRE);
  const int saved_errno = errno; /* a failed open must not leak into the caller's errno */
  struct locksim_clock_page* mine = map_page();
  struct locksim_clock_page* none = NULL;
  /* Two threads may race here: the first mapping wins, the other is undone. */
  if (mine != NULL && !__atomic_compare_exchange_n(&page_ptr, &none, mine, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    syscall(SYS_munmap, mine, sizeof(struct locksim_clock_page));
  __atomic_store_n(&initialised, 1, __ATOMIC_RELEASE);
  errno = saved_errno;
  return __atomic_load_n(&page_ptr, __ATOMIC_ACQUIRE);
}

/* Real wall time -> the wall time this process should see. */
static void adjust(struct timespec* ts) {
  const struct locksim_clock_page* p = page();
  if (p == NULL || __atomic_load_n(&p->magic, __ATOMIC_ACQUIRE) != LOCKSIM_CLOCK_MAGIC) return;
  int64_t offset = 0, anchor = 0, ppb = 0;
  /* The seqlock read. Bounded: a writer killed mid-write leaves `seq` odd for
   * good, and a clock must never hang; after that many tries, use what was read. */
  for (int tries = 0; tries < 100000; ++tries) {
    const uint64_t before = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
    offset = __atomic_load_n(&p->offset_ns, __ATOMIC_RELAXED);
    anchor = __atomic_load_n(&p->anchor_ns, __ATOMIC_RELAXED);
    ppb = __atomic_load_n(&p->drift_ppb, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const uint64_t after = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
    if (before == after && (before & 1) == 0) break;
  }
  const __int128 real = (__int128)ts->tv_sec * 1000000000 + ts->tv_nsec;
  __int128 wall = real + offset;
  if (ppb != 0) wall += (real - anchor) * ppb / 1000000000;
  __int128 sec = wall / 1000000000, nsec = wall % 1000000000;
  if (nsec < 0) { /* floor division: tv_nsec stays in [0, 1e9) before the epoch too */
    nsec += 1000000000;
    sec -= 1;
  }
  ts->tv_sec = (time_t)sec;
  ts->tv_nsec = (long)nsec;
}

EXPORT int clock_gettime(clockid_t clock, struct timespec* ts) {
  if (syscall(SYS_clock_gettime, clock, ts) != 0) return -1; /* errno set by syscall() */
  if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) adjust(ts);
  return 0;
}

EXPORT int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  if (tz != NULL && syscall(SYS_gettimeofday, NULL, tz) != 0) return -1;
  if (tv == NULL) return 0;
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0) return -1;
  adjust(&ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

EXPORT time_t time(time_t* out) {
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  adjust(&ts);
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}
