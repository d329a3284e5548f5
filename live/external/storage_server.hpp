// The storage an external client reads and writes: a TCP front end, on
// 127.0.0.1, to the run's own storage (LiveHub::call_storage: the semantics
// of sim/storage.cpp, fencing checks included, and the storage links'
// faults). Each client has a port of its own, so the storage knows who asks
// by where the request came in, never by what the client says.
//
// Requests and replies are JSON lines (live/external/protocol.hpp):
//   {"op": "read", "token": 5}                    -> {"ok": true, "value": 3}
//   {"op": "write", "value": 4, "token": 5}       -> {"ok": false, "value": 7, "reason": "..."}
//   {"op": "claim", "owner": "<lock value>"}      -> {"ok": true, "value": 3}
// "token" is optional (none: -1), "owner" too (fencing = "lock-value").
// Replies on a connection come in the order of its requests; a request the
// storage's link loses (a partition, a drop) is never answered, as in the
// simulator: the client's own timeout decides.
//
// The client's side of each exchange is in the trace too: its request Sent
// as it arrives, its reply Delivered as it is written.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "live/client_env.hpp"

namespace locksim::live::external {

class StorageServer {
 public:
  // `failed`: a client broke the protocol (the run stops: exit 2).
  StorageServer(LiveHub& hub, ProcId storage, std::function<void(ProcId client, const std::string& why)> failed);
  ~StorageServer();
  StorageServer(const StorageServer&) = delete;
  StorageServer& operator=(const StorageServer&) = delete;

  // The port `client` connects to (made on first ask).
  std::uint16_t port_for(ProcId client);
  // Closes `client`'s connections (it crashed); its port stays open.
  void drop_connections(ProcId client);

  struct Listener;

 private:
  LiveHub& hub_;
  ProcId storage_;
  std::function<void(ProcId, const std::string&)> failed_;
  std::map<ProcId, std::shared_ptr<Listener>> listeners_;
};

// The run's record of one event at process `p`, now (scenario time).
void note_now(LiveHub& hub, ProcId p, Ev kind, TraceEvent&& e);

}  // namespace locksim::live::external
