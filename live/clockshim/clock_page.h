/* The page the clock shim reads and ClockControl writes: one small file per
 * shimmed process, mapped MAP_SHARED by both sides.
 *
 *   wall = real + offset_ns + (real - anchor_ns) * drift_ppb / 1e9
 *   mono = real + mono_offset_ns + (real - mono_anchor_ns) * mono_drift_ppb / 1e9
 *
 * where `real` is the kernel's CLOCK_REALTIME (or CLOCK_REALTIME_COARSE) for
 * the wall clock, and the kernel's CLOCK_MONOTONIC (or its _COARSE, _RAW and
 * CLOCK_BOOTTIME) for the monotonic one. All zero: the clocks pass through.
 * One writer (locksim), any number of readers: a seqlock. The writer makes
 * `seq` odd, stores the fields, makes it even again; a reader that saw an odd
 * or changed `seq` reads again. Every field is accessed with __atomic
 * builtins so that C and C++ agree on the memory model.
 *
 * Shared by C (the shim) and C++ (ClockControl): plain C, fixed-size fields. */
#ifndef LOCKSIM_LIVE_CLOCK_PAGE_H
#define LOCKSIM_LIVE_CLOCK_PAGE_H

#include <stdint.h>

#define LOCKSIM_CLOCK_MAGIC 0x314b4c434d534b4cULL /* "LKSMCLK1", little-endian */
#define LOCKSIM_CLOCK_FILE_ENV "LOCKSIM_CLOCK_FILE"

struct locksim_clock_page {
  uint64_t magic;     /* LOCKSIM_CLOCK_MAGIC once the writer has initialised the page */
  uint64_t seq;       /* even: stable; odd: a write is in progress */
  int64_t offset_ns;  /* added to the real wall clock */
  int64_t anchor_ns;  /* real wall time from which drift accumulates */
  int64_t drift_ppb;  /* extra nanoseconds per second of real time, in parts per billion */
  /* The monotonic clocks, alike (an external client's: its library times its
   * lease and its waits on them). A node's stay zero. */
  int64_t mono_offset_ns;
  int64_t mono_anchor_ns; /* real monotonic time from which mono_drift_ppb accumulates */
  int64_t mono_drift_ppb;
};

#endif
