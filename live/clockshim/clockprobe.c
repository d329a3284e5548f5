/* A test helper for the clock shim: for every line it reads on stdin it
 * prints one line of clock readings, as the shimmed process sees them:
 *   <time()> <CLOCK_REALTIME ns> <CLOCK_REALTIME_COARSE ns> <gettimeofday us> <CLOCK_MONOTONIC ns>
 * and exits at end of input. Run with LD_PRELOAD=<the shim>. */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

static long long ns_of(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void) {
  char line[256];
  while (fgets(line, sizeof line, stdin) != NULL) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    printf("%lld %lld %lld %lld %lld\n", (long long)time(NULL), ns_of(CLOCK_REALTIME), ns_of(CLOCK_REALTIME_COARSE),
           (long long)tv.tv_sec * 1000000LL + tv.tv_usec, ns_of(CLOCK_MONOTONIC));
    fflush(stdout);
  }
  return 0;
}
