#include "live/resp.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <utility>

namespace locksim::live::resp {

using redis::Op;
using redis::Reply;
using redis::Request;
using Argv = std::vector<std::string>;

namespace {

// ---------------------------------------------------------------------------
// The scripts. Each does in one EVAL what sim/servers/redis/node.cpp does for its op, and
// answers with the reply shape the table below reads back.

// redis.io's release script.
constexpr std::string_view kCompareAndDelete = R"(if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0)";

// KEYS: lock, token counter. ARGV: value, ttl ms (0: no expiry).
constexpr std::string_view kAcquireWithToken = R"(local set
if tonumber(ARGV[2]) > 0 then
  set = redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])
else
  set = redis.call('set', KEYS[1], ARGV[1], 'NX')
end
if not set then return false end
return redis.call('incr', KEYS[2]))";

// KEYS: lock. ARGV: value, ttl ms.
// On Redisson's lock (a hash: kRedissonTryLock below) the watchdog's renewal
// is Redisson's own, LockTask.java:85-93 at redisson-4.7.0: PEXPIRE if the
// holder's field is there. The simulator keeps that lock as a value, so its
// one op is both; with GET alone a real server answered WRONGTYPE, and the
// watchdog renewed nothing live (incident redisson-1602: live - x3, sim stuck).
constexpr std::string_view kCompareAndPexpire = R"(if redis.call('type', KEYS[1]).ok == 'hash' then
  if redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 1
  end
  return 0
end
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0)";

// Redisson's RLock layout (RedissonLock.java:314-322, 354-366 at
// redisson-4.7.0): the lock is a hash whose one field is the holder's value
// and counts its re-entries with HINCRBY, as the simulator does.
// KEYS: lock. ARGV: value, lease ms (0: none). Acquired: nil; held by another: its PTTL.
constexpr std::string_view kRedissonTryLock = R"(if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  if tonumber(ARGV[2]) > 0 then redis.call('pexpire', KEYS[1], ARGV[2]) else redis.call('persist', KEYS[1]) end
  return nil
end
return redis.call('pttl', KEYS[1]))";

// RFencedLock: as tryLock, and a fresh acquisition INCRs the token counter.
// KEYS: lock, token counter. ARGV: value, lease ms. Acquired: {token} (a
// one-element array, so that it cannot be mistaken for a PTTL); held by another: its PTTL.
constexpr std::string_view kRedissonTryLockFenced = R"(local fresh = redis.call('exists', KEYS[1]) == 0
if fresh or redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[1], 1)
  if tonumber(ARGV[2]) > 0 then redis.call('pexpire', KEYS[1], ARGV[2]) else redis.call('persist', KEYS[1]) end
  local token
  if fresh then token = redis.call('incr', KEYS[2]) else token = tonumber(redis.call('get', KEYS[2]) or '0') end
  return {token}
end
return redis.call('pttl', KEYS[1]))";

// KEYS: lock, channel (the simulator's channel is the lock's key). ARGV: value, message, lease ms.
// Not ours: nil; re-entered: one hold less, PEXPIRE the lease (if any), 0; else delete, publish, 1.
constexpr std::string_view kRedissonUnlock = R"(if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
  return nil
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) > 0 then
  if tonumber(ARGV[3]) > 0 then redis.call('pexpire', KEYS[1], ARGV[3]) end
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[2])
return 1)";

// ---------------------------------------------------------------------------
// Pieces of commands and replies.

std::string ms(Duration d) { return std::to_string(d.whole_ms()); }

Argv eval(std::string_view script, std::initializer_list<std::string> keys, std::initializer_list<std::string> args) {
  Argv argv{"EVAL", std::string(script), std::to_string(keys.size())};
  argv.insert(argv.end(), keys);
  argv.insert(argv.end(), args);
  return argv;
}

[[noreturn]] void unexpected(Op op, const Value& v);

bool is_ok_status(const Value& v) { return v.type == Value::Type::Status && v.str.rfind("OK", 0) == 0; }

// The reply readers: each accepts the shapes its op can have (errors are handled before).
Reply int_reply(Op op, const Value& v) {
  if (v.type != Value::Type::Int) unexpected(op, v);
  return Reply::of(v.integer);
}
Reply int_or_nil(Op op, const Value& v) { return v.type == Value::Type::Nil ? Reply::nil() : int_reply(op, v); }
Reply ok_reply(Op op, const Value& v) {
  if (!is_ok_status(v)) unexpected(op, v);
  return Reply::ok();
}

// One op: what it sends and how its reply reads. The reader gets the op so
// that its error names it.
struct OpCodec {
  Op op;
  std::string_view name;
  std::string_view script;  // the scripted ops' EVAL body
  Argv (*command)(const Request&, const Names&);
  Reply (*reply)(Op, const Value&, const Names&);
};

// THE table: one entry per redis::Op, in the enum's order (checked below).
constexpr OpCodec kOps[] = {
    {Op::Get, "GET", {},
     [](const Request& r, const Names&) { return Argv{"GET", r.key}; },
     [](Op op, const Value& v, const Names&) {
       if (v.type == Value::Type::Nil) return Reply::nil();
       if (v.type != Value::Type::Bulk) unexpected(op, v);
       return Reply::of(v.str);
     }},
    {Op::Set, "SET", {},
     [](const Request& r, const Names&) {
       Argv argv{"SET", r.key, r.value.text()};
       if (r.nx) argv.push_back("NX");
       if (!r.px.is_zero()) argv.insert(argv.end(), {"PX", ms(r.px)});
       // An absolute expiry in Unix milliseconds on the server's (possibly shimmed) wall clock.
       if (r.pxat) argv.insert(argv.end(), {"PXAT", std::to_string(r.pxat->ns() / 1'000'000)});
       return argv;
     },
     [](Op op, const Value& v, const Names&) { return v.type == Value::Type::Nil ? Reply::nil() : ok_reply(op, v); }},
    {Op::SetNx, "SETNX", {},
     [](const Request& r, const Names&) { return Argv{"SETNX", r.key, r.value.text()}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::Del, "DEL", {},
     [](const Request& r, const Names&) { return Argv{"DEL", r.key}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::Incr, "INCR", {},
     [](const Request& r, const Names&) { return Argv{"INCR", r.key}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::Exists, "EXISTS", {},
     [](const Request& r, const Names&) { return Argv{"EXISTS", r.key}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::Pttl, "PTTL", {},
     [](const Request& r, const Names&) { return Argv{"PTTL", r.key}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::CompareAndDelete, "EVAL compare-and-delete", kCompareAndDelete,
     [](const Request& r, const Names&) { return eval(kCompareAndDelete, {r.key}, {r.value.text()}); },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::AcquireWithToken, "EVAL acquire-with-token", kAcquireWithToken,
     [](const Request& r, const Names&) { return eval(kAcquireWithToken, {r.key, r.token_key}, {r.value.text(), ms(r.px)}); },
     [](Op op, const Value& v, const Names&) { return int_or_nil(op, v); }},
    {Op::CompareAndPexpire, "EVAL compare-and-pexpire", kCompareAndPexpire,
     [](const Request& r, const Names&) { return eval(kCompareAndPexpire, {r.key}, {r.value.text(), ms(r.px)}); },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::RedissonTryLock, "EVAL redisson-trylock", kRedissonTryLock,
     [](const Request& r, const Names&) { return eval(kRedissonTryLock, {r.key}, {r.value.text(), ms(r.px)}); },
     [](Op op, const Value& v, const Names&) { return int_or_nil(op, v); }},
    {Op::RedissonUnlock, "EVAL redisson-unlock", kRedissonUnlock,
     [](const Request& r, const Names&) { return eval(kRedissonUnlock, {r.key, r.key}, {r.value.text(), "unlocked " + r.key, ms(r.px)}); },
     [](Op op, const Value& v, const Names&) { return int_or_nil(op, v); }},
    {Op::RedissonTryLockFenced, "EVAL redisson-fenced-trylock", kRedissonTryLockFenced,
     [](const Request& r, const Names&) {
       return eval(kRedissonTryLockFenced, {r.key, r.token_key}, {r.value.text(), ms(r.px)});
     },
     [](Op op, const Value& v, const Names&) {
       if (v.type == Value::Type::Int) return Reply::of(v.integer);  // held by another: its PTTL
       if (v.type != Value::Type::Array || v.elements.size() != 1 || v.elements[0].type != Value::Type::Int)
         unexpected(op, v);
       return Reply{Reply::Kind::Ok, v.elements[0].integer, {}};  // OK carrying the token, as the simulator answers
     }},
    {Op::Subscribe, "SUBSCRIBE", {},
     [](const Request& r, const Names&) { return Argv{"SUBSCRIBE", r.key}; },
     [](Op op, const Value& v, const Names&) {
       if (v.type != Value::Type::Array || v.elements.empty() || v.elements[0].str != "subscribe") unexpected(op, v);
       return Reply::ok();
     }},
    {Op::Ping, "PING", {},
     [](const Request&, const Names&) { return Argv{"PING"}; },
     [](Op op, const Value& v, const Names&) {
       // A subscribed connection answers PING with ["pong", ""].
       const bool pong = (v.type == Value::Type::Status && v.str == "PONG") ||
                         (v.type == Value::Type::Array && !v.elements.empty() && v.elements[0].str == "pong");
       if (!pong) unexpected(op, v);
       return Reply::of(std::string("PONG"));
     }},
    {Op::ReplicaOfNoOne, "REPLICAOF NO ONE", {},
     [](const Request&, const Names&) { return Argv{"REPLICAOF", "NO", "ONE"}; },
     [](Op op, const Value& v, const Names&) { return ok_reply(op, v); }},
    {Op::ReplicaOf, "REPLICAOF", {},
     [](const Request& r, const Names& names) {
       // The simulator names the new master; the server needs its address.
       const std::optional<Endpoint> at = names.address_of ? names.address_of(r.key) : std::nullopt;
       if (!at) throw Error("REPLICAOF " + r.key + ": no address known for that node");
       return Argv{"REPLICAOF", at->host, std::to_string(at->port)};
     },
     [](Op op, const Value& v, const Names&) { return ok_reply(op, v); }},  // "+OK Already connected..." too
    {Op::GetMasterAddr, "SENTINEL get-master-addr-by-name", {},
     [](const Request& r, const Names&) { return Argv{"SENTINEL", "get-master-addr-by-name", r.key}; },
     [](Op op, const Value& v, const Names& names) {
       if (v.type == Value::Type::Nil) return Reply::nil();
       if (v.type != Value::Type::Array || v.elements.size() != 2) unexpected(op, v);
       // The simulator's sentinel answers with the master's name.
       Endpoint at{v.elements[0].str, 0};
       int port = 0;
       const std::string& p = v.elements[1].str;
       if (std::from_chars(p.data(), p.data() + p.size(), port).ec != std::errc{} || port <= 0 || port > 65535)
         unexpected(op, v);
       at.port = static_cast<std::uint16_t>(port);
       const std::optional<std::string> name = names.name_at ? names.name_at(at) : std::nullopt;
       return Reply::of(name ? *name : at.text());
     }},
    // What the simulated sentinels and replicas say to one another; real ones speak for themselves.
    {Op::Info, "INFO", {},
     [](const Request&, const Names&) { return Argv{"INFO", "replication"}; },
     [](Op op, const Value& v, const Names&) {
       if (v.type != Value::Type::Bulk) unexpected(op, v);
       return Reply::of(v.str);
     }},
    {Op::Psync, "PSYNC", {},
     [](const Request& r, const Names&) -> Argv { throw Error("PSYNC " + r.key + ": a replica's own protocol, not a client command"); },
     [](Op op, const Value& v, const Names&) -> Reply { unexpected(op, v); }},
    {Op::SentinelIsMasterDown, "SENTINEL is-master-down-by-addr", {},
     [](const Request& r, const Names&) -> Argv { throw Error("SENTINEL is-master-down-by-addr " + r.key + ": between sentinels only"); },
     [](Op op, const Value& v, const Names&) -> Reply { unexpected(op, v); }},
    {Op::Publish, "PUBLISH", {},
     [](const Request& r, const Names&) { return Argv{"PUBLISH", r.key, r.value.text()}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::Wait, "WAIT", {},
     [](const Request& r, const Names&) { return Argv{"WAIT", std::to_string(r.offset), ms(r.px)}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
    {Op::ReplconfGetack, "REPLCONF GETACK", {},
     [](const Request&, const Names&) -> Argv { throw Error("REPLCONF GETACK: a master's own protocol, not a client command"); },
     [](Op op, const Value& v, const Names&) -> Reply { unexpected(op, v); }},
    {Op::ReplconfAck, "REPLCONF ACK", {},
     [](const Request&, const Names&) -> Argv { throw Error("REPLCONF ACK: a replica's own protocol, not a client command"); },
     [](Op op, const Value& v, const Names&) -> Reply { unexpected(op, v); }},
    {Op::Pexpire, "PEXPIRE", {},
     [](const Request& r, const Names&) { return Argv{"PEXPIRE", r.key, ms(r.px)}; },
     [](Op op, const Value& v, const Names&) { return int_reply(op, v); }},
};

constexpr bool table_in_enum_order() {
  for (std::size_t i = 0; i < std::size(kOps); ++i)
    if (static_cast<std::size_t>(kOps[i].op) != i) return false;
  return true;
}
static_assert(table_in_enum_order(), "kOps must list every redis::Op once, in the enum's order");
static_assert(std::size(kOps) == static_cast<std::size_t>(Op::Pexpire) + 1,
              "a redis::Op has no entry in kOps (Pexpire is assumed to be the last op)");

const OpCodec& codec(Op op) { return kOps[static_cast<std::size_t>(op)]; }

void unexpected(Op op, const Value& v) {
  throw Error(std::string(codec(op).name) + ": a reply of a shape this op cannot have: " + describe(v));
}

Value value_of(const redisReply& r) {
  Value v;
  switch (r.type) {
    case REDIS_REPLY_NIL: break;
    case REDIS_REPLY_STATUS: v.type = Value::Type::Status; v.str.assign(r.str, r.len); break;
    case REDIS_REPLY_ERROR: v.type = Value::Type::Error; v.str.assign(r.str, r.len); break;
    case REDIS_REPLY_INTEGER: v.type = Value::Type::Int; v.integer = r.integer; break;
    case REDIS_REPLY_STRING: v.type = Value::Type::Bulk; v.str.assign(r.str, r.len); break;
    case REDIS_REPLY_ARRAY:
      v.type = Value::Type::Array;
      v.elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) v.elements.push_back(value_of(*r.element[i]));
      break;
    default: throw Error("RESP: a reply of unknown type " + std::to_string(r.type));
  }
  return v;
}

}  // namespace

std::string describe(const Value& v) {
  switch (v.type) {
    case Value::Type::Nil: return "nil";
    case Value::Type::Status: return "+" + v.str;
    case Value::Type::Error: return "-" + v.str;
    case Value::Type::Int: return std::string(":").append(std::to_string(v.integer));
    case Value::Type::Bulk: return "\"" + v.str + "\"";
    case Value::Type::Array: {
      std::string s = "[";
      for (std::size_t i = 0; i < v.elements.size(); ++i) {
        if (i) s += ", ";
        s += describe(v.elements[i]);
      }
      return s + "]";
    }
  }
  return "?";
}

std::string encode(const Argv& argv) {
  std::vector<const char*> parts;
  std::vector<std::size_t> lengths;
  for (const std::string& a : argv) {
    parts.push_back(a.data());
    lengths.push_back(a.size());
  }
  char* out = nullptr;
  const int n = redisFormatCommandArgv(&out, static_cast<int>(argv.size()), parts.data(), lengths.data());
  if (n < 0 || out == nullptr) throw Error("RESP: cannot format a command");
  std::string bytes(out, static_cast<std::size_t>(n));
  redisFreeCommand(out);
  return bytes;
}

std::vector<Argv> commands_of(const Request& req, const Names& names) {
  std::vector<Argv> out;
  // A replica's copy of a change travels by real replication in LIVE mode, never as a request.
  if (req.replicated) throw Error(std::string(codec(req.op).name) + ": a replicated change is not a client command");
  if (req.no_reply) out.push_back({"CLIENT", "REPLY", "SKIP"});
  out.push_back(codec(req.op).command(req, names));
  return out;
}

std::string encode(const Request& req, const Names& names) {
  std::string bytes;
  for (const Argv& argv : commands_of(req, names)) bytes += encode(argv);
  return bytes;
}

int replies_expected(const Request& req) { return req.no_reply ? 0 : 1; }

Reply decode(const Request& req, const Value& v, const Names& names) {
  if (v.type == Value::Type::Error) return Reply::error(v.str);
  return codec(req.op).reply(req.op, v, names);
}

std::optional<Reply> push_of(const Value& v) {
  if (v.type != Value::Type::Array || v.elements.size() != 3 || v.elements[0].str != "message") return std::nullopt;
  return Reply::of(v.elements[2].str);
}

std::string_view script_of(Op op) { return codec(op).script; }
std::string_view name_of(Op op) { return codec(op).name; }

// ---------------------------------------------------------------------------

Decoder::Decoder() : reader_(redisReaderCreate()) {
  if (!reader_) throw Error("RESP: cannot create a reader");
}

Decoder::~Decoder() {
  if (reader_) redisReaderFree(reader_);
}

Decoder::Decoder(Decoder&& other) noexcept : reader_(std::exchange(other.reader_, nullptr)) {}

Decoder& Decoder::operator=(Decoder&& other) noexcept {
  if (this != &other) {
    if (reader_) redisReaderFree(reader_);
    reader_ = std::exchange(other.reader_, nullptr);
  }
  return *this;
}

void Decoder::feed(std::string_view bytes) {
  if (bytes.empty()) return;
  if (redisReaderFeed(reader_, bytes.data(), bytes.size()) != REDIS_OK)
    throw Error(std::string("RESP: ") + reader_->errstr);
}

std::optional<Value> Decoder::next() {
  void* reply = nullptr;
  if (redisReaderGetReply(reader_, &reply) != REDIS_OK) throw Error(std::string("RESP: ") + reader_->errstr);
  if (!reply) return std::nullopt;
  struct Free {
    void* r;
    ~Free() { freeReplyObject(r); }
  } free_it{reply};
  return value_of(*static_cast<const redisReply*>(reply));
}

// ---------------------------------------------------------------------------
// Frame boundaries. RESP2 and RESP3 types both, so that a client that says
// HELLO 3 does not break the proxy.

namespace {

constexpr std::size_t kIncomplete = std::string_view::npos;

// The header line's number ("$5\r\n" -> 5); `line_end` is where its "\r\n" starts.
std::int64_t header_number(std::string_view bytes, std::size_t pos, std::size_t line_end) {
  std::int64_t n = 0;
  const char* first = bytes.data() + pos + 1;
  const char* last = bytes.data() + line_end;
  const auto [ptr, ec] = std::from_chars(first, last, n);
  if (ec != std::errc{} || ptr != last || first == last) throw Error("RESP: a malformed length line");
  return n;
}

// The end of the value that starts at `pos`, or kIncomplete.
std::size_t value_end(std::string_view bytes, std::size_t pos, int depth) {
  if (depth > 64) throw Error("RESP: nested too deeply");
  if (pos >= bytes.size()) return kIncomplete;
  const std::size_t line_end = bytes.find("\r\n", pos);
  switch (bytes[pos]) {
    case '+': case '-': case ':': case '_': case ',': case '#': case '(':
      return line_end == kIncomplete ? kIncomplete : line_end + 2;
    case '$': case '=': case '!': {
      if (line_end == kIncomplete) return kIncomplete;
      const std::int64_t len = header_number(bytes, pos, line_end);
      if (len < 0) return line_end + 2;  // a nil bulk string
      const std::size_t end = line_end + 2 + static_cast<std::size_t>(len) + 2;
      if (end > bytes.size()) return kIncomplete;
      if (bytes.substr(end - 2, 2) != "\r\n") throw Error("RESP: a bulk string without its CRLF");
      return end;
    }
    case '*': case '~': case '>': case '%': case '|': {
      if (line_end == kIncomplete) return kIncomplete;
      std::int64_t n = header_number(bytes, pos, line_end);
      if (n < 0) return line_end + 2;  // a nil array
      if (bytes[pos] == '%' || bytes[pos] == '|') n *= 2;  // maps and attributes: key, value pairs
      std::size_t at = line_end + 2;
      for (std::int64_t i = 0; i < n; ++i) {
        at = value_end(bytes, at, depth + 1);
        if (at == kIncomplete) return kIncomplete;
      }
      // An attribute precedes the value it annotates: both make one message.
      return bytes[pos] == '|' ? value_end(bytes, at, depth + 1) : at;
    }
    default: {
      // An inline command ("PING\r\n"), as redis-cli or telnet send them.
      if (depth > 0) throw Error("RESP: an unknown type byte inside an aggregate");
      const std::size_t nl = bytes.find('\n', pos);
      return nl == kIncomplete ? kIncomplete : nl + 1;
    }
  }
}

}  // namespace

std::optional<std::size_t> frame_length(std::string_view bytes) {
  const std::size_t end = value_end(bytes, 0, 0);
  if (end == kIncomplete) return std::nullopt;
  return end;
}

}  // namespace locksim::live::resp
