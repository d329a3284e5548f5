// A blocking connection to one server, for control paths (the supervisor's
// PINGs and SENTINEL commands) and for tests. Not for lock clients: a client
// that blocks stops everything else on its thread while it waits.
//
// Every wait is bounded by the timeout it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "live/common.hpp"
#include "live/resp.hpp"

namespace locksim::live {

class BlockingClient {
 public:
  // Connects to 127.0.0.1:port. Throws Error when refused, Timeout when not done in time.
  BlockingClient(std::uint16_t port, Duration timeout);
  ~BlockingClient();
  BlockingClient(BlockingClient&& other) noexcept;
  BlockingClient& operator=(BlockingClient&&) = delete;
  BlockingClient(const BlockingClient&) = delete;
  BlockingClient& operator=(const BlockingClient&) = delete;

  // Writes all of `bytes`. Throws Error when the connection is gone, Timeout when it will not take them.
  void send(std::string_view bytes, Duration timeout = Duration::s(5));
  // The next value the server sends, or nullopt when none arrives within
  // `timeout`. Throws Error when the server closes the connection.
  std::optional<resp::Value> receive(Duration timeout);
  // The bytes the server sends next, as they come (at least one), whatever
  // the protocol; nullopt when none arrive within `timeout`, "" when the
  // server has closed the connection. Throws Error on a reset.
  std::optional<std::string> receive_bytes(Duration timeout);
  // send, then receive; throws Timeout when no reply comes in time.
  resp::Value command(const std::vector<std::string>& argv, Duration timeout);
  // A simulator request, its reply as the simulator would give it.
  redis::Reply request(const redis::Request& req, Duration timeout, const resp::Names& names = {});

  std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  resp::Decoder decoder_;
};

// One command on a connection of its own.
resp::Value call(std::uint16_t port, const std::vector<std::string>& argv, Duration timeout = Duration::s(5));

}  // namespace locksim::live
