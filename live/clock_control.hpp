// The writing side of the clock shim (clockshim/clockshim.c): steps and
// drifts the wall clock of one shimmed process, and its monotonic clock, by
// rewriting its clock page.
//
// One ClockControl per shimmed process, and it is the page's only writer
// (the seqlock in clock_page.h assumes one). The process reads the page on
// every clock call, so a step takes effect at its next reading. step() and
// set_drift_ppb() move the wall clock alone, as a real NTP step does; the
// monotonic clock moves only by step_mono() and set_mono_drift_ppb() (an
// external client's oscillator drifts both clocks, as in the simulator).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "live/common.hpp"

struct locksim_clock_page;

namespace locksim::live {

class ClockControl {
 public:
  // Creates the page file at `path` (replacing any file there): no offset, no drift.
  explicit ClockControl(std::filesystem::path path);
  ~ClockControl();  // unmaps the page; the file stays, for a process that still reads it
  ClockControl(ClockControl&& other) noexcept;
  ClockControl& operator=(ClockControl&&) = delete;
  ClockControl(const ClockControl&) = delete;
  ClockControl& operator=(const ClockControl&) = delete;

  // The wall clock jumps by `by` (negative: backwards), now.
  void step(Duration by);
  // From now on the wall clock gains `ppb` nanoseconds per second of real time
  // (negative: loses them). What the previous drift gained so far is kept.
  void set_drift_ppb(std::int64_t ppb);

  // How far the process's wall clock is ahead of the real one now (steps and drift).
  Duration offset_now() const;
  std::int64_t drift_ppb() const;

  // The same for the monotonic clocks (CLOCK_MONOTONIC and the rest: clock_page.h).
  void step_mono(Duration by);
  void set_mono_drift_ppb(std::int64_t ppb);
  Duration mono_offset_now() const;
  std::int64_t mono_drift_ppb() const;
  const std::filesystem::path& path() const { return path_; }
  // The environment entry a process needs to read this page: "LOCKSIM_CLOCK_FILE=<path>".
  std::string env_entry() const;

 private:
  void write(std::int64_t offset_ns, std::int64_t anchor_ns, std::int64_t drift_ppb);
  void write_mono(std::int64_t offset_ns, std::int64_t anchor_ns, std::int64_t drift_ppb);
  std::filesystem::path path_;
  locksim_clock_page* page_ = nullptr;
};

// The shim library to LD_PRELOAD: $LOCKSIM_CLOCKSHIM if set, else the one this build made.
std::filesystem::path clockshim_path();

}  // namespace locksim::live
