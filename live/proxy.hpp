// A fault-injecting TCP proxy for one client <-> node link in LIVE mode: the
// client connects to the proxy's port on 127.0.0.1 instead of the node's, and
// the proxy forwards each message, or holds, delays or drops it, by rules set
// per direction. A real network's partitions and delays, message by message,
// with nothing changed in the client or the server.
//
// Rules act on whole messages, from the next message to arrive. What a
// message is, the framing says (set_framing, per direction): RESP messages by
// default (resp::frame_length); a 4-byte big-endian length and that many
// bytes (ZooKeeper's jute frames); each chunk as read (raw); or any cutter
// the caller writes (an HTTP/1.1 message, an HTTP/2 frame).
//   hold   queue messages until heal: a partition, one-way if only one direction;
//          messages already queued wait too, and order is kept;
//   drop   discard messages (drop_next: only the next n);
//   delay  each message leaves `extra` after it arrived, never before the one ahead of it
//          (delay_next: only the next n);
//   heal   stop holding and dropping, release what is held, in order (delay stays).
// A connection made while a direction holds is accepted, and its messages held.
// The end of a stream (the source's FIN, or a reset) crosses only when the
// direction neither holds nor drops: a partitioned path carries no FIN either
// (TCP sends it again until the path is back, so it arrives after the heal).
//
// Runs on the io_context it is given, on that context's single thread; it
// starts no thread. Every connection the proxy accepts is forwarded to the
// same node, and the rules apply to all of them (a client that reconnects
// after a timeout is still partitioned).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "live/common.hpp"

namespace boost::asio {
class io_context;
}

namespace locksim::live {

enum class Direction : std::uint8_t { ToServer, ToClient };

// Cuts a byte stream into messages: given the bytes read and not yet cut, the
// length of the first whole message (at least 1), or nullopt while it is not
// all there. Throws Error when the bytes are not of its protocol: the proxy
// then closes the link. Called on the proxy's thread, on every read.
using Framing = std::function<std::optional<std::size_t>(std::string_view pending)>;

namespace framing {
// RESP messages (resp::frame_length): the default.
Framing resp();
// Every chunk as read: for a stream that is not all messages (a Redis
// replication link's RDB payload and newline keepalives).
Framing raw();
// A 4-byte big-endian length, then that many bytes: ZooKeeper's frames
// (ClientCnxnSocketNIO, NIOServerCnxn). A length above `max` (ZooKeeper's
// jute.maxbuffer default, 0xfffff, plus room) or below zero is not of the
// protocol.
Framing length_prefixed(std::uint32_t max = 0x100000 + 1024);
}  // namespace framing

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
  // The next `n` messages (from now; 0: none) wait `extra` more than set_delay's: a
  // delay fault with a count (the reply to one request held back past a TTL).
  void delay_next(Direction d, int n, Duration extra);
  // How each direction is cut into messages (framing::resp() until set), from
  // the next bytes read; set it before the first connection.
  void set_framing(Framing f);
  void set_framing(Direction d, Framing f);
  // set_framing(raw ? framing::raw() : framing::resp()).
  void set_raw(bool raw);
  // Resets every connection now (both ends see ECONNRESET); new connections are still accepted.
  void sever();

  // What happens to each message, for a watcher of the link (an external
  // client's events: live/external/): it arrived whole from its source (before
  // the rules), was dropped by them, or was written to its sink. `connection`
  // numbers the proxy's connections from 0 in the order it accepted them.
  // Called on the proxy's thread; a message still queued when its connection
  // closes is neither dropped nor forwarded.
  enum class Seen : std::uint8_t { Arrived, Dropped, Forwarded };
  using Tap = std::function<void(std::uint64_t connection, Direction, Seen, std::string_view bytes)>;
  void set_tap(Tap tap);

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
