// Running the built locksim (or any command) as a user would, for the tests
// of the command line: its exit status and what it printed.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace locksim::testing {

struct Outcome {
  int status;          // the exit status, -1 when killed by a signal
  std::string output;  // what the command printed on the streams it was given
};

// `command` through sh; stdout is read (add 2>&1 for stderr too).
inline Outcome run_command(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

// locksim ARGS, run from the source tree (the catalogue's paths are relative to it), stderr with stdout.
inline Outcome locksim_in_source(const std::string& args) {
  return run_command("cd " + std::string(LOCKSIM_SOURCE_DIR) + " && " + LOCKSIM_BINARY + " " + args + " 2>&1");
}

// Single-quoted for sh.
inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A fresh directory of this test process's own under the temp dir: /tmp is
// shared by every build on the machine, and another checkout's tests may be
// clearing a directory of the same plain name.
// Removed again when the ScratchDir goes (a static one: when the test process ends).
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace locksim::testing
