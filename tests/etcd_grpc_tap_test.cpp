// An etcd library's gRPC bytes, read as the run's tap reads them
// (live/etcd/grpc_tap.hpp): messages built here field by field as
// etcdserverpb encodes them, wrapped in gRPC's and HTTP/2's framing, and fed
// in pieces as a proxy's chunks come.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "live/etcd/grpc_tap.hpp"

namespace etcd_grpc_tap_test {

using namespace locksim::live::etcd;

namespace {

std::string varint(std::uint64_t v) {
  std::string out;
  do {
    unsigned char b = v & 0x7f;
    v >>= 7;
    if (v) b |= 0x80;
    out += static_cast<char>(b);
  } while (v);
  return out;
}
std::string bytes_field(int number, const std::string& b) { return varint((number << 3) | 2) + varint(b.size()) + b; }
std::string varint_field(int number, std::uint64_t v) { return varint(number << 3) + varint(v); }

// python-etcd3's acquire: compare create_revision(key) == 0 (Compare
// {result EQUAL 0, target CREATE 1, key 3, create_revision 5}), success put
// (key, uuid, lease), failure range(key).
std::string acquire_txn(const std::string& key, const std::string& value, std::int64_t lease) {
  const std::string compare = varint_field(2, 1) + bytes_field(3, key) + varint_field(5, 0);
  const std::string put = bytes_field(1, key) + bytes_field(2, value) + varint_field(3, static_cast<std::uint64_t>(lease));
  const std::string range = bytes_field(1, key);
  return bytes_field(1, compare) + bytes_field(2, bytes_field(2, put)) + bytes_field(3, bytes_field(1, range));
}

// Its release: compare value(key) == uuid, success delete(key).
std::string release_txn(const std::string& key, const std::string& value) {
  const std::string compare = bytes_field(3, key) + varint_field(2, 3) + bytes_field(7, value);
  return bytes_field(1, compare) + bytes_field(2, bytes_field(3, bytes_field(1, key)));
}

std::string grpc(const std::string& message) {
  const auto n = static_cast<std::uint32_t>(message.size());
  return std::string{'\0', static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8),
                     static_cast<char>(n)} +
         message;
}

std::string frame(unsigned type, unsigned flags, std::uint32_t stream, const std::string& payload) {
  const auto n = static_cast<std::uint32_t>(payload.size());
  return std::string{static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n),
                     static_cast<char>(type), static_cast<char>(flags), static_cast<char>(stream >> 24),
                     static_cast<char>(stream >> 16), static_cast<char>(stream >> 8), static_cast<char>(stream)} +
         payload;
}

const std::string kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

}  // namespace

TEST_CASE("a lock's Txn reads back: the put's key, value and lease, the release's delete, and other messages are not Txns") {
  const auto acquire = decode_txn_request(acquire_txn("/locks/lock", "uuid-bytes", 0x0fd597e2f4f2d617));
  REQUIRE(acquire);
  REQUIRE(acquire->puts.size() == 1);
  CHECK(acquire->puts[0].key == "/locks/lock");
  CHECK(acquire->puts[0].value == "uuid-bytes");
  CHECK(acquire->puts[0].lease == 0x0fd597e2f4f2d617);
  CHECK(acquire->deletes.empty());  // the failure branch's range is not what it does

  const auto release = decode_txn_request(release_txn("/locks/lock", "uuid-bytes"));
  REQUIRE(release);
  CHECK(release->puts.empty());
  REQUIRE(release->deletes.size() == 1);
  CHECK(release->deletes[0] == "/locks/lock");

  // A DeleteRange with a range_end (rpc.proto DeleteRangeRequest field 2)
  // deletes every key in [key, range_end): not the lock's key alone.
  const std::string prefix_delete = bytes_field(1, "/locks/") + bytes_field(2, "/locks0");
  const auto ranged = decode_txn_request(bytes_field(2, bytes_field(3, prefix_delete)));
  REQUIRE(ranged);
  CHECK(ranged->deletes.empty());

  // A LeaseGrantRequest {TTL = 1, ID = 2}: varints, not a Txn's messages.
  CHECK_FALSE(decode_txn_request(varint_field(1, 2) + varint_field(2, 0)));
  // A RangeRequest of the key: field 1 holds bytes that are not a RequestOp.
  CHECK_FALSE(decode_txn_request(bytes_field(1, "/locks/lock")));
  // A truncated message.
  const std::string whole = acquire_txn("/locks/lock", "v", 7);
  CHECK_FALSE(decode_txn_request(whole.substr(0, whole.size() - 3)));

  // TxnResponse: a header, succeeded (left out when false), responses.
  const std::string header = bytes_field(1, varint_field(1, 42) + varint_field(3, 17));
  CHECK(decode_txn_succeeded(header + varint_field(2, 1)) == std::optional<bool>(true));
  CHECK(decode_txn_succeeded(header + bytes_field(3, "")) == std::optional<bool>(false));
  CHECK_FALSE(decode_txn_succeeded(varint_field(2, 1)));  // no header: not etcd's answer
}

TEST_CASE("HTTP/2 DATA frames are cut into each stream's gRPC messages, whatever the chunks, padding and other frames") {
  const std::string a = acquire_txn("/locks/lock", "u1", 5), r = release_txn("/locks/lock", "u1");
  const std::string ga = grpc(a), gr = grpc(r);
  std::string wire = kPreface + frame(4, 0, 0, "") /* SETTINGS */ + frame(1, 4, 1, "\x83\x86") /* HEADERS */;
  // Stream 1's message split over two DATA frames, the second padded, with
  // stream 3's whole message between them.
  wire += frame(0, 0, 1, ga.substr(0, 7));
  wire += frame(0, 1, 3, gr);
  const std::string padded = std::string(1, '\x04') + ga.substr(7) + std::string(4, '\0');
  wire += frame(0, 0x8 | 0x1, 1, padded);
  for (std::size_t chunk : {std::size_t{1}, std::size_t{5}, std::size_t{64}, wire.size()}) {
    CAPTURE(chunk);
    GrpcReader reader(true);
    std::vector<std::pair<std::uint32_t, std::string>> got;
    for (std::size_t at = 0; at < wire.size(); at += chunk)
      CHECK(reader.feed(std::string_view(wire).substr(at, chunk),
                        [&](std::uint32_t s, std::string_view m) { got.emplace_back(s, std::string(m)); }));
    REQUIRE(got.size() == 2);
    CHECK(got[0] == std::make_pair(std::uint32_t{3}, r));
    CHECK(got[1] == std::make_pair(std::uint32_t{1}, a));
  }
  // A unary call's stream is closed by its last DATA frame (or HEADERS)
  // from the client; a keepalive's stays open until the lease is done with.
  {
    GrpcReader reader(true);
    std::vector<std::uint32_t> ended;
    std::vector<std::int64_t> ids;
    const std::string revoke = grpc(varint_field(1, 0x53d0a224ffa92e07));
    reader.feed(kPreface + frame(0, 0, 5, revoke) + frame(0, 0, 7, revoke) + frame(0, 1, 5, "") + frame(1, 5, 9, "\x83"),
                [&](std::uint32_t, std::string_view m) { ids.push_back(decode_lease_id(m).value_or(-1)); },
                [&](std::uint32_t s) { ended.push_back(s); });
    CHECK(ids == std::vector<std::int64_t>{0x53d0a224ffa92e07, 0x53d0a224ffa92e07});
    CHECK(ended == std::vector<std::uint32_t>{5, 9});
    CHECK_FALSE(decode_lease_id(varint_field(1, 7) + varint_field(2, 1)));  // a TimeToLive with keys
    CHECK_FALSE(decode_lease_id(bytes_field(1, "lock")));
  }
  // The server's side has no preface: the same frames read from byte 0.
  GrpcReader server(false);
  int messages = 0;
  CHECK(server.feed(frame(0, 0, 1, grpc("x")), [&](std::uint32_t, std::string_view m) { messages += m == "x"; }));
  CHECK(messages == 1);
}

}  // namespace etcd_grpc_tap_test
