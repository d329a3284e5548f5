// One TCP connection to a ZooKeeper server, as ClientCnxn keeps it: the
// session handshake first (ConnectRequest -> ConnectResponse), then requests
// numbered with xids, answered in order; pings (xid -2) answered in order
// among them; watch notifications (xid -1) pushed at any time.
//
// A reply whose xid is not the oldest pending request's means replies went
// missing: the connection is dropped ("Xid out of order",
// ClientCnxn.readResponse, release-3.8.0), as is one whose bytes are not
// ZooKeeper's. When the connection ends — closed by either side, reset, or
// dropped — every pending request and ping hears nullopt, and `closed` runs
// once. A request that leaves before the handshake's answer is queued behind
// the ConnectRequest, as ClientCnxn queues its outgoing packets (the server
// reads nothing more until the session is set up).
//
// Runs on the io_context it is given, on one thread. The callbacks run on it,
// never from inside the call that registered them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "live/common.hpp"
#include "live/zookeeper/jute.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live::zk {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  struct Handlers {
    // The session's answer (nullopt: the connection ended first).
    std::function<void(std::optional<ConnectResponse>)> connected;
    std::function<void(const WatcherEvent&)> event;
    std::function<void()> closed;
  };

  // Connects to `to` and sends `hello` at once.
  static std::shared_ptr<Connection> open(boost::asio::io_context& io, const Endpoint& to, const ConnectRequest& hello,
                                          Handlers handlers);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends `r` with the next xid; `done` gets its response (any err), or
  // nullopt when the connection ends first. Returns the xid.
  std::int32_t request(const Request& r, std::function<void(std::optional<Response>)> done);
  // ClientCnxn.sendPing; `done` gets true at its answer, false when the connection ends first.
  void ping(std::function<void(bool answered)> done);
  // Closes the socket: no closeSession, the session lives on at the server
  // (a client process that dies, or a handle dropped).
  void close();

  bool closed() const;
  bool session_ready() const;  // the handshake was answered with a valid session
  // The largest zxid in a reply header so far (ClientCnxn.lastZxid): a reattach sends it.
  std::int64_t last_zxid() const;
  // Requests and pings awaiting their answer.
  std::size_t pending() const;

  struct State;

 private:
  explicit Connection(std::shared_ptr<State> s) : state_(std::move(s)) {}
  std::shared_ptr<State> state_;
};

}  // namespace locksim::live::zk
