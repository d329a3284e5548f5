// What the fuzz targets share: a bounded run, a failure that stops the fuzzer
// with a message (libFuzzer reports an abort as a crash and keeps the input),
// (Known bugs once had filters here; each is fixed, its reproducer kept in
// the corpus as regression-*.)
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "harness/run.hpp"

namespace locksim::fuzz {

// A run small enough for thousands of executions a second: the first events
// only, none kept (the checkers and the hash still see every one).
inline RunResult bounded_run(const Scenario& s, std::uint64_t max_events = 5'000) {
  RunOptions o;
  o.max_events = max_events;
  o.keep_events = 0;
  return run_scenario(s, o);
}

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}

}  // namespace locksim::fuzz
