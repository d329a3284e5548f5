#include <utility>  // before Asio (Boost 1.74)

#include "live/external/adapter_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <thread>

#include "live/servers.hpp"

namespace locksim::live::external {

namespace asio = boost::asio;
using local = asio::local::stream_protocol;
using boost::system::error_code;

// Our ends of its stdin and stdout, and what is queued or half-read on them.
// Handlers in flight hold it; `closed` tells them the process object is gone.
struct AdapterProcess::Pipes : std::enable_shared_from_this<Pipes> {
  Pipes(asio::io_context& io, Handlers h) : to(io), from(io), handlers(std::move(h)) {}
  local::socket to, from;
  Handlers handlers;
  std::array<char, 8192> buffer{};
  std::string partial;               // read, not yet a whole line
  std::deque<std::string> outgoing;  // the front is being written
  bool closed = false;

  void read() {
    from.async_read_some(asio::buffer(buffer), [self = shared_from_this()](const error_code& ec, std::size_t n) {
      if (self->closed) return;
      if (ec) {
        self->closed_by_peer();
        return;
      }
      self->partial.append(self->buffer.data(), n);
      for (std::size_t nl; !self->closed && (nl = self->partial.find('\n')) != std::string::npos;) {
        std::string line = self->partial.substr(0, nl);
        self->partial.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (self->handlers.line) self->handlers.line(std::move(line));
      }
      if (!self->closed) self->read();
    });
  }

  void closed_by_peer() {
    if (closed) return;
    closed = true;
    if (handlers.ended) handlers.ended();
  }

  void write() {
    if (outgoing.empty() || closed) return;
    asio::async_write(to, asio::buffer(outgoing.front()), [self = shared_from_this()](const error_code& ec, std::size_t) {
      if (self->closed) return;
      if (ec) return;  // it is gone; its stdout's end says so
      self->outgoing.pop_front();
      self->write();
    });
  }
};

namespace {

// A socketpair as (ours, theirs); theirs without O_CLOEXEC is dup2'd by spawn_process.
std::pair<int, int> socket_pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(std::string("socketpair: ") + std::strerror(errno));
  return {fds[0], fds[1]};
}

}  // namespace

AdapterProcess::AdapterProcess(asio::io_context& io, const Command& command, const std::vector<std::string>& env,
                               std::filesystem::path stderr_file, Handlers handlers)
    : stderr_file_(std::move(stderr_file)), pipes_(std::make_shared<Pipes>(io, std::move(handlers))) {
  const auto [in_ours, in_theirs] = socket_pair();
  const auto [out_ours, out_theirs] = socket_pair();
  const int err = ::open(stderr_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  auto close_theirs = [&] {
    ::close(in_theirs);
    ::close(out_theirs);
    if (err >= 0) ::close(err);
  };
  try {
    if (err < 0) throw Error("cannot open " + stderr_file_.string() + ": " + std::strerror(errno));
    pid_ = spawn_process(command.exe, command.args, env, {in_theirs, out_theirs, err});
  } catch (...) {
    close_theirs();
    ::close(in_ours);
    ::close(out_ours);
    throw;
  }
  close_theirs();
  // Our ends: it reads its stdin, we never read from it; and the reverse.
  ::shutdown(in_ours, SHUT_RD);
  ::shutdown(out_ours, SHUT_WR);
  pipes_->to.assign(local(), in_ours);
  pipes_->from.assign(local(), out_ours);
  pipes_->read();
}

AdapterProcess::~AdapterProcess() {
  kill();
  pipes_->closed = true;
  error_code ec;
  pipes_->to.close(ec);
  pipes_->from.close(ec);
}

void AdapterProcess::send(std::string line) {
  if (pipes_->closed || pid_ <= 0) return;
  pipes_->outgoing.push_back(std::move(line));
  if (pipes_->outgoing.size() == 1) pipes_->write();
}

void AdapterProcess::stop() {
  if (pid_ > 0) ::kill(-pid_, SIGSTOP);
}

void AdapterProcess::resume() {
  if (pid_ > 0) ::kill(-pid_, SIGCONT);
}

void AdapterProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);
  ::kill(-pid_, SIGCONT);
  const Deadline deadline(Duration::s(5));
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_ || (r < 0 && errno == ECHILD)) break;
    if (deadline.passed()) break;  // the kernel finishes it; PR_SET_PDEATHSIG is still armed
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  pid_ = 0;
}

bool AdapterProcess::stopped() const { return pid_ > 0 && process_state(pid_) == 'T'; }

std::optional<int> AdapterProcess::try_reap() {
  if (pid_ <= 0) return std::nullopt;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return std::nullopt;
  pid_ = 0;
  return status;
}

std::string AdapterProcess::stderr_tail(std::size_t lines) const { return file_tail(stderr_file_, lines); }

std::string AdapterProcess::last_error_line() const {
  std::ifstream in(stderr_file_);
  std::string last;
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  const auto start = last.find_first_not_of(" \t");
  return start == std::string::npos ? std::string() : last.substr(start);
}

}  // namespace locksim::live::external
