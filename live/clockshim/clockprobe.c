/* A test helper for the clock shim. For each line it reads on stdin it prints
 * one line, and exits at end of input:
 *   an empty line: the clock readings, as the shimmed process sees them,
 *     <time()> <CLOCK_REALTIME ns> <CLOCK_REALTIME_COARSE ns> <gettimeofday us> <CLOCK_MONOTONIC ns>
 *     <CLOCK_MONOTONIC_COARSE ns> <CLOCK_BOOTTIME ns>
 *   "wait HOW MS": a wait of MS milliseconds until a deadline computed from a
 *     shimmed reading, then how many milliseconds of the kernel's own
 *     monotonic time it took (a raw syscall, past the shim), where HOW is
 *     sleep-mono, sleep-real (clock_nanosleep with TIMER_ABSTIME),
 *     cond-mono, cond-real (pthread_cond_timedwait on a condvar of that clock),
 *     clockwait-mono (pthread_cond_clockwait), sem-mono (sem_clockwait) or
 *     sem-real (sem_timedwait); "? HOW" for one it does not know.
 * Run with LD_PRELOAD=<the shim>. */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long ns_of(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long kernel_mono_ns(void) {
  struct timespec ts;
  syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec deadline(clockid_t clock, long ms) {
  const long long at = ns_of(clock) + (long long)ms * 1000000LL;
  struct timespec ts = {(time_t)(at / 1000000000LL), (long)(at % 1000000000LL)};
  return ts;
}

static int wait_for(const char* how, long ms) {
  const int mono = strstr(how, "-mono") != NULL;
  const clockid_t clock = mono ? CLOCK_MONOTONIC : CLOCK_REALTIME;
  const struct timespec until = deadline(clock, ms);
  if (strncmp(how, "sleep-", 6) == 0) {
    while (clock_nanosleep(clock, TIMER_ABSTIME, &until, NULL) != 0) {
    }
    return 1;
  }
  if (strncmp(how, "cond-", 5) == 0 || strcmp(how, "clockwait-mono") == 0) {
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, clock);
    pthread_cond_t cond;
    pthread_cond_init(&cond, &attr);
    pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&mutex);
    const int timedwait = strncmp(how, "cond-", 5) == 0;
    int r = 0;
    while (r == 0) /* nobody signals: until it times out */
      r = timedwait ? pthread_cond_timedwait(&cond, &mutex, &until) : pthread_cond_clockwait(&cond, &mutex, clock, &until);
    pthread_mutex_unlock(&mutex);
    return 1;
  }
  if (strncmp(how, "sem-", 4) == 0) {
    sem_t sem;
    sem_init(&sem, 0, 0);
    while ((mono ? sem_clockwait(&sem, clock, &until) : sem_timedwait(&sem, &until)) == 0) {
    }
    return 1;
  }
  return 0;
}

int main(void) {
  char line[256];
  while (fgets(line, sizeof line, stdin) != NULL) {
    char how[64];
    long ms = 0;
    if (sscanf(line, "wait %63s %ld", how, &ms) == 2) {
      const long long start = kernel_mono_ns();
      if (wait_for(how, ms))
        printf("%lld\n", (kernel_mono_ns() - start) / 1000000LL);
      else
        printf("? %s\n", how);
    } else {
      struct timeval tv;
      gettimeofday(&tv, NULL);
      printf("%lld %lld %lld %lld %lld %lld %lld\n", (long long)time(NULL), ns_of(CLOCK_REALTIME),
             ns_of(CLOCK_REALTIME_COARSE), (long long)tv.tv_sec * 1000000LL + tv.tv_usec, ns_of(CLOCK_MONOTONIC),
             ns_of(CLOCK_MONOTONIC_COARSE), ns_of(CLOCK_BOOTTIME));
    }
    fflush(stdout);
  }
  return 0;
}
