// What `locksim --version` prints. Defined in a file CMake writes at configure
// time (CMakeLists.txt): the project's VERSION, and the git commit it was
// configured from ("" when built from a tarball, with no .git).
#pragma once

#include <string_view>

namespace locksim {

extern const std::string_view kVersion;  // "0.1.0"
extern const std::string_view kCommit;   // "84eb3c1a9f0e", or ""

}  // namespace locksim
