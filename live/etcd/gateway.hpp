// etcd's v3 API as its HTTP/JSON gateway speaks it (etcd 3.4: every RPC of
// etcdserverpb/rpc.proto is a POST to /v3/... on the client URL, the body the
// request message as JSON; keys and values base64, int64s as strings, zero
// values left out). One entry per coord::Op: the request the lock recipe's
// op is (clientv3's, where the recipe is concurrency.Mutex), and its reply.
//
// Why the gateway and not gRPC: live/README.md, "etcd".
//
// Times are the wire's: a Request's ttl is whole seconds of real time by the
// time it gets here (LiveClientEnv scales it), and a Reply's ttl is whole
// seconds as etcd answered.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sim/message.hpp"

namespace locksim::live::etcd {

// A POST to the gateway: its path and JSON body. `stream`: the RPC is a
// stream (Watch), answered with one JSON message per line for as long as the
// connection stays open.
struct HttpCall {
  std::string target;
  std::string body;
  bool stream = false;
};

// The gateway call for `r`. Throws Error for an op etcd has no counterpart for
// (ZooKeeper's, Chubby's, Consul's).
HttpCall call_of(const coord::Request& r);

// What a reply says beyond coord::Reply: the store's revision when etcd
// answered (ResponseHeader.revision), for the differential test.
struct Answer {
  coord::Reply reply;
  std::int64_t revision = 0;
};

// The reply to `r`, from the gateway's HTTP status and body (for KeepAlive,
// the stream's first message). Errors etcd returns become !ok with the
// coord error word ("LEASE_NOT_FOUND", ...); a body that is not etcd's
// answer throws Error.
Answer answer_of(const coord::Request& r, unsigned status, std::string_view body);

// One message of a watch stream.
struct WatchEvent {
  bool deleted = false;  // DELETE; else PUT
  std::string key;
  std::int64_t create_revision = 0;  // a PUT's; a DELETE carries none
  std::int64_t mod_revision = 0;     // the event's revision
  std::int64_t lease = 0;
};
struct WatchMessage {
  bool created = false;   // the answer to the create request
  bool canceled = false;  // the server ended the watch (compact_revision, or an error)
  std::string cancel_reason;
  std::int64_t revision = 0;  // the header's
  std::vector<WatchEvent> events;
};
// Throws Error when `json` is not a watch message (a stream's error message included).
WatchMessage watch_message_of(std::string_view json);

// A watch of every key from `start_revision` on (0: from now), with the
// previous value of each deleted key: what a live run's observer asks.
HttpCall watch_all(std::int64_t start_revision);

// RFC 4648 base64, as protobuf's JSON mapping writes bytes; unbase64 throws
// Error on anything else.
std::string base64(std::string_view bytes);
std::string unbase64(std::string_view text);
// The end of the range of keys with this prefix (clientv3 GetPrefixRangeEnd).
std::string prefix_end(std::string_view prefix);

// The coord error word for an etcd error message ("etcdserver: requested
// lease not found" -> "LEASE_NOT_FOUND"); others are kept as they are.
std::string error_word(std::string_view message);

}  // namespace locksim::live::etcd
