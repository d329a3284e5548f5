// One adapter's process: started as the supervisor starts its nodes (a
// process group of its own, killed by the kernel with locksim:
// live/servers.hpp spawn_process), its stdin and stdout socketpairs on the
// run's io_context (a write to an adapter that died is an error, never a
// SIGPIPE), its stderr in a file. Lines out, lines in.
//
// Signals go to its process group: stop (SIGSTOP), resume (SIGCONT), kill
// (SIGKILL). The destructor kills it, and a stopped adapter is killed
// before anything could continue it: it never runs again after the run.
#pragma once

#include <sys/types.h>

#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live/external/adapters.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live::external {

class AdapterProcess {
 public:
  struct Handlers {
    std::function<void(std::string line)> line;  // each line of its stdout, without the newline
    std::function<void()> ended;                 // its stdout closed: it exited (or closed it)
  };
  // Starts `command` with environment `env`, its stderr appended to
  // `stderr_file`. Throws Error when it cannot be started.
  AdapterProcess(boost::asio::io_context& io, const Command& command, const std::vector<std::string>& env,
                 std::filesystem::path stderr_file, Handlers handlers);
  // kill(). Never throws.
  ~AdapterProcess();
  AdapterProcess(const AdapterProcess&) = delete;
  AdapterProcess& operator=(const AdapterProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Queues `line` (with its newline) for its stdin; nothing once it is gone.
  void send(std::string line);

  void stop();    // SIGSTOP to its group
  void resume();  // SIGCONT to its group
  // SIGKILL to its group, then SIGCONT (a stopped process dies at once
  // either way; nothing of it runs between), and reaps it (bounded: 5 s).
  void kill();
  bool stopped() const;  // its state is 'T'
  bool running() const { return pid_ > 0; }
  // Reaps it if it has exited: its wait status (live/servers.hpp exit_text words it).
  std::optional<int> try_reap();
  // The last `lines` lines of its stderr, each after "\n    ".
  std::string stderr_tail(std::size_t lines = 5) const;
  // Its stderr's last non-empty line, or "".
  std::string last_error_line() const;

  struct Pipes;

 private:
  pid_t pid_ = 0;
  std::filesystem::path stderr_file_;
  std::shared_ptr<Pipes> pipes_;
};

}  // namespace locksim::live::external
