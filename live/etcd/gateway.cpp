#include "live/etcd/gateway.hpp"

#include <array>
#include <charconv>
#include <nlohmann/json.hpp>

#include "live/common.hpp"

namespace locksim::live::etcd {

using nlohmann::json;
using coord::Op;

namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// protobuf's JSON mapping writes an int64 as a string; read a number too.
std::int64_t int64_of(const json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end() || it->is_null()) return 0;  // a zero value is left out
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (!it->is_string()) throw Error(std::string("etcd: field ") + field + " is not an integer: " + it->dump());
  const std::string& s = it->get_ref<const std::string&>();
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size())
    throw Error(std::string("etcd: field ") + field + " is not an integer: " + s);
  return v;
}

std::string text(std::int64_t v) { return std::to_string(v); }

json parse(std::string_view body) {
  json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw Error("etcd: not a JSON object: " + std::string(body.substr(0, 200)));
  return j;
}

std::int64_t header_revision(const json& j) {
  const auto h = j.find("header");
  return h == j.end() ? 0 : int64_of(*h, "revision");
}

// The first-created key under a prefix: clientv3's OpGet(pfx, WithFirstCreate())
// (op.go:452, withTop: WithPrefix, WithSort(CREATE, ASCEND), WithLimit(1)).
json first_created(const std::string& prefix) {
  return {{"key", base64(prefix)},
          {"range_end", base64(prefix_end(prefix))},
          {"limit", "1"},
          {"sort_order", "ASCEND"},
          {"sort_target", "CREATE"}};
}

std::vector<coord::Node> nodes_of(const json& range) {
  std::vector<coord::Node> out;
  const auto kvs = range.find("kvs");
  if (kvs == range.end()) return out;
  for (const json& kv : *kvs)
    out.push_back({unbase64(kv.value("key", std::string())), int64_of(kv, "create_revision")});
  return out;
}

coord::Reply refused(std::string word) {
  coord::Reply r;
  r.ok = false;
  r.error = std::move(word);
  return r;
}

}  // namespace

std::string base64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16 | static_cast<std::uint8_t>(bytes[i + 1]) << 8 |
                            static_cast<std::uint8_t>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(n >> shift) & 63];
  }
  if (i + 1 == bytes.size()) {
    const std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16 | static_cast<std::uint8_t>(bytes[i + 1]) << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

std::string unbase64(std::string_view text) {
  if (text.size() % 4 != 0) throw Error("etcd: not base64: " + std::string(text));
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::uint32_t n = 0;
    int pad = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      std::size_t v = 0;
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
      } else if (pad > 0 || (v = kAlphabet.find(c)) == std::string_view::npos) {
        throw Error("etcd: not base64: " + std::string(text));
      }
      n = n << 6 | static_cast<std::uint32_t>(v);
    }
    out += static_cast<char>(n >> 16);
    if (pad < 2) out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(n & 0xff);
  }
  return out;
}

// clientv3/op.go:368-385 (v3.4.23): the last byte below 0xff, plus one, the rest cut off.
std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  for (std::size_t i = end.size(); i-- > 0;) {
    if (static_cast<unsigned char>(end[i]) < 0xff) {
      end[i] = static_cast<char>(static_cast<unsigned char>(end[i]) + 1);
      end.resize(i + 1);
      return end;
    }
  }
  return std::string(1, '\0');  // no end: every key from the prefix on (noPrefixEnd)
}

std::string error_word(std::string_view message) {
  // etcdserver/api/v3rpc/rpctypes/error.go:34-36 (v3.4.23).
  static const std::array<std::pair<std::string_view, std::string_view>, 3> kWords{{
      {"etcdserver: requested lease not found", "LEASE_NOT_FOUND"},
      {"etcdserver: too large lease TTL", "LEASE_TTL_TOO_LARGE"},
      {"etcdserver: lease already exists", "LEASE_EXISTS"},
  }};
  for (const auto& [m, w] : kWords)
    if (message == m) return std::string(w);
  return std::string(message);
}

HttpCall call_of(const coord::Request& r) {
  switch (r.op) {
    case Op::LeaseGrant:  // LeaseGrantRequest {TTL, ID}: ID 0, the server picks
      return {"/v3/lease/grant", json{{"TTL", text(r.ttl.count_ns() / 1'000'000'000)}}.dump()};
    case Op::KeepAlive:  // one LeaseKeepAliveRequest on its own stream
      return {"/v3/lease/keepalive", json{{"ID", text(r.id)}}.dump()};
    case Op::PutIfAbsent: {
      // concurrency.Mutex.Lock's Txn (clientv3/concurrency/mutex.go:45-55, v3.4.23):
      // If(CreateRevision(myKey) == 0).Then(Put(myKey, "", lease), getOwner).Else(Get(myKey), getOwner).
      const std::string key = base64(r.path);
      json txn;
      txn["compare"] = json::array({{{"result", "EQUAL"}, {"target", "CREATE"}, {"key", key}, {"create_revision", "0"}}});
      txn["success"] = json::array({{{"request_put", {{"key", key}, {"lease", text(r.id)}}}},
                                    {{"request_range", first_created(r.data)}}});
      txn["failure"] = json::array({{{"request_range", {{"key", key}}}}, {{"request_range", first_created(r.data)}}});
      return {"/v3/kv/txn", txn.dump()};
    }
    case Op::Range:  // Get(prefix, WithPrefix()): sorted by key
      return {"/v3/kv/range", json{{"key", base64(r.path)}, {"range_end", base64(prefix_end(r.path))}}.dump()};
    case Op::WatchDelete: {
      // waitDelete's Watch(key, WithRev(rev)) (clientv3/concurrency/key.go:26-31): from
      // the revision the key was seen at, so a delete in between is not missed.
      json create{{"key", base64(r.path)}};
      if (r.id > 0) create["start_revision"] = text(r.id);
      return {"/v3/watch", json{{"create_request", create}}.dump(), true};
    }
    case Op::DeleteKey:
      return {"/v3/kv/deleterange", json{{"key", base64(r.path)}}.dump()};
    default:
      throw Error("etcd has no counterpart for " + coord::describe(r));
  }
}

HttpCall watch_all(std::int64_t start_revision) {
  // key "\0" with range_end "\0": every key (rpc.proto RangeRequest, range_end).
  json create{{"key", base64(std::string(1, '\0'))}, {"range_end", base64(std::string(1, '\0'))}, {"prev_kv", true}};
  if (start_revision > 0) create["start_revision"] = text(start_revision);
  return {"/v3/watch", json{{"create_request", create}}.dump(), true};
}

Answer answer_of(const coord::Request& r, unsigned status, std::string_view body) {
  std::string_view first = body.substr(0, body.find('\n'));
  json j = parse(first);
  if (status != 200 || j.contains("error")) {
    // A unary call's error: {"error": message, "code": n}; a stream's: {"error": {"message": ...}}.
    const json& e = j["error"];
    std::string message = e.is_string() ? e.get<std::string>() : e.is_object() ? e.value("message", e.dump()) : j.dump();
    return {refused(error_word(message)), 0};
  }
  if (r.op == Op::KeepAlive || r.op == Op::WatchDelete) {
    if (!j.contains("result")) throw Error("etcd: a stream message without a result: " + std::string(first));
    j = j["result"];
  }
  Answer a;
  a.revision = header_revision(j);
  coord::Reply& reply = a.reply;
  switch (r.op) {
    case Op::LeaseGrant:
      if (!j.value("error", std::string()).empty()) return {refused(error_word(j["error"].get<std::string>())), a.revision};
      reply.id = int64_of(j, "ID");
      reply.ttl = Duration::s(int64_of(j, "TTL"));
      break;
    case Op::KeepAlive: {
      // A TTL of 0 (left out) is the lease not found (v3rpc/lease.go:139-143);
      // clientv3 ends the keepalive on TTL <= 0 (lease.go:509).
      const std::int64_t ttl = int64_of(j, "TTL");
      if (ttl <= 0) return {refused("LEASE_NOT_FOUND"), a.revision};
      reply.id = int64_of(j, "ID");
      reply.ttl = Duration::s(ttl);
      break;
    }
    case Op::PutIfAbsent: {
      const json& responses = j.at("responses");
      if (responses.size() != 2) throw Error("etcd: a Txn answered " + std::to_string(responses.size()) + " responses");
      const bool succeeded = j.value("succeeded", false);
      // mutex.go:56-59: myRev is the header's revision, or the existing key's create revision.
      if (succeeded) {
        reply.id = a.revision;
      } else {
        const std::vector<coord::Node> mine = nodes_of(responses[0].at("response_range"));
        if (mine.empty()) throw Error("etcd: a failed Txn found no key: " + std::string(first));
        reply.id = mine.front().revision;
      }
      reply.nodes = nodes_of(responses[1].at("response_range"));
      break;
    }
    case Op::Range:
      reply.nodes = nodes_of(j);
      reply.id = a.revision;  // where a watch of these keys starts (mutex.go's waitDeletes)
      break;
    case Op::WatchDelete: {
      const WatchMessage m = watch_message_of(first);
      if (!m.created) throw Error("etcd: a watch answered without creating it: " + std::string(first));
      if (m.canceled) return {refused("WATCH_CANCELED"), a.revision};
      break;
    }
    case Op::DeleteKey:
      reply.id = int64_of(j, "deleted");
      break;
    default:
      throw Error("etcd has no counterpart for " + coord::describe(r));
  }
  return a;
}

WatchMessage watch_message_of(std::string_view text) {
  json j = parse(text);
  if (j.contains("error")) {
    const json& e = j["error"];
    throw Error("etcd: the watch stream failed: " + (e.is_object() ? e.value("message", e.dump()) : e.dump()));
  }
  if (!j.contains("result")) throw Error("etcd: a watch message without a result: " + std::string(text.substr(0, 200)));
  const json& r = j["result"];
  WatchMessage m;
  m.revision = header_revision(r);
  m.created = r.value("created", false);
  m.canceled = r.value("canceled", false);
  m.cancel_reason = r.value("cancel_reason", std::string());
  if (const auto events = r.find("events"); events != r.end()) {
    for (const json& e : *events) {
      WatchEvent ev;
      ev.deleted = e.value("type", std::string("PUT")) == "DELETE";
      const json& kv = e.at("kv");
      ev.key = unbase64(kv.value("key", std::string()));
      ev.create_revision = int64_of(kv, "create_revision");
      ev.mod_revision = int64_of(kv, "mod_revision");
      ev.lease = int64_of(kv, "lease");
      if (ev.deleted)
        if (const auto prev = e.find("prev_kv"); prev != e.end()) {
          ev.create_revision = int64_of(*prev, "create_revision");
          ev.lease = int64_of(*prev, "lease");
        }
      m.events.push_back(std::move(ev));
    }
  }
  return m;
}

}  // namespace locksim::live::etcd
