#include "live/blocking_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace locksim::live {

namespace {

std::string port_text(std::uint16_t port) { return "127.0.0.1:" + std::to_string(port); }

// Waits for `events` on `fd` until the deadline. False: the deadline passed.
bool wait_for(int fd, short events, const Deadline& deadline) {
  for (;;) {
    const auto left_ms = (deadline.left().count_ns() + 999'999) / 1'000'000;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(left_ms));
    if (n > 0) return true;
    if (n == 0) return false;
    if (errno != EINTR) throw Error(std::string("poll: ") + std::strerror(errno));
  }
}

}  // namespace

BlockingClient::BlockingClient(std::uint16_t port, Duration timeout) : port_(port) {
  const Deadline deadline(timeout);
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) throw Error(std::string("socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) {
      const int e = errno;
      ::close(fd_);
      throw Error("connect " + port_text(port) + ": " + std::strerror(e));
    }
    if (!wait_for(fd_, POLLOUT, deadline)) {
      ::close(fd_);
      throw Timeout("connect " + port_text(port) + ": no connection in time");
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
      ::close(fd_);
      throw Error("connect " + port_text(port) + ": " + std::strerror(err));
    }
  }
}

BlockingClient::~BlockingClient() {
  if (fd_ >= 0) ::close(fd_);
}

BlockingClient::BlockingClient(BlockingClient&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_), decoder_(std::move(other.decoder_)) {}

void BlockingClient::send(std::string_view bytes, Duration timeout) {
  const Deadline deadline(timeout);
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<std::size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(fd_, POLLOUT, deadline)) throw Timeout("send to " + port_text(port_) + ": not taken in time");
    } else {
      throw Error("send to " + port_text(port_) + ": " + std::strerror(errno));
    }
  }
}

std::optional<resp::Value> BlockingClient::receive(Duration timeout) {
  const Deadline deadline(timeout);
  for (;;) {
    if (std::optional<resp::Value> v = decoder_.next()) return v;
    if (!wait_for(fd_, POLLIN, deadline)) return std::nullopt;
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n > 0) decoder_.feed(std::string_view(buf, static_cast<std::size_t>(n)));
    else if (n == 0) throw Error(port_text(port_) + " closed the connection");
    else if (errno != EAGAIN && errno != EINTR) throw Error("recv from " + port_text(port_) + ": " + std::strerror(errno));
  }
}

std::optional<std::string> BlockingClient::receive_bytes(Duration timeout) {
  const Deadline deadline(timeout);
  for (;;) {
    if (!wait_for(fd_, POLLIN, deadline)) return std::nullopt;
    char buf[16384];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n >= 0) return std::string(buf, static_cast<std::size_t>(n));
    if (errno != EAGAIN && errno != EINTR) throw Error("recv from " + port_text(port_) + ": " + std::strerror(errno));
  }
}

resp::Value BlockingClient::command(const std::vector<std::string>& argv, Duration timeout) {
  const Deadline deadline(timeout);
  send(resp::encode(argv), timeout);
  std::optional<resp::Value> v = receive(deadline.left());
  if (!v) throw Timeout(port_text(port_) + ": no reply to " + (argv.empty() ? "" : argv[0]) + " in time");
  return std::move(*v);
}

redis::Reply BlockingClient::request(const redis::Request& req, Duration timeout, const resp::Names& names) {
  const Deadline deadline(timeout);
  send(resp::encode(req, names), timeout);
  if (resp::replies_expected(req) == 0) return redis::Reply::nil();
  std::optional<resp::Value> v = receive(deadline.left());
  if (!v) throw Timeout(port_text(port_) + ": no reply to " + std::string(resp::name_of(req.op)) + " in time");
  return resp::decode(req, *v, names);
}

resp::Value call(std::uint16_t port, const std::vector<std::string>& argv, Duration timeout) {
  const Deadline deadline(timeout);
  BlockingClient c(port, timeout);
  return c.command(argv, deadline.left());
}

}  // namespace locksim::live
