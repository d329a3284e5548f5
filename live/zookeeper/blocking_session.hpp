// A ZooKeeper session driven by blocking calls, for control paths (a live
// run's set-up, the differential test) and tests. Each call turns the
// io_context it was given until its answer comes or its timeout passes, so
// sessions that share a context are all served while any one of them waits:
// their notifications arrive, their closed connections are seen.
//
// Not for lock clients: those run on the run's context without blocking
// (live/zookeeper/coord_session.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "live/common.hpp"
#include "live/zookeeper/connection.hpp"
#include "live/zookeeper/jute.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live::zk {

class BlockingSession {
 public:
  // Opens a session on a connection of its own: a new one (session_id 0), or
  // `session_id` again with its password (valid() says whether the server
  // still knows it). Throws Error when the connection ends first, Timeout
  // when the server does not answer in time.
  BlockingSession(boost::asio::io_context& io, const Endpoint& at, Duration session_timeout,
                  Duration timeout = Duration::s(10), std::int64_t session_id = 0, const std::string& passwd = {},
                  std::int64_t last_zxid = 0);

  const ConnectResponse& handshake() const { return hello_; }
  bool valid() const { return hello_.timeout_ms > 0; }
  std::int64_t session_id() const { return hello_.session_id; }
  const std::string& passwd() const { return hello_.passwd; }
  std::int64_t last_zxid() const { return connection_->last_zxid(); }

  // One request and its response (any err). Throws Timeout when no answer
  // comes in time, Error when the connection ends first.
  Response request(const Request& r, Duration timeout = Duration::s(5));
  // A ping's answer: true; false when the connection ended first. Throws Timeout.
  bool ping(Duration timeout = Duration::s(5));
  // closeSession and its response; the server then closes the connection.
  Response close_session(Duration timeout = Duration::s(5));
  // The notifications that came so far, in order; taken.
  std::vector<WatcherEvent> take_events();
  // The connection ended (the server closed it: an expired or closed session, or a crash).
  bool closed() const { return connection_->closed(); }
  void close() { connection_->close(); }

  // Turns `io` until `done` holds or `within` passes; whether it held.
  static bool turn_until(boost::asio::io_context& io, const std::function<bool()>& done, Duration within);
  static void turn(boost::asio::io_context& io, Duration d) { turn_until(io, [] { return false; }, d); }

 private:
  boost::asio::io_context& io_;
  std::shared_ptr<Connection> connection_;
  ConnectResponse hello_;
  std::shared_ptr<std::vector<WatcherEvent>> events_ = std::make_shared<std::vector<WatcherEvent>>();
};

}  // namespace locksim::live::zk
