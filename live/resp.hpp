// RESP, the Redis wire protocol, for LIVE mode: the simulator's
// redis::Request as the bytes a real redis-server (or redis-sentinel) takes,
// and what it sends back as the redis::Reply the simulator would have given.
//
// Every op's mapping is one entry of one table (resp.cpp, kOps): the command
// (or EVAL script) it becomes and how its reply reads. Adding an op, or a
// field to redis::Request, is one entry there. The bytes themselves are made
// and parsed by hiredis (redisFormatCommandArgv, redisReader).
//
// Assumes RESP2 (no HELLO 3): hiredis 0.14 reads nothing else.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "live/common.hpp"
#include "sim/message.hpp"

struct redisReader;

namespace locksim::live::resp {

// One RESP value, as the server sent it.
struct Value {
  enum class Type : std::uint8_t { Nil, Status, Error, Int, Bulk, Array };
  Type type = Type::Nil;
  std::int64_t integer = 0;
  std::string str;              // Status, Error, Bulk
  std::vector<Value> elements;  // Array
};

// "nil", "+OK", "-ERR ...", ":5", "\"v\"", "[...]": for messages and test failures.
std::string describe(const Value& v);

// One command as RESP bytes (an array of bulk strings).
std::string encode(const std::vector<std::string>& argv);

// How node names in requests and replies map to addresses: REPLICAOF names
// its new master, a sentinel answers with an address. Unset: REPLICAOF cannot
// be encoded, and a sentinel's answer reads as "host:port".
struct Names {
  std::function<std::optional<Endpoint>(std::string_view name)> address_of;
  std::function<std::optional<std::string>(const Endpoint&)> name_at;
};

// The commands a request becomes, in order (EVAL with its script for the
// scripted ops). A no_reply request is preceded by CLIENT REPLY SKIP.
std::vector<std::vector<std::string>> commands_of(const redis::Request& req, const Names& names = {});
// Those commands as bytes, ready to write to a connection.
std::string encode(const redis::Request& req, const Names& names = {});
// How many replies the server sends for it: 1, or 0 for a no_reply request.
int replies_expected(const redis::Request& req);
// The reply to `req`, as the simulator's RedisNode would give it: a server
// error is Reply::error(message) whatever the op. Throws Error on a reply of
// a shape the op cannot have (a bug, here or in a script).
redis::Reply decode(const redis::Request& req, const Value& v, const Names& names = {});
// On a subscribed connection: a published message as the simulator pushes it
// (a Str reply carrying the payload); nullopt for anything else (the
// subscribe confirmations, pongs).
std::optional<redis::Reply> push_of(const Value& v);

// The EVAL script of a scripted op, empty for the others (for documentation and tests).
std::string_view script_of(redis::Op op);
// The op's name in errors and logs: "GET", "EVAL compare-and-delete", ...
std::string_view name_of(redis::Op op);

// An incremental reply parser (hiredis's redisReader): feed it bytes as they
// arrive, take the complete values out in order.
class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(Decoder&& other) noexcept;
  Decoder& operator=(Decoder&& other) noexcept;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  void feed(std::string_view bytes);
  // The next complete value, or nullopt until more bytes arrive. Throws Error
  // on a protocol error (the connection is then useless: close it).
  std::optional<Value> next();

 private:
  redisReader* reader_ = nullptr;
};

// The length of the first complete RESP message in `bytes` (a reply, or a
// command: an array of bulk strings or an inline command line), or nullopt
// if it is not all there yet. Throws Error when the bytes are not RESP. For
// the proxy, which must cut a stream into messages without parsing them.
std::optional<std::size_t> frame_length(std::string_view bytes);

}  // namespace locksim::live::resp
