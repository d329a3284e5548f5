// The ZooKeeper client of one live lock client: the simulator's coord::Request
// ops (sim/message.hpp) on a real ZooKeeper session, as the recipe's library
// sends them (Curator 5.x over ZooKeeper's ClientCnxn), one TCP connection at
// a time through the client's proxy:
//
//   Connect{ttl}     a new handle: the old connection is dropped without a
//                    closeSession (Curator's closeAndReset on a CLOSED handle
//                    sends none), a new one opens and asks for a session of
//                    ttl (scaled); reply: id = the session, ttl = the
//                    negotiated timeout (scaled back)
//   Ping             ClientCnxn.sendPing (xid -2) on the session's connection
//   Create{parent, prefix}  create2 parent/prefix EPHEMERAL_SEQUENTIAL (create2
//                    rather than Curator's create: the same transaction, and
//                    its Stat gives the czxid the simulator's reply carries);
//                    reply: path, id = czxid
//   GetChildren{path, watch}  getChildren (OpCode 8, as Curator's
//                    getSortedChildren), sorted by sequence number as
//                    Curator sorts them; each child's czxid from the
//                    session's own creates, else an exists() of it
//   Exists{path, watch}  getData(path, watch) — Curator's LockInternals uses
//                    getData "instead of exists() to avoid leaving unneeded
//                    watchers": on NONODE no watch stays (an exists watch would)
//   Delete{path}     delete path, version -1
//   CloseSession     closeSession; the server then closes the connection
//
// Errors read as the simulator's: NONODE is "NO_NODE", SESSIONEXPIRED
// "SESSION_EXPIRED", NODEEXISTS "NODE_EXISTS", others by KeeperException's name.
//
// A connection the server closed (an expired or closed session, a restart, a
// sever) is replaced when the next request leaves: the client reconnects with
// its session id and password, as ClientCnxn does; a ConnectResponse with
// timeout 0 says the session is gone, and that request is answered
// SESSION_EXPIRED (the real client's Expired event). A Ping on a dropped
// connection is that reconnection. Watches are not set again on a reconnect
// (ClientCnxn's setWatches): the connection's end counts as a lost message
// instead (a gap in Reply::seq), and the recipe looks again and sets them
// itself, as on any lost message in the simulator.
//
// Watch notifications: NodeDeleted is Notify "deleted", NodeChildrenChanged
// "children-changed".
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "live/common.hpp"
#include "live/coord_transport.hpp"
#include "live/zookeeper/connection.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live::zk {

class CoordSession final : public CoordTransport {
 public:
  struct Options {
    std::function<Endpoint(ProcId node)> address;  // where the client connects for `node` (its proxy)
    std::int64_t time_scale = 1;                    // K: timeouts leave divided by K, come back times K
    // Told as each request leaves, with the session it goes on (0: none):
    // the run keeps which client made and deleted which znode.
    std::function<void(const coord::Request& req, std::int64_t session)> sending;
    // Told of each session a Connect opened, with its password (the differential test closes them after).
    std::function<void(std::int64_t session, const std::string& passwd)> opened;
  };
  CoordSession(boost::asio::io_context& io, Options options);
  ~CoordSession() override;

  void call(ProcId node, const coord::Request& req, Done done) override;
  void crash() override;

  std::int64_t session() const { return session_; }
  // The simulator's word for a KeeperException code: "NO_NODE", "SESSION_EXPIRED", ...
  static std::string error_word(std::int32_t err);

 private:
  void connect(ProcId node, const coord::Request& req, Done done);
  void reattach(ProcId node, const coord::Request& req, Done done);
  // The session's connection, reconnected if it ended; `then` runs once it
  // is usable (true), the session is known gone (false), or the connection
  // ended before the server answered (nullopt).
  void with_connection(ProcId node, std::function<void(std::optional<bool>)> then);
  void reconnected(std::optional<bool> usable);  // tells those waiting in reconnecting_
  void forward(const coord::Request& req, Done done);
  void children(const coord::Request& req, const Response& list, Done done);
  std::shared_ptr<Connection> open(ProcId node, const ConnectRequest& hello,
                                   std::function<void(std::optional<ConnectResponse>)> connected);
  coord::Reply numbered(coord::Reply r) {
    r.seq = ++seq_;
    return r;
  }
  void lost_message() { ++seq_; }

  boost::asio::io_context& io_;
  Options options_;
  std::shared_ptr<Connection> connection_;
  std::int64_t session_ = 0;
  bool gone_ = false;              // the server said the session is gone, or it was closed
  std::vector<std::function<void(std::optional<bool>)>> reconnecting_;  // waiting for a reconnection's answer
  std::string passwd_;
  std::int32_t negotiated_ms_ = 0;  // the session's timeout, as the server last answered it
  std::uint64_t attempt_ = 0;       // with_connection's connections, counted
  std::int32_t requested_ms_ = 0;  // the timeout asked for, sent again on a reconnect (ClientCnxn.sessionTimeout)
  std::int64_t last_zxid_ = 0;
  std::uint64_t seq_ = 0;
  std::uint64_t generation_ = 0;   // a Connect or a crash voids what the older connection still owes
  std::map<std::string, std::int64_t> czxid_;  // znodes whose czxid this client has seen
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace locksim::live::zk
