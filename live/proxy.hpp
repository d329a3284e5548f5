// A fault-injecting TCP proxy for one client <-> node link in LIVE mode: the
// client connects to the proxy's port on 127.0.0.1 instead of the node's, and
// the proxy forwards each RESP message, or holds, delays or drops it, by
// rules set per direction. A real network's partitions and delays, message
// by message, with nothing changed in the client or the server.
//
// Rules act on whole messages (it cuts each direction's byte stream at RESP
// message boundaries, resp::frame_length), from the next message to arrive:
//   hold   queue messages until heal: a partition, one-way if only one direction;
//          messages already queued wait too, and order is kept;
//   drop   discard messages (drop_next: only the next n);
//   delay  each message leaves `extra` after it arrived, never before the one ahead of it;
//   heal   stop holding and dropping, release what is held, in order (delay stays).
// A connection made while a direction holds is accepted, and its messages held.
//
// Runs on the io_context it is given, on that context's single thread; it
// starts no thread. Every connection the proxy accepts is forwarded to the
// same node, and the rules apply to all of them (a client that reconnects
// after a timeout is still partitioned).
#pragma once

#include <cstdint>
#include <memory>

#include "live/common.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live {

enum class Direction : std::uint8_t { ToServer, ToClient };

class Proxy {
 public:
  // Listens on 127.0.0.1 at a free port; each connection accepted is forwarded to `node`.
  Proxy(boost::asio::io_context& io, Endpoint node);
  // Closes the listener and every connection; handlers still queued on the context find nothing to do.
  ~Proxy();
  Proxy(const Proxy&) = delete;
  Proxy& operator=(const Proxy&) = delete;

  std::uint16_t port() const;
  Endpoint endpoint() const { return {"127.0.0.1", port()}; }
  const Endpoint& node() const;

  void hold(Direction d);
  void heal(Direction d);
  void heal();  // both directions
  void drop(Direction d);
  void drop_next(Direction d, int n = 1);
  void set_delay(Direction d, Duration extra);
  // Raw mode: forward bytes as they are read, without cutting them into RESP
  // messages; the rules then act on each chunk read. For a replication link,
  // whose stream (an RDB payload, newline keepalives) is not all RESP.
  void set_raw(bool raw);
  // Resets every connection now (both ends see ECONNRESET); new connections are still accepted.
  void sever();

  struct Stats {
    std::uint64_t forwarded = 0;  // messages written on
    std::uint64_t dropped = 0;
    std::uint64_t queued = 0;     // waiting now (held or delayed)
  };
  Stats stats(Direction d) const;
  std::size_t connections() const;  // open now
  std::uint64_t accepted() const;   // ever

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace locksim::live
