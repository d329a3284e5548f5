// ZooKeeper's wire protocol for LIVE mode: the records of
// zookeeper-jute/src/main/resources/zookeeper.jute (release-3.8.0) in jute's
// binary encoding, and the framing and headers ClientCnxn puts around them.
//
// jute's BinaryOutputArchive: int and long big-endian (4 and 8 bytes),
// boolean one byte, a buffer or ustring a 4-byte length and its bytes (-1:
// null), a vector a 4-byte count and its elements (-1: null). Every packet on
// the wire is a 4-byte big-endian length and that many bytes
// (ClientCnxnSocketNIO.doIO, NIOServerCnxn.readLength).
//
// The session starts with ConnectRequest/ConnectResponse, without a request
// header, each followed by the readOnly boolean (ClientCnxn.Packet.createBB,
// ZooKeeperServer.finishSessionInit). After it, every request is a
// RequestHeader {xid, type} and its record; every reply a ReplyHeader {xid,
// zxid, err} and, when err is 0, its record. Special xids
// (ClientCnxn.java:122-128): -1 a watch notification (a WatcherEvent, zxid
// -1 in 3.8), -2 a ping's answer, -4 auth, -8 setWatches. The server answers
// one connection's requests in the order they came; a reply whose xid is not
// the oldest pending request's is the client's cue to drop the connection
// ("Xid out of order", ClientCnxn.readResponse).
//
// Only what the lock recipes and the differential test use is here; each
// encoding is pinned by tests/live_zookeeper_test.cpp, byte for byte and
// against a real server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "live/common.hpp"

namespace locksim::live::zk {

// ZooDefs.OpCode (3.8.0).
enum class OpCode : std::int32_t {
  Notification = 0,
  Create = 1,
  Delete = 2,
  Exists = 3,
  GetData = 4,
  GetChildren = 8,
  Sync = 9,
  Ping = 11,
  GetChildren2 = 12,
  Create2 = 15,
  AddWatch = 106,
  CreateSession = -10,
  CloseSession = -11,
  Error = -1,
};

// The xids with a meaning of their own (ClientCnxn.java:122-128).
inline constexpr std::int32_t kNotificationXid = -1;
inline constexpr std::int32_t kPingXid = -2;

// KeeperException.Code (3.8.0), those a recipe can meet.
enum class Err : std::int32_t {
  Ok = 0,
  SystemError = -1,
  ConnectionLoss = -4,
  MarshallingError = -5,
  Unimplemented = -6,
  OperationTimeout = -7,
  BadArguments = -8,
  UnknownSession = -12,
  ApiError = -100,
  NoNode = -101,
  NoAuth = -102,
  BadVersion = -103,
  NoChildrenForEphemerals = -108,
  NodeExists = -110,
  NotEmpty = -111,
  SessionExpired = -112,
  InvalidAcl = -114,
  SessionMoved = -118,
  EphemeralOnLocalSession = -120,
};
// "NONODE", "SESSIONEXPIRED", ... (KeeperException.Code's names); "ERR(-999)" for others.
std::string err_name(std::int32_t err);

// CreateMode's flags (CreateMode.java, 3.8.0).
enum class CreateMode : std::int32_t {
  Persistent = 0,
  Ephemeral = 1,
  PersistentSequential = 2,
  EphemeralSequential = 3,
  Container = 4,
};

// Watcher.Event.EventType and KeeperState (3.8.0).
enum class EventType : std::int32_t { None = -1, NodeCreated = 1, NodeDeleted = 2, NodeDataChanged = 3, NodeChildrenChanged = 4 };
enum class KeeperState : std::int32_t { Disconnected = 0, SyncConnected = 3, Expired = -112, Closed = 7 };

// AddWatchMode (3.8.0): a watch that stays after it fires.
enum class AddWatchMode : std::int32_t { Persistent = 0, PersistentRecursive = 1 };

// org.apache.zookeeper.data.Stat.
struct Stat {
  std::int64_t czxid = 0;
  std::int64_t mzxid = 0;
  std::int64_t ctime = 0;
  std::int64_t mtime = 0;
  std::int32_t version = 0;
  std::int32_t cversion = 0;
  std::int32_t aversion = 0;
  std::int64_t ephemeral_owner = 0;
  std::int32_t data_length = 0;
  std::int32_t num_children = 0;
  std::int64_t pzxid = 0;
  bool operator==(const Stat&) const = default;
};

struct ConnectRequest {
  std::int32_t protocol_version = 0;
  std::int64_t last_zxid_seen = 0;
  std::int32_t timeout_ms = 0;
  std::int64_t session_id = 0;    // 0: a new session; else the one to reattach
  std::string passwd = std::string(16, '\0');
  bool read_only = false;
};

struct ConnectResponse {
  std::int32_t protocol_version = 0;
  std::int32_t timeout_ms = 0;  // as negotiated; 0: the session is not valid (expired)
  std::int64_t session_id = 0;
  std::string passwd;
  bool read_only = false;
};

// One request after the handshake. Which fields count depends on the op:
//   Create, Create2   path, data, mode (the ACL is OPEN_ACL_UNSAFE: world:anyone, all)
//   Delete            path, version (-1: any)
//   Exists, GetData, GetChildren, GetChildren2   path, watch
//   AddWatch          path, watch_mode
//   Sync              path
//   Ping, CloseSession  nothing
struct Request {
  OpCode op = OpCode::Ping;
  std::string path;
  std::string data;
  CreateMode mode = CreateMode::Persistent;
  std::int32_t version = -1;
  bool watch = false;
  AddWatchMode watch_mode = AddWatchMode::Persistent;
};

struct ReplyHeader {
  std::int32_t xid = 0;
  std::int64_t zxid = 0;
  std::int32_t err = 0;
};

struct WatcherEvent {
  EventType type = EventType::None;
  KeeperState state = KeeperState::SyncConnected;
  std::string path;
};

// A reply, its record read by the op it answers (nothing when err != 0).
struct Response {
  ReplyHeader header;
  std::string path;                   // Create, Create2
  std::optional<Stat> stat;           // Create2, Exists, GetData, GetChildren2
  std::string data;                   // GetData
  std::vector<std::string> children;  // GetChildren, GetChildren2 (names, in the server's order)
};

// Whole packets, the length prefix included.
std::string encode(const ConnectRequest& r);
std::string encode(std::int32_t xid, const Request& r);
// xid -2 and OpCode.ping: ClientCnxn.sendPing.
inline std::string encode_ping() { return encode(kPingXid, Request{OpCode::Ping}); }

// The body of one packet (its length prefix taken off), or nullopt while it
// is not all in `buffer`; what it returns is removed from `buffer`. Throws
// Error on a length below 0 or above `max` (jute.maxbuffer).
std::optional<std::string> next_packet(std::string& buffer, std::uint32_t max = 0x100000 + 1024);

// Readers of packet bodies. Throw Error on a record cut short or malformed.
ConnectResponse decode_connect_response(std::string_view body);
ConnectRequest decode_connect_request(std::string_view body);  // for tests and the proxy's logs
ReplyHeader decode_reply_header(std::string_view body);
// The reply to a request of op `op` (its xid already matched by the caller).
Response decode_response(OpCode op, std::string_view body);
// A packet with xid -1.
WatcherEvent decode_event(std::string_view body);
// A request as a client sent it (after the handshake): its xid and what the
// lock recipes' requests carry (path, data, mode, version, watch); any other
// op (multi, setWatches, ...) is read as its header alone. How the run tells
// what a real library asked of the server from the bytes through its proxy.
struct RequestPacket {
  std::int32_t xid = 0;
  Request request;
};
RequestPacket decode_request(std::string_view body);

// "create2 /lock/x- EPHEMERAL_SEQUENTIAL", "ping", ...: for traces and mismatch reports.
std::string describe(const Request& r);
std::string describe(OpCode op, const Response& r);
std::string describe(const WatcherEvent& e);
std::string_view op_name(OpCode op);

}  // namespace locksim::live::zk
