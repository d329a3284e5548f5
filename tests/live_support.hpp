// What the LIVE-mode tests share: a temporary directory and a child process
// that clean up after themselves even when a test fails, and bounded waits.
// Real time: these tests start real processes and measure real delays, with
// generous bounds, since the machine is shared.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "live/common.hpp"

namespace locksim::live::testing {

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "locksim-live-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// Polls `done` until it holds or `within` passes; whether it held.
inline bool eventually(const std::function<bool()>& done, Duration within, Duration every = Duration::ms(10)) {
  const Deadline deadline(within);
  for (;;) {
    if (done()) return true;
    if (deadline.passed()) return false;
    std::this_thread::sleep_for(real(every));
  }
}

// A child process with a pipe to its stdin and one from its stdout; killed
// (SIGKILL) and reaped when it goes out of scope, and by the kernel if this
// test process dies first.
class Child {
 public:
  Child(const std::string& exe, const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {}) {
    int in[2], out[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    std::vector<std::string> env_strings;
    // extra_env's names replace the same names of ours.
    for (char** e = environ; *e; ++e) {
      const std::string_view var(*e);
      const bool replaced = std::any_of(extra_env.begin(), extra_env.end(), [&](const std::string& x) {
        return var.substr(0, var.find('=') + 1) == std::string_view(x).substr(0, x.find('=') + 1);
      });
      if (!replaced) env_strings.emplace_back(*e);
    }
    env_strings.insert(env_strings.end(), extra_env.begin(), extra_env.end());
    std::vector<char*> argv{const_cast<char*>(exe.c_str())}, envp;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      ::execve(exe.c_str(), argv.data(), envp.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
  }
  ~Child() {
    kill(SIGKILL);
    wait();
    if (to_ >= 0) ::close(to_);
    if (from_ >= 0) ::close(from_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  void kill(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Reaps it (bounded); its wait status, or -1 if it did not end in time.
  int wait(Duration within = Duration::s(10)) {
    if (pid_ <= 0) return status_;
    const Deadline deadline(within);
    for (;;) {
      int status = 0;
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_ || r < 0) {
        pid_ = 0;
        status_ = status;
        return status;
      }
      if (deadline.passed()) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  void write_line(const std::string& line) {
    const std::string s = line + "\n";
    REQUIRE(::write(to_, s.data(), s.size()) == static_cast<ssize_t>(s.size()));
  }
  // The next line of its stdout, without the newline; empty at EOF or when none comes in time.
  std::string read_line(Duration within = Duration::s(20)) {
    const Deadline deadline(within);
    for (;;) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      pollfd p{from_, POLLIN, 0};
      const int n = ::poll(&p, 1, static_cast<int>(deadline.left().whole_ms()) + 1);
      if (n <= 0 || deadline.passed()) return {};
      char buf[4096];
      const ssize_t got = ::read(from_, buf, sizeof buf);
      if (got <= 0) return {};
      buffer_.append(buf, static_cast<std::size_t>(got));
    }
  }

 private:
  pid_t pid_ = 0;
  int status_ = 0;
  int to_ = -1;
  int from_ = -1;
  std::string buffer_;
};

}  // namespace locksim::live::testing
