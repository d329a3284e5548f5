// What travels over the simulated network: requests and replies of the
// simulated servers, one protocol per header (sim/protocol/), and one
// variant of them all, so the trace can describe every message.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

#include "sim/proc_id.hpp"
#include "sim/protocol/coord.hpp"
#include "sim/protocol/redis.hpp"
#include "sim/protocol/storage.hpp"

namespace locksim {

using Payload = std::variant<redis::Request, redis::Reply, storage::Request, storage::Reply, coord::Request,
                             coord::Reply, coord::Notify>;

// body.emplace<Body>() of a default Body, to fill in, without the zero-fill
// first: emplace<Body>() value-initializes, and for an aggregate such as
// redis::Request (184 bytes) g++ 12 clears it with `rep stos`, whose start-up
// costs more than writing the fields (a tenth of Redlock's try in
// a profile). Default-initialized instead, then moved into place.
template <typename Body>
Body& emplace_default(Payload& body) {
  struct Default {
    operator Body() const {
      Body b;
      return b;
    }
  };
  return body.emplace<Body>(Default{});
}

std::string describe(const Payload& p);

// A 64-bit fingerprint of a message's content, for the trace hash: cheap, and
// it changes whenever describe() would.
std::uint64_t fingerprint(const Payload& p);
std::uint64_t fingerprint(const redis::Request& r);
std::uint64_t fingerprint(const redis::Reply& r);

// Where the outcome of a call arrives: the reply, or null (it timed out on
// the caller's monotonic clock, or its destination refused it). The reply is
// the message's own body, valid during the call and the sink's to move from:
// it is not copied on its way. A sink is called at most once per
// call, never from inside the call that started it, and not at all once the
// call is cancelled. `tag` is the caller's own (a fan-out's index, say).
// Owned by the caller: it must outlive its pending calls.
class ReplySink {
 public:
  virtual void on_reply(std::uint32_t tag, Payload* reply) = 0;

 protected:
  ~ReplySink() = default;
};

struct Message {
  std::uint64_t id = 0;
  std::uint64_t reply_to = 0;  // the request's id, for replies; 0 for requests
  ProcId from = kNoProc;
  ProcId to = kNoProc;
  Payload body;
  std::uint64_t content = 0;  // fingerprint(body), taken once when it is sent
};

}  // namespace locksim
