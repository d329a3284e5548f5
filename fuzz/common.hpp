// What the fuzz targets share: a bounded run, a failure that stops the fuzzer
// with a message (libFuzzer reports an abort as a crash and keeps the input),
// and the filters for known bugs.
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

// Known bugs, reported and not fixed yet, would stop every run within
// seconds: inputs that reach one are skipped so that a run can find new
// ones. LOCKSIM_FUZZ_KNOWN=1 lets them through (to reproduce them, or to see
// that a fix holds). Each filter names its bug; remove it with the fix.
inline bool skip_known() {
  static const bool skip = std::getenv("LOCKSIM_FUZZ_KNOWN") == nullptr;
  return skip;
}

// toml++ 3.3.0: parse_table_header() calls parse_key() on whatever follows
// "[" or "[[" and blanks, and parse_key() asserts it is a bare-key character
// or a quote (TOML_ASSERT_ASSUME: an abort here, undefined behaviour with
// NDEBUG): "[[[a]]", "[&", "[.a]", "[\n". marzer/tomlplusplus#294, fixed
// upstream by #301. The loader refuses control characters before the parser
// (the first input found); these others still reach it. Over-approximate:
// also lines inside multi-line strings and arrays.
inline bool toml_header_bug(std::string_view text) {
  auto blanks = [&](std::size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    return i;
  };
  auto key_start = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '"' || c == '\'' || c == ']';
  };
  for (std::size_t line = 0;;) {
    std::size_t i = blanks(line);
    if (i < text.size() && text[i] == '[') {
      i = blanks(i + 1);
      if (i < text.size() && text[i] == '[') i = blanks(i + 1);
      if (i < text.size() && !key_start(text[i])) return true;
    }
    line = text.find('\n', line);
    if (line == std::string_view::npos) return false;
    ++line;
  }
}

}  // namespace locksim::fuzz
