// What an etcd library's own bytes say, as its proxy passes them (raw
// chunks: a real library speaks gRPC, HTTP/2, to etcd's client port).
//
// The run needs from them only what locksim's own clients tell the observer
// from their requests (live/etcd/observer.hpp): which lease a client attaches
// to the lock's key, and which key it is deleting. Both travel in a Txn, as
// every etcd lock library writes its key (python-etcd3 0.12.0 locks.py
// acquire/release; etcd3 for Node 1.1.2 lock.js). So the tap reads HTTP/2
// DATA frames only (no HPACK: a method's name is not needed), splits each
// stream's DATA into gRPC messages, and reads a message toward the server as
// a TxnRequest when it parses as one (fields 1-3 of RequestOps) and names a
// key the caller asks about; the answer on the same stream as a TxnResponse
// (succeeded, field 2). etcd3 for Node releases by revoking its lease: a
// stream the client closes after one message that is a lease's ID alone
// (live/etcd/etcd_run.cpp says when that is a revoke). A message that does
// not parse is the server's business: it is skipped, never guessed at.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace locksim::live::etcd {

// A Txn's success branch, as far as a lock reads it.
struct TxnOps {
  struct Put {
    std::string key, value;
    std::int64_t lease = 0;
  };
  std::vector<Put> puts;
  std::vector<std::string> deletes;  // DeleteRange keys (a single key each: no range_end)
};

// A protobuf message read as a TxnRequest; nullopt if it is not one.
std::optional<TxnOps> decode_txn_request(std::string_view message);
// A message that is a lease's ID alone (LeaseRevokeRequest { int64 ID = 1 },
// and as well a LeaseKeepAliveRequest, or a LeaseGrantRequest of a TTL and
// no ID): the ID, or nullopt.
std::optional<std::int64_t> decode_lease_id(std::string_view message);
// A message read as a TxnResponse's `succeeded`; nullopt if it is not one.
std::optional<bool> decode_txn_succeeded(std::string_view message);

// One direction of one HTTP/2 connection, cut into gRPC messages per stream.
class GrpcReader {
 public:
  using OnMessage = std::function<void(std::uint32_t stream, std::string_view message)>;
  // `client_side`: bytes from the client, which begin with HTTP/2's preface.
  explicit GrpcReader(bool client_side) : preface_left_(client_side ? 24 : 0) {}
  using OnEnd = std::function<void(std::uint32_t stream)>;
  // The next bytes, as they came; `on` is called for each whole message,
  // `ended` (if set) when a frame closes its stream from this side
  // (END_STREAM: a unary call's request is whole; a keepalive's stream stays
  // open). Returns false once the bytes are not HTTP/2 (nothing more is read).
  bool feed(std::string_view bytes, const OnMessage& on, const OnEnd& ended = {});

 private:
  std::size_t preface_left_;
  bool broken_ = false;
  std::string buffer_;
  std::map<std::uint32_t, std::string> streams_;  // DATA not yet a whole message
};

}  // namespace locksim::live::etcd
