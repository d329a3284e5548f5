// What a Redis node did for an external client, seen at the node: the
// judge's ground truth for who holds the lock, never the client's account.
//
// An observer sits between a client's fault proxy and the node (client ->
// proxy -> observer -> redis-server), so it sees the requests that reached
// the node and the replies as the node sent them, before the network's
// faults act on them. A request that names the lock's key (as an argument:
// SET, EVALSHA with the key in KEYS, PEXPIRE, ...) goes to the node wrapped
// in a transaction of its own,
//   MULTI; <the request>; GET <key>; PTTL <key>; EXEC
// and the client gets back the request's own reply alone (its error at once
// when the node refuses to queue it). The transaction runs alone on the node,
// so GET and PTTL read exactly what the request left: whose value the key
// holds (the client whose requests carried that value as an argument: a
// library sends its lock value with every command about the lock), and until
// when. Any library, any script, nothing assumed about its commands. A
// request that does not name the key, and everything inside the client's own
// MULTI, passes unchanged.
//
// The node's side goes into the trace as the simulator's Redis node records
// it: Delivered, Command (with the owner its key holds after it), Expired or
// KeyDeleted when the key went, Sent. An expiry nobody's command found is
// told by the node's keyspace notification (the run subscribes: on_expired).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "live/client_env.hpp"

namespace locksim::live::external {

// One node's lock key, as the observers of all clients see it.
class NodeKeys {
 public:
  NodeKeys(LiveHub& hub, ProcId node, std::string key, bool clock_moves)
      : hub_(hub), node_(node), key_(std::move(key)), clock_moves_(clock_moves) {}

  ProcId node() const { return node_; }
  const std::string& key() const { return key_; }
  // From now on the trace hears of it (before the run, the clients' own
  // connections and what they leave are known, not told).
  void record() { recording_ = true; }
  bool recording() const { return recording_; }

  // Around `client`'s request (its arguments in `argv`), in one transaction
  // with it: the key held `before` and then holds `value` (nullopt: no key)
  // with `pttl_ms` left (-1: no expiry, -2: no key). Notes Expired or
  // KeyDeleted for an owner that went, and the Command. A key already gone
  // before the request is not this request's removal, whatever this
  // observer last saw: another client's request, whose reply is still on its
  // way, removed it.
  void after(ProcId client, const std::vector<std::string>& argv, const std::optional<std::string>& before,
             const std::optional<std::string>& value, std::int64_t pttl_ms, const std::string& detail);
  // A request that does not touch the key.
  void command(ProcId client, const std::string& detail);
  // The node's keyspace notification: the key expired.
  void expired();
  // The node restarted without its data: nothing is held.
  void forget();

  ProcId holder() const { return holder_; }

 private:
  ProcId owner_of(ProcId client, const std::vector<std::string>& argv, const std::string& value);
  // Whose value `value` is, as far as the requests seen so far tell (kNoProc: nobody's).
  ProcId known_owner(const std::string& value) const;

  LiveHub& hub_;
  ProcId node_;
  std::string key_;
  bool clock_moves_;                   // its wall clock is shimmed: a key may end before its TTL
  bool recording_ = false;
  ProcId holder_ = kNoProc;
  RealClock::time_point due_ = RealClock::time_point::max();
  RealClock::time_point told_{};       // an expiry told at a command: its notification is not told again
  std::map<std::string, ProcId> owners_;  // lock values -> the client that sent them
};

// One message's id on both sides of a (client, node) link, as the
// simulator's Sent and Delivered share one: the client's side is told by the
// proxy's tap (live/external/external_clients.cpp), the node's by the
// observer. Per proxy connection (the observer numbers its relays alike: the
// proxy opens one to it for each connection it accepts, in order):
//   arrived    requests the proxy has from the client, not yet forwarded or dropped;
//   to_server  requests forwarded to the observer, not yet read by it;
//   to_client  replies the observer sent, not yet forwarded or dropped by the proxy.
struct LinkIds {
  struct Queues {
    std::deque<std::uint64_t> arrived, to_server, to_client;
  };
  std::map<std::uint64_t, Queues> connections;
};

// A RESP request or reply in the words of the trace's details: "SET lock v NX
// PX 2000" (a script's text cut short), "+OK", "(error) NOSCRIPT ...".
std::string request_text(std::string_view bytes);
std::string reply_text(std::string_view bytes);

// One (client, node) link's observer: listens on 127.0.0.1; the client's
// proxy forwards to it, and it forwards to the node.
class RedisObserver {
 public:
  RedisObserver(LiveHub& hub, ProcId client, NodeKeys& keys, Endpoint node, LinkIds& ids);
  ~RedisObserver();  // closes every connection
  RedisObserver(const RedisObserver&) = delete;
  RedisObserver& operator=(const RedisObserver&) = delete;

  std::uint16_t port() const;
  // Resets every connection (the node crashed: its clients see it).
  void sever();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace locksim::live::external
