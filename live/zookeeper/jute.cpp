#include "live/zookeeper/jute.hpp"

#include <cstring>

namespace locksim::live::zk {

namespace {

// jute's BinaryOutputArchive (zookeeper-jute, release-3.8.0).
class Writer {
 public:
  Writer() { out_.resize(4); }  // the length, filled in by frame()
  Writer& i32(std::int32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out_ += static_cast<char>(static_cast<std::uint32_t>(v) >> shift);
    return *this;
  }
  Writer& i64(std::int64_t v) {
    for (int shift = 56; shift >= 0; shift -= 8) out_ += static_cast<char>(static_cast<std::uint64_t>(v) >> shift);
    return *this;
  }
  Writer& boolean(bool b) {
    out_ += static_cast<char>(b ? 1 : 0);
    return *this;
  }
  // A buffer and a ustring are written alike: the length, then the bytes.
  Writer& bytes(std::string_view s) {
    i32(static_cast<std::int32_t>(s.size()));
    out_.append(s);
    return *this;
  }
  // The packet: its length (not counting itself) first.
  std::string frame() && {
    const auto n = static_cast<std::uint32_t>(out_.size() - 4);
    for (int i = 0; i < 4; ++i) out_[i] = static_cast<char>(n >> (24 - 8 * i));
    return std::move(out_);
  }

 private:
  std::string out_;
};

// jute's BinaryInputArchive over one packet body.
class Reader {
 public:
  explicit Reader(std::string_view body) : in_(body) {}
  std::int32_t i32() {
    need(4, "an int");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(in_[at_ + i]);
    at_ += 4;
    return static_cast<std::int32_t>(v);
  }
  std::int64_t i64() {
    need(8, "a long");
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | static_cast<unsigned char>(in_[at_ + i]);
    at_ += 8;
    return static_cast<std::int64_t>(v);
  }
  bool boolean() {
    need(1, "a boolean");
    return in_[at_++] != 0;
  }
  // A buffer or ustring; null (-1) reads as empty.
  std::string bytes() {
    const std::int32_t n = i32();
    if (n < 0) return {};
    need(static_cast<std::size_t>(n), "a buffer");
    std::string s(in_.substr(at_, static_cast<std::size_t>(n)));
    at_ += static_cast<std::size_t>(n);
    return s;
  }
  std::vector<std::string> strings() {
    const std::int32_t n = i32();
    std::vector<std::string> out;
    if (n < 0) return out;
    // Each element takes at least its 4-byte length: a count beyond that is not a vector.
    need(static_cast<std::size_t>(n) * 4, "a vector");
    out.reserve(static_cast<std::size_t>(n));
    for (std::int32_t i = 0; i < n; ++i) out.push_back(bytes());
    return out;
  }
  Stat stat() {
    Stat s;
    s.czxid = i64();
    s.mzxid = i64();
    s.ctime = i64();
    s.mtime = i64();
    s.version = i32();
    s.cversion = i32();
    s.aversion = i32();
    s.ephemeral_owner = i64();
    s.data_length = i32();
    s.num_children = i32();
    s.pzxid = i64();
    return s;
  }
  bool at_end() const { return at_ == in_.size(); }

 private:
  void need(std::size_t n, const char* what) const {
    if (in_.size() - at_ < n)
      throw Error("ZooKeeper packet cut short: " + std::string(what) + " at byte " + std::to_string(at_) + " of " +
                  std::to_string(in_.size()));
  }
  std::string_view in_;
  std::size_t at_ = 0;
};

// ZooDefs.Ids.OPEN_ACL_UNSAFE: [{perms: ALL (31), id: world:anyone}].
void open_acl(Writer& w) {
  w.i32(1).i32(31).bytes("world").bytes("anyone");
}

}  // namespace

std::string err_name(std::int32_t err) {
  switch (static_cast<Err>(err)) {
    case Err::Ok: return "OK";
    case Err::SystemError: return "SYSTEMERROR";
    case Err::ConnectionLoss: return "CONNECTIONLOSS";
    case Err::MarshallingError: return "MARSHALLINGERROR";
    case Err::Unimplemented: return "UNIMPLEMENTED";
    case Err::OperationTimeout: return "OPERATIONTIMEOUT";
    case Err::BadArguments: return "BADARGUMENTS";
    case Err::UnknownSession: return "UNKNOWNSESSION";
    case Err::ApiError: return "APIERROR";
    case Err::NoNode: return "NONODE";
    case Err::NoAuth: return "NOAUTH";
    case Err::BadVersion: return "BADVERSION";
    case Err::NoChildrenForEphemerals: return "NOCHILDRENFOREPHEMERALS";
    case Err::NodeExists: return "NODEEXISTS";
    case Err::NotEmpty: return "NOTEMPTY";
    case Err::SessionExpired: return "SESSIONEXPIRED";
    case Err::InvalidAcl: return "INVALIDACL";
    case Err::SessionMoved: return "SESSIONMOVED";
    case Err::EphemeralOnLocalSession: return "EPHEMERALONLOCALSESSION";
  }
  return "ERR(" + std::to_string(err) + ")";
}

std::string_view op_name(OpCode op) {
  switch (op) {
    case OpCode::Notification: return "notification";
    case OpCode::Create: return "create";
    case OpCode::Delete: return "delete";
    case OpCode::Exists: return "exists";
    case OpCode::GetData: return "getData";
    case OpCode::GetChildren: return "getChildren";
    case OpCode::Sync: return "sync";
    case OpCode::Ping: return "ping";
    case OpCode::GetChildren2: return "getChildren2";
    case OpCode::Create2: return "create2";
    case OpCode::AddWatch: return "addWatch";
    case OpCode::CreateSession: return "createSession";
    case OpCode::CloseSession: return "closeSession";
    case OpCode::Error: return "error";
  }
  return "op?";
}

// ClientCnxn.Packet.createBB: the ConnectRequest record, then readOnly.
std::string encode(const ConnectRequest& r) {
  Writer w;
  w.i32(r.protocol_version).i64(r.last_zxid_seen).i32(r.timeout_ms).i64(r.session_id).bytes(r.passwd);
  w.boolean(r.read_only);
  return std::move(w).frame();
}

std::string encode(std::int32_t xid, const Request& r) {
  Writer w;
  w.i32(xid).i32(static_cast<std::int32_t>(r.op));
  switch (r.op) {
    case OpCode::Create:
    case OpCode::Create2:  // CreateRequest
      w.bytes(r.path).bytes(r.data);
      open_acl(w);
      w.i32(static_cast<std::int32_t>(r.mode));
      break;
    case OpCode::Delete:  // DeleteRequest
      w.bytes(r.path).i32(r.version);
      break;
    case OpCode::Exists:  // ExistsRequest, GetDataRequest, GetChildrenRequest, GetChildren2Request
    case OpCode::GetData:
    case OpCode::GetChildren:
    case OpCode::GetChildren2:
      w.bytes(r.path).boolean(r.watch);
      break;
    case OpCode::AddWatch:  // AddWatchRequest
      w.bytes(r.path).i32(static_cast<std::int32_t>(r.watch_mode));
      break;
    case OpCode::Sync:  // SyncRequest
      w.bytes(r.path);
      break;
    case OpCode::Ping:
    case OpCode::CloseSession:  // the header alone (ClientCnxn.sendPing, ZooKeeper.close)
      break;
    default:
      throw Error("cannot encode a ZooKeeper " + std::string(op_name(r.op)) + " request");
  }
  return std::move(w).frame();
}

std::optional<std::string> next_packet(std::string& buffer, std::uint32_t max) {
  if (buffer.size() < 4) return std::nullopt;
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n = n << 8 | static_cast<unsigned char>(buffer[i]);
  if (n > max) throw Error("a ZooKeeper packet of " + std::to_string(static_cast<std::int32_t>(n)) + " bytes");
  if (buffer.size() - 4 < n) return std::nullopt;
  std::string body = buffer.substr(4, n);
  buffer.erase(0, 4 + static_cast<std::size_t>(n));
  return body;
}

// ZooKeeperServer.finishSessionInit: ConnectResponse, then readOnly.
ConnectResponse decode_connect_response(std::string_view body) {
  Reader in(body);
  ConnectResponse r;
  r.protocol_version = in.i32();
  r.timeout_ms = in.i32();
  r.session_id = in.i64();
  r.passwd = in.bytes();
  if (!in.at_end()) r.read_only = in.boolean();  // absent for an "old client"
  return r;
}

ConnectRequest decode_connect_request(std::string_view body) {
  Reader in(body);
  ConnectRequest r;
  r.protocol_version = in.i32();
  r.last_zxid_seen = in.i64();
  r.timeout_ms = in.i32();
  r.session_id = in.i64();
  r.passwd = in.bytes();
  r.read_only = !in.at_end() && in.boolean();
  return r;
}

ReplyHeader decode_reply_header(std::string_view body) {
  Reader in(body);
  ReplyHeader h;
  h.xid = in.i32();
  h.zxid = in.i64();
  h.err = in.i32();
  return h;
}

Response decode_response(OpCode op, std::string_view body) {
  Reader in(body);
  Response r;
  r.header.xid = in.i32();
  r.header.zxid = in.i64();
  r.header.err = in.i32();
  if (r.header.err != 0) return r;  // ClientCnxn.readResponse reads the record only when err is 0
  switch (op) {
    case OpCode::Create:
    case OpCode::Sync:
      r.path = in.bytes();
      break;
    case OpCode::Create2:
      r.path = in.bytes();
      r.stat = in.stat();
      break;
    case OpCode::Exists:
      r.stat = in.stat();
      break;
    case OpCode::GetData:
      r.data = in.bytes();
      r.stat = in.stat();
      break;
    case OpCode::GetChildren:
      r.children = in.strings();
      break;
    case OpCode::GetChildren2:
      r.children = in.strings();
      r.stat = in.stat();
      break;
    default:  // Delete, Ping, CloseSession: the header alone; AddWatch: an ErrorResponse {0}
      break;
  }
  return r;
}

WatcherEvent decode_event(std::string_view body) {
  Reader in(body);
  const std::int32_t xid = in.i32();
  if (xid != kNotificationXid) throw Error("not a ZooKeeper notification: xid " + std::to_string(xid));
  in.i64();  // zxid: -1 in 3.8 (ServerCnxn.process)
  in.i32();  // err
  WatcherEvent e;
  e.type = static_cast<EventType>(in.i32());
  e.state = static_cast<KeeperState>(in.i32());
  e.path = in.bytes();
  return e;
}

// The server's side of encode(xid, Request): FinalRequestProcessor's records.
RequestPacket decode_request(std::string_view body) {
  Reader in(body);
  RequestPacket p;
  p.xid = in.i32();
  Request& r = p.request;
  r.op = static_cast<OpCode>(in.i32());
  switch (r.op) {
    case OpCode::Create:
    case OpCode::Create2: {  // CreateRequest: path, data, the ACL, flags
      r.path = in.bytes();
      r.data = in.bytes();
      const std::int32_t acls = in.i32();
      for (std::int32_t i = 0; i < acls; ++i) {
        in.i32();    // perms
        in.bytes();  // scheme
        in.bytes();  // id
      }
      r.mode = static_cast<CreateMode>(in.i32());
      break;
    }
    case OpCode::Delete:
      r.path = in.bytes();
      r.version = in.i32();
      break;
    case OpCode::Exists:
    case OpCode::GetData:
    case OpCode::GetChildren:
    case OpCode::GetChildren2:
      r.path = in.bytes();
      r.watch = in.boolean();
      break;
    case OpCode::AddWatch:
      r.path = in.bytes();
      r.watch_mode = static_cast<AddWatchMode>(in.i32());
      break;
    case OpCode::Sync: r.path = in.bytes(); break;
    default: break;
  }
  return p;
}

namespace {

std::string_view mode_name(CreateMode m) {
  switch (m) {
    case CreateMode::Persistent: return "PERSISTENT";
    case CreateMode::Ephemeral: return "EPHEMERAL";
    case CreateMode::PersistentSequential: return "PERSISTENT_SEQUENTIAL";
    case CreateMode::EphemeralSequential: return "EPHEMERAL_SEQUENTIAL";
    case CreateMode::Container: return "CONTAINER";
  }
  return "MODE?";
}

std::string_view event_name(EventType t) {
  switch (t) {
    case EventType::None: return "None";
    case EventType::NodeCreated: return "NodeCreated";
    case EventType::NodeDeleted: return "NodeDeleted";
    case EventType::NodeDataChanged: return "NodeDataChanged";
    case EventType::NodeChildrenChanged: return "NodeChildrenChanged";
  }
  return "Event?";
}

}  // namespace

std::string describe(const Request& r) {
  std::string out(op_name(r.op));
  switch (r.op) {
    case OpCode::Create:
    case OpCode::Create2: return out + " " + r.path + " " + std::string(mode_name(r.mode));
    case OpCode::Delete: return out + " " + r.path;
    case OpCode::Exists:
    case OpCode::GetData:
    case OpCode::GetChildren:
    case OpCode::GetChildren2: return out + " " + r.path + (r.watch ? " watch" : "");
    case OpCode::AddWatch:
      return out + " " + r.path + (r.watch_mode == AddWatchMode::PersistentRecursive ? " PERSISTENT_RECURSIVE" : " PERSISTENT");
    case OpCode::Sync: return out + " " + r.path;
    default: return out;
  }
}

std::string describe(OpCode op, const Response& r) {
  std::string out = "zxid " + std::to_string(r.header.zxid);
  if (r.header.err != 0) return out + " " + err_name(r.header.err);
  if (!r.path.empty()) out += " " + r.path;
  if (op == OpCode::GetChildren || op == OpCode::GetChildren2) {
    out += " [";
    for (std::size_t i = 0; i < r.children.size(); ++i) out += (i ? " " : "") + r.children[i];
    out += "]";
  }
  if (r.stat) out += " czxid " + std::to_string(r.stat->czxid) + " mzxid " + std::to_string(r.stat->mzxid);
  return out;
}

std::string describe(const WatcherEvent& e) {
  std::string out(event_name(e.type));
  if (!e.path.empty()) out += " " + e.path;
  return out;
}

}  // namespace locksim::live::zk
