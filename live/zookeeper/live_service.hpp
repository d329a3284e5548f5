// The ZooKeeper side of a live run (live/live_run.cpp): the scenario's
// ZooKeeper node as a real server, each client's session over its proxy
// (CoordSession), and the run's own watcher of the lock, which tells the
// trace what the server holds — what the simulator's ZooKeeperServer notes
// itself (sim/zookeeper_server.cpp): Holder when the lowest child of the lock
// changes hands, KeyDeleted when a client's delete removes a node, Expired
// when a session's end removes it.
//
// The watcher is a session of the run's own, straight to the server (no
// proxy: no fault reaches it), with a persistent recursive watch on the lock
// (addWatch, ZooKeeper 3.6+): the server tells it of every child created and
// deleted, in zxid order, never missing one between two watches. It learns
// whose a child is from the name's prefix (the recipe's "_c_<guid>-lock-",
// registered by the client that sent the create) and why it went from the
// requests the clients sent (a delete of it, a closeSession of its session;
// otherwise its session expired). It hears of a change just after the server
// made it, before the client whose watch fired could have asked again.
//
// Time: the server's tickTime is the scenario's tick divided by K, in whole
// milliseconds; ZooKeeper's tick boundaries are the multiples of tickTime on
// CLOCK_MONOTONIC (ExpiryQueue.roundToNextInterval over System.nanoTime), so
// a run that starts on such a boundary (tick_boundary_after) has the
// simulator's ticks, scaled.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "live/common.hpp"
#include "live/proxy.hpp"
#include "live/zookeeper/jute.hpp"
#include "live/coord_transport.hpp"
#include "harness/scenario.hpp"
#include "live/servers.hpp"
#include "sim/trace.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live::zk {

class BlockingSession;
class Connection;

// Why a ZooKeeper scenario cannot run live, or nullopt: more than one node
// (the model's ensemble is one service; live, one standalone server), or a
// drift of the server's clock (the model drifts its monotonic clock, by
// which ZooKeeper times sessions; the clock shim moves the wall clock only).
std::optional<std::string> live_unsupported(const Scenario& s);

// Whether the tick divided by K is a whole number of milliseconds (tickTime).
bool tick_scales(Duration tick, std::int64_t k);

// The first instant at or after `t` that is a multiple of `tick` on the
// monotonic clock (steady_clock is CLOCK_MONOTONIC, as System.nanoTime is).
RealClock::time_point tick_boundary_after(RealClock::time_point t, Duration tick);

class LiveService {
 public:
  struct Hooks {
    // Records `kind` at process `node` now (the run's clock), as its own event.
    std::function<void(ProcId node, Ev kind, TraceEvent&& e)> note;
    // The next message id of the run's (LiveHub::next_message).
    std::function<std::uint64_t()> next_message;
    // Where `client` connects for `node`: its proxy.
    std::function<Endpoint(ProcId client, ProcId node)> address;
  };
  LiveService(boost::asio::io_context& io, Supervisor& supervisor, std::int64_t time_scale, Hooks hooks);
  ~LiveService();
  LiveService(const LiveService&) = delete;
  LiveService& operator=(const LiveService&) = delete;

  // Starts the node: tickTime = tick / K (throws Error unless whole
  // milliseconds); the session timeout bounds are ZooKeeper's, 2 and 20 ticks.
  void start_node(ProcId node, const std::string& name, Duration tick, bool shim_clock);
  // Before the clients start: the lock's parent and its own parents (persistent nodes, as
  // Curator's creatingParentContainersIfNeeded makes it, but not a container,
  // which the server would remove when empty) and the watcher's session.
  // Blocks, turning the context, until both are done.
  void prepare(const std::string& parent);
  // The transport for `client`'s coordination calls.
  std::unique_ptr<CoordTransport> transport(ProcId client);
  // A packet of an external client's (a real library's bytes through its
  // proxy, whole, length prefix included), as the proxy's tap tells it on
  // the proxy's connection `connection`. Each is a message of the trace:
  // Sent as it arrives at the proxy, Delivered as the proxy writes it on
  // (Dropped when a fault drops it), as the simulator's network tells its
  // two ends. A request, as the server takes it (forwarded), tells the
  // watcher what locksim's own clients tell it from their requests (a
  // create's path, a delete, a closeSession, a new session); an answer, as
  // the server sends it, is noted as the node's Command with its request.
  // Nothing reaches the trace before begin(); the packets still count.
  void external_tap(ProcId client, std::uint64_t connection, Direction d, Proxy::Seen seen, std::string_view packet);
  // The run has begun: from now on external_tap tells the trace.
  void begin() { recording_ = true; }
  // After the node was restarted: the watcher reconnects (its session, or a
  // new one) and reads the children again.
  void restarted();

  struct Watcher;

 private:
  void sending(ProcId client, const coord::Request& req);
  void warm_up(BlockingSession& s);

  // An external client's connection, as its packets tell it.
  struct ExternalConnection {
    bool connect_arrived = false, connect_sent = false, connect_answered = false;
    std::map<std::int32_t, Request> pending;  // xid -> request, until answered
    // Per direction (Direction's order): the messages at the proxy, their
    // ids and what they say, oldest first (it forwards them in order).
    std::array<std::deque<std::pair<std::uint64_t, std::string>>, 2> at_proxy;
  };
  std::string request_arrived(ExternalConnection& c, std::string_view body);
  void request_sent(ProcId client, ExternalConnection& c, std::string_view body);
  std::string answered(ProcId client, ExternalConnection& c, std::string_view body);

  boost::asio::io_context& io_;
  Supervisor& sup_;
  std::map<std::pair<ProcId, std::uint64_t>, ExternalConnection> external_;  // (client, the proxy's connection)
  bool recording_ = false;
  std::int64_t scale_;
  Hooks hooks_;
  ProcId node_ = kNoProc;
  std::string node_name_;
  std::string parent_;
  std::shared_ptr<Watcher> watcher_;
};

}  // namespace locksim::live::zk
