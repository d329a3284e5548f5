// Why a command exits non-zero, said once, on stderr, in one line
// ("locksim explore: NOT as expected: runs showed overlap, which ... does
// not allow"): stdout may be one JSON document for a tool, and a person at a
// terminal reads it last. Exit 2 says why where the error is thrown (main's
// "locksim: FILE:LINE: ..."); these are the other statuses.
#pragma once

#include <iostream>
#include <string>
#include <string_view>

namespace locksim {

// The exit statuses (README "Exit codes"): as expected, not as expected (a
// violation the scenario did not allow, or live and simulated verdicts that
// disagree), bad input, a bug in locksim.
inline constexpr int kExitOk = 0, kExitUnexpected = 1, kExitBadInput = 2, kExitBug = 3;

inline int exit_because(int status, std::string_view command, const std::string& why) {
  std::cout << std::flush;  // the report first, where both go to one file
  std::cerr << "locksim " << command << ": " << why << "\n";
  return status;
}

}  // namespace locksim
