// What the coordination-service recipes share: requests, and the order of
// the messages a server sends (ServerStream).
#pragma once

#include "lockalgos/lock.hpp"

namespace locksim {

// The messages a coordination server sends a client are numbered (Notify::seq).
// A gap means one was lost, which over TCP would have broken the connection:
// the client then re-reads what it waits on and sets its watch again, as a
// ZooKeeper client does on reconnecting (setWatches) and an etcd watch does
// resuming from its revision. A reply that came after its call timed out is
// discarded unseen and looks like a gap too: the re-read is harmless.
class ServerStream {
 public:
  // True if messages before `seq` went missing.
  bool gap(std::uint64_t seq) {
    const bool missing = last_ != 0 && seq > last_ + 1;
    if (seq > last_) last_ = seq;
    return missing;
  }

 private:
  std::uint64_t last_ = 0;
};

inline coord::Request coord_request(coord::Op op, std::string path = {}, std::int64_t id = 0) {
  coord::Request r;
  r.op = op;
  r.path = std::move(path);
  r.id = id;
  return r;
}

}  // namespace locksim
