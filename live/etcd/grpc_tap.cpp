#include "live/etcd/grpc_tap.hpp"

namespace locksim::live::etcd {

namespace {

// One field of a protobuf message: its number, and its varint or its bytes.
struct Field {
  std::uint32_t number = 0;
  int wire = 0;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  std::uint64_t varint = 0;
  std::string_view bytes;
};

bool read_varint(std::string_view& in, std::uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return false;
    const auto b = static_cast<unsigned char>(in.front());
    in.remove_prefix(1);
    out |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Every field of `message`, or nullopt if it is not a protobuf message.
std::optional<std::vector<Field>> fields_of(std::string_view in) {
  std::vector<Field> out;
  while (!in.empty()) {
    std::uint64_t tag = 0;
    if (!read_varint(in, tag)) return std::nullopt;
    Field f;
    f.number = static_cast<std::uint32_t>(tag >> 3);
    f.wire = static_cast<int>(tag & 7);
    if (f.number == 0) return std::nullopt;
    if (f.wire == 0) {
      if (!read_varint(in, f.varint)) return std::nullopt;
    } else if (f.wire == 1 || f.wire == 5) {
      const std::size_t n = f.wire == 1 ? 8 : 4;
      if (in.size() < n) return std::nullopt;
      in.remove_prefix(n);
    } else if (f.wire == 2) {
      std::uint64_t n = 0;
      if (!read_varint(in, n) || n > in.size()) return std::nullopt;
      f.bytes = in.substr(0, n);
      in.remove_prefix(n);
    } else {
      return std::nullopt;
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace

// etcdserverpb (api/etcdserverpb/rpc.proto, v3.4.23): TxnRequest { repeated
// Compare compare = 1; repeated RequestOp success = 2; repeated RequestOp
// failure = 3; }, RequestOp { oneof request { RangeRequest request_range = 1;
// PutRequest request_put = 2; DeleteRangeRequest request_delete_range = 3;
// TxnRequest request_txn = 4; } }, PutRequest { bytes key = 1; bytes value =
// 2; int64 lease = 3; ... }, DeleteRangeRequest { bytes key = 1; bytes
// range_end = 2; ... }.
std::optional<TxnOps> decode_txn_request(std::string_view message) {
  const auto top = fields_of(message);
  if (!top || top->empty()) return std::nullopt;
  TxnOps ops;
  for (const Field& f : *top) {
    if (f.number > 3 || f.wire != 2) return std::nullopt;
    const auto op = fields_of(f.bytes);
    if (!op) return std::nullopt;
    if (f.number == 1) continue;  // a Compare
    if (op->size() != 1 || (*op)[0].wire != 2 || (*op)[0].number > 4) return std::nullopt;
    if (f.number != 2) continue;  // the failure branch: not what the server does when the lock is free
    const Field& request = (*op)[0];
    const auto inner = fields_of(request.bytes);
    if (!inner) return std::nullopt;
    if (request.number == 2) {
      TxnOps::Put put;
      for (const Field& p : *inner) {
        if (p.number == 1 && p.wire == 2) put.key = p.bytes;
        if (p.number == 2 && p.wire == 2) put.value = p.bytes;
        if (p.number == 3 && p.wire == 0) put.lease = static_cast<std::int64_t>(p.varint);
      }
      ops.puts.push_back(std::move(put));
    } else if (request.number == 3) {
      std::string key;
      bool range = false;
      for (const Field& p : *inner) {
        if (p.number == 1 && p.wire == 2) key = p.bytes;
        if (p.number == 2 && p.wire == 2 && !p.bytes.empty()) range = true;
      }
      if (!range) ops.deletes.push_back(std::move(key));
    }
  }
  return ops;
}

std::optional<std::int64_t> decode_lease_id(std::string_view message) {
  const auto top = fields_of(message);
  if (!top || top->size() != 1 || (*top)[0].number != 1 || (*top)[0].wire != 0) return std::nullopt;
  return static_cast<std::int64_t>((*top)[0].varint);
}

// TxnResponse { ResponseHeader header = 1; bool succeeded = 2; repeated
// ResponseOp responses = 3; }: proto3 leaves a false `succeeded` out.
std::optional<bool> decode_txn_succeeded(std::string_view message) {
  const auto top = fields_of(message);
  if (!top) return std::nullopt;
  bool header = false, succeeded = false;
  for (const Field& f : *top) {
    if (f.number == 1 && f.wire == 2) header = true;
    else if (f.number == 2 && f.wire == 0) succeeded = f.varint != 0;
    else if (f.number == 3 && f.wire == 2) continue;
    else return std::nullopt;
  }
  if (!header) return std::nullopt;  // every answer of etcd's carries its header
  return succeeded;
}

// HTTP/2 (RFC 7540 4.1): a 9-byte header (24-bit length, type, flags, 31-bit
// stream) then the payload; DATA is type 0, PADDED its flag 0x8. gRPC (its
// PROTOCOL-HTTP2): each message a compressed flag, a 4-byte length, the bytes.
bool GrpcReader::feed(std::string_view bytes, const OnMessage& on, const OnEnd& ended) {
  if (broken_) return false;
  if (preface_left_ > 0) {
    const std::size_t n = std::min(preface_left_, bytes.size());
    preface_left_ -= n;
    bytes.remove_prefix(n);
  }
  buffer_.append(bytes);
  std::size_t at = 0;
  while (buffer_.size() - at >= 9) {
    const auto* h = reinterpret_cast<const unsigned char*>(buffer_.data() + at);
    const std::size_t length = (std::size_t{h[0]} << 16) | (std::size_t{h[1]} << 8) | h[2];
    if (length > (1u << 24)) {
      broken_ = true;
      return false;
    }
    if (buffer_.size() - at < 9 + length) break;
    const unsigned type = h[3], flags = h[4];
    const std::uint32_t stream =
        ((std::uint32_t{h[5]} << 24) | (std::uint32_t{h[6]} << 16) | (std::uint32_t{h[7]} << 8) | h[8]) & 0x7fffffffu;
    std::string_view payload(buffer_.data() + at + 9, length);
    at += 9 + length;
    if (type == 1 && (flags & 0x1) && ended) ended(stream);  // HEADERS closing the stream
    if (type != 0) continue;
    if (flags & 0x8) {
      if (payload.empty() || static_cast<unsigned char>(payload[0]) >= payload.size()) continue;
      const std::size_t pad = static_cast<unsigned char>(payload[0]);
      payload = payload.substr(1, payload.size() - 1 - pad);
    }
    std::string& data = streams_[stream];
    data.append(payload);
    std::size_t m = 0;
    while (data.size() - m >= 5) {
      const auto* g = reinterpret_cast<const unsigned char*>(data.data() + m);
      const std::size_t n = (std::size_t{g[1]} << 24) | (std::size_t{g[2]} << 16) | (std::size_t{g[3]} << 8) | g[4];
      if (data.size() - m < 5 + n) break;
      if (g[0] == 0) on(stream, std::string_view(data.data() + m + 5, n));  // a compressed one is not read
      m += 5 + n;
    }
    data.erase(0, m);
    if (flags & 0x1) {  // END_STREAM
      if (data.empty()) streams_.erase(stream);
      if (ended) ended(stream);
    }
  }
  buffer_.erase(0, at);
  return true;
}

}  // namespace locksim::live::etcd
