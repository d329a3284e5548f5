// How a live client's coordination requests (coord::Request: ZooKeeper's,
// etcd's, ...) reach the real service: one transport per client, made by the
// run (LiveHub::coord_transport), speaking the service's own protocol over
// the client's proxies. The client environment (live/client_env.hpp) keeps
// the calls themselves: their timeouts, the trace, a pause that holds what
// arrives.
#pragma once

#include <functional>
#include <optional>

#include "sim/message.hpp"

namespace locksim::live {

class CoordTransport {
 public:
  using Done = std::function<void(std::optional<coord::Reply>)>;
  virtual ~CoordTransport() = default;

  // Sends `req` to `node`. `done` gets the reply, numbered in the client's
  // stream of messages from the service (Reply::seq, as the simulator's
  // servers number theirs), or nullopt as soon as none can come (its
  // connection ended). Never called from inside call().
  virtual void call(ProcId node, const coord::Request& req, Done done) = 0;
  // The client process died: its connections close as a killed process's do
  // (no goodbye to the service), and nothing more is heard of them.
  virtual void crash() = 0;

  // A watch fired: the service's push, numbered in the same stream. Set by
  // the client environment before its first call.
  std::function<void(ProcId node, coord::Notify)> on_notify;
};

}  // namespace locksim::live
