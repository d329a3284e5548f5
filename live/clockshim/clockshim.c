/* The clock shim: an LD_PRELOAD library that offsets the clocks of the
 * process it is loaded into, so that locksim can step and drift a real
 * redis-server's wall clock (Kleppmann's clock-jump faults), and an external
 * client's wall and monotonic clocks (a real library's own clocks), without
 * touching the machine's clock.
 *
 * What it replaces:
 *   - readings: clock_gettime for CLOCK_REALTIME and CLOCK_REALTIME_COARSE,
 *     gettimeofday and time (the wall clock); clock_gettime for
 *     CLOCK_MONOTONIC, _COARSE, _RAW and CLOCK_BOOTTIME (the monotonic clock).
 *     Other clocks (CPU time) pass through.
 *   - waits until an absolute deadline, whose deadline the program computed
 *     from a shimmed reading: clock_nanosleep with TIMER_ABSTIME,
 *     pthread_cond_timedwait (on the clock its condattr chose),
 *     pthread_cond_clockwait, sem_timedwait and sem_clockwait. Each deadline
 *     is turned back into the kernel's time before the wait, so a wait lasts
 *     what the program asked for; without that, a monotonic clock stepped by D
 *     stretches every such wait by D (Python's time.sleep and its locks'
 *     timeouts, libuv's thread pool). A step made during a wait does not move
 *     it (a real step of CLOCK_REALTIME would). Relative waits (nanosleep,
 *     poll, epoll_wait, select) need nothing.
 * Not covered: timerfd_settime and timer_settime with an absolute time,
 * pthread_mutex_timedlock, pthread_rwlock_timed*; Go programs, which read
 * the vDSO directly.
 *
 * The offsets come from a small page (clock_page.h) in the file named by
 * $LOCKSIM_CLOCK_FILE, which locksim's ClockControl writes. Without the
 * variable, or without a readable page, the shim changes nothing.
 *
 * What it assumes, and why it is written this way: it may be called before
 * the program's own start-up is done (jemalloc's initialisation reads clocks),
 * from any thread, in forked children. So the readings never call dlsym,
 * malloc or stdio: the real time comes from raw syscalls (not the vDSO:
 * finding that would need dlsym), and the page is opened and mapped lazily
 * with raw syscalls on the first call. libfaketime's dlsym-based approach
 * cannot start Debian's redis-server ("Unexpected recursive calls to
 * clock_gettime()"). The pthread and semaphore waits find the real function
 * with dlsym(RTLD_NEXT) on their first call: no start-up path makes a timed
 * wait. Linux x86-64 / aarch64 with glibc 2.30 or later; 64-bit time_t. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
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

/* One clock's parameters, read consistently from the page. */
struct params {
  int64_t offset, anchor, ppb;
};

enum which { WALL, MONO };

/* Whether the page has this clock's parameters; fills `out`. */
static int read_params(enum which w, struct params* out) {
  const struct locksim_clock_page* p = page();
  if (p == NULL || __atomic_load_n(&p->magic, __ATOMIC_ACQUIRE) != LOCKSIM_CLOCK_MAGIC) return 0;
  const int64_t* f = w == WALL ? &p->offset_ns : &p->mono_offset_ns; /* offset, anchor, ppb in a row */
  /* The seqlock read. Bounded: a writer killed mid-write leaves `seq` odd for
   * good, and a clock must never hang; after that many tries, use what was read. */
  for (int tries = 0; tries < 100000; ++tries) {
    const uint64_t before = __atomic_load_n(&p->seq, __ATOMIC_ACQUIRE);
    out->offset = __atomic_load_n(&f[0], __ATOMIC_RELAXED);
    out->anchor = __atomic_load_n(&f[1], __ATOMIC_RELAXED);
    out->ppb = __atomic_load_n(&f[2], __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    const uint64_t after = __atomic_load_n(&p->seq, __ATOMIC_RELAXED);
    if (before == after && (before & 1) == 0) break;
  }
  return out->offset != 0 || out->ppb != 0;
}

static __int128 ns_of(const struct timespec* ts) { return (__int128)ts->tv_sec * 1000000000 + ts->tv_nsec; }

static void set_ns(struct timespec* ts, __int128 ns) {
  __int128 sec = ns / 1000000000, nsec = ns % 1000000000;
  if (nsec < 0) { /* floor division: tv_nsec stays in [0, 1e9) before the epoch too */
    nsec += 1000000000;
    sec -= 1;
  }
  ts->tv_sec = (time_t)sec;
  ts->tv_nsec = (long)nsec;
}

/* Real time -> the time this process should see. */
static void adjust(enum which w, struct timespec* ts) {
  struct params c;
  if (!read_params(w, &c)) return;
  const __int128 real = ns_of(ts);
  __int128 shown = real + c.offset;
  if (c.ppb != 0) shown += (real - c.anchor) * c.ppb / 1000000000;
  set_ns(ts, shown);
}

/* The inverse: the real instant at which this process's clock will read `ts`
 * (a deadline it computed from its readings). */
static void unadjust(enum which w, struct timespec* ts) {
  struct params c;
  if (!read_params(w, &c)) return;
  const __int128 rate = (__int128)1000000000 + c.ppb;
  if (rate <= 0) return; /* a clock that stands still never reads a later deadline: leave it */
  set_ns(ts, c.anchor + (ns_of(ts) - c.offset - c.anchor) * 1000000000 / rate);
}

/* Which shimmed clock `clock` is, or -1 for one the shim leaves alone. */
static int shimmed(clockid_t clock) {
  switch (clock) {
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE: return WALL;
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_BOOTTIME: return MONO;
    default: return -1;
  }
}

/* `abstime` turned back into the kernel's time, for a wait on `clock`. */
static const struct timespec* real_deadline(clockid_t clock, const struct timespec* abstime, struct timespec* buf) {
  const int w = shimmed(clock);
  if (abstime == NULL || w < 0) return abstime;
  *buf = *abstime;
  unadjust((enum which)w, buf);
  return buf;
}

EXPORT int clock_gettime(clockid_t clock, struct timespec* ts) {
  if (syscall(SYS_clock_gettime, clock, ts) != 0) return -1; /* errno set by syscall() */
  const int w = shimmed(clock);
  if (w >= 0) adjust((enum which)w, ts);
  return 0;
}

EXPORT int gettimeofday(struct timeval* restrict tv, void* restrict tz) {
  if (tz != NULL && syscall(SYS_gettimeofday, NULL, tz) != 0) return -1;
  if (tv == NULL) return 0;
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0) return -1;
  adjust(WALL, &ts);
  tv->tv_sec = ts.tv_sec;
  tv->tv_usec = ts.tv_nsec / 1000;
  return 0;
}

EXPORT time_t time(time_t* out) {
  struct timespec ts;
  if (syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts) != 0) return (time_t)-1;
  adjust(WALL, &ts);
  if (out != NULL) *out = ts.tv_sec;
  return ts.tv_sec;
}

/* Returns an error number, as clock_nanosleep does, not -1. */
EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec* request, struct timespec* remain) {
  struct timespec buf;
  const struct timespec* when = (flags & TIMER_ABSTIME) ? real_deadline(clock, request, &buf) : request;
  const int saved_errno = errno;
  const long r = syscall(SYS_clock_nanosleep, clock, flags, when, remain);
  const int error = r == 0 ? 0 : errno;
  errno = saved_errno;
  return error;
}

/* The next definition of `name` after this library's, found once (kept in `*slot`). */
static void* next_definition(void** slot, const char* name) {
  void* f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (f == NULL) {
    f = dlsym(RTLD_NEXT, name);
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
  }
  return f;
}

typedef int (*cond_timedwait_fn)(pthread_cond_t*, pthread_mutex_t*, const struct timespec*);
typedef int (*cond_clockwait_fn)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const struct timespec*);
typedef int (*sem_timedwait_fn)(sem_t*, const struct timespec*);
typedef int (*sem_clockwait_fn)(sem_t*, clockid_t, const struct timespec*);

/* The clock a condition variable's attributes chose: glibc keeps it in bit 1
 * of __wrefs (nptl's __PTHREAD_COND_CLOCK_MONOTONIC_MASK, glibc 2.25 and
 * later); tests/live_clockshim_test.cpp checks it on this machine's glibc. */
static clockid_t cond_clock(const pthread_cond_t* cond) {
  return (__atomic_load_n(&cond->__data.__wrefs, __ATOMIC_RELAXED) & 2) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
}

/* These two return an error number. */
EXPORT int pthread_cond_timedwait(pthread_cond_t* restrict cond, pthread_mutex_t* restrict mutex,
                                  const struct timespec* restrict abstime) {
  static void* slot;
  const cond_timedwait_fn real = (cond_timedwait_fn)next_definition(&slot, "pthread_cond_timedwait");
  if (real == NULL) return ENOSYS;
  struct timespec buf;
  return real(cond, mutex, real_deadline(cond_clock(cond), abstime, &buf));
}

EXPORT int pthread_cond_clockwait(pthread_cond_t* restrict cond, pthread_mutex_t* restrict mutex, clockid_t clock,
                                  const struct timespec* restrict abstime) {
  static void* slot;
  const cond_clockwait_fn real = (cond_clockwait_fn)next_definition(&slot, "pthread_cond_clockwait");
  if (real == NULL) return ENOSYS;
  struct timespec buf;
  return real(cond, mutex, clock, real_deadline(clock, abstime, &buf));
}

/* These two return -1 and set errno. */
EXPORT int sem_timedwait(sem_t* restrict sem, const struct timespec* restrict abstime) {
  static void* slot;
  const sem_timedwait_fn real = (sem_timedwait_fn)next_definition(&slot, "sem_timedwait");
  if (real == NULL) return errno = ENOSYS, -1;
  struct timespec buf;
  return real(sem, real_deadline(CLOCK_REALTIME, abstime, &buf));
}

EXPORT int sem_clockwait(sem_t* restrict sem, clockid_t clock, const struct timespec* restrict abstime) {
  static void* slot;
  const sem_clockwait_fn real = (sem_clockwait_fn)next_definition(&slot, "sem_clockwait");
  if (real == NULL) return errno = ENOSYS, -1;
  struct timespec buf;
  return real(sem, clock, real_deadline(clock, abstime, &buf));
}
