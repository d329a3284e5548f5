// A progress line for a long `locksim run`, on stderr when it is a terminal
// (explore's bar is the same idea for many runs): simulated time done of the
// total, events so far, and an estimate of the wall time left. It reads the
// user's real clock; the simulation never sees it.
#pragma once

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "sim/time.hpp"

namespace locksim {

class RunProgress {
 public:
  // `label` names the run when several files run (""); nothing is drawn
  // before `delay` of wall time has passed, so a short run prints nothing.
  RunProgress(std::ostream& out, Duration total, std::string label, std::chrono::milliseconds delay);
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;
  ~RunProgress() { finish(); }

  // Called with every event's true time; cheap (it reads the clock every 4096 events).
  void on_event(Instant at) {
    ++events_;
    if ((events_ & 4095) == 0) tick(at);
  }
  // Erases the line, if one was drawn, so the report starts on a clean line.
  void finish();

  // The line as drawn: "  simulated 1m30s of 1h (2.5%), 1,234,567 events, ETA 3m10s".
  static std::string line(const std::string& label, Duration done, Duration total, std::uint64_t events,
                          std::chrono::duration<double> elapsed);

 private:
  void tick(Instant at);

  std::ostream& out_;
  Duration total_;
  std::string label_;
  std::chrono::steady_clock::time_point started_, next_draw_;
  std::uint64_t events_ = 0;
  std::size_t drawn_width_ = 0;  // of the line on screen, 0: none
};

// Whether `run` draws a progress line: stderr is a terminal (piped or
// redirected, it stays quiet).
bool progress_wanted();
// How long a run goes before its line appears: 1 s, or LOCKSIM_PROGRESS_DELAY_MS
// (the tests set 0 to see the line on a short run).
std::chrono::milliseconds progress_delay();

}  // namespace locksim
