// WAIT: a client blocks until enough replicas acknowledged its writes (the
// replies the master counts, REPLCONF GETACK and ACK, and the timeout).
#include "sim/servers/redis/node.hpp"

namespace locksim {

using redis::Op;
using redis::Reply;
using redis::Request;

// WAIT numreplicas timeout (redis 7.0.15 replication.c:3461-3498): on a
// replica an error; if enough replicas already acknowledged the client's
// woff, the count at once; else the client blocks and the master asks every
// replica for an ACK (REPLCONF GETACK, sent in beforeSleep, server.c:1634-1636,
// here in the replication stream behind the changes before it).
void RedisNode::wait_command(const Message& m, const Request& req) {
  if (is_replica()) {
    Reply r = Reply::error("ERR WAIT cannot be used with replica instances.");
    note_command(req, r, m.from, m.content);
    reply(m, std::move(r));
    return;
  }
  const auto woff = client_woff_.find(m.from);
  const std::int64_t offset = woff == client_woff_.end() ? 0 : woff->second;
  const std::int64_t acks = count_acks(offset);
  if (acks >= req.offset) {
    Reply r = Reply::of(acks);
    note_command(req, r, m.from, m.content);
    reply(m, std::move(r));
    return;
  }
  const std::uint64_t serial = ++ack_serial_;
  ack_waiters_.push_back({m, offset, req.offset, serial});
  // Recorded whether or not the trace keeps words (it once was only when it
  // did: the trace hash then depended on what was kept).
  TraceEvent blocks{.peer = m.from, .content = m.content};
  if (detailed())
    blocks.detail = describe(req) + " -> blocks until " + std::to_string(req.offset) + " replica(s) acknowledge offset " +
                    std::to_string(offset);
  note(Ev::Command, std::move(blocks));
  for (const Replica& replica : replicas_) {
    Request getack;
    getack.op = Op::ReplconfGetack;
    getack.replicated = true;
    spawn(ship(replica.id, std::move(getack), replica.lag.draw(rng())));
  }
  if (!req.px.is_zero()) spawn(wait_timeout(serial, req.px));  // timeout 0: block forever
}

std::int64_t RedisNode::count_acks(std::int64_t offset) const {
  std::int64_t n = 0;
  for (const Replica& r : replicas_)
    if (r.ack_offset >= offset) ++n;
  return n;
}

// REPLCONF ACK: the replica's acknowledged offset, then the blocked clients
// that now have enough (processClientsWaitingReplicas, replication.c:3509-3545).
void RedisNode::replconf_ack(ProcId replica, std::int64_t offset) {
  for (Replica& r : replicas_)
    if (r.id == replica && offset > r.ack_offset) r.ack_offset = offset;
  for (std::size_t i = 0; i < ack_waiters_.size();) {
    const std::int64_t acks = count_acks(ack_waiters_[i].offset);
    if (acks >= ack_waiters_[i].numreplicas) answer_wait(i, acks);
    else ++i;
  }
}

void RedisNode::answer_wait(std::size_t waiter, std::int64_t acks) {
  const AckWaiter w = std::move(ack_waiters_[waiter]);
  ack_waiters_.erase(ack_waiters_.begin() + static_cast<std::ptrdiff_t>(waiter));
  Reply r = Reply::of(acks);
  note_command(std::get<Request>(w.request.body), r, w.request.from, w.request.content);
  reply(w.request, std::move(r));
}

// The timeout: the client is unblocked with however many replicas have
// acknowledged by then (replyToBlockedClientTimedOut, blocked.c).
Task<void> RedisNode::wait_timeout(std::uint64_t serial, Duration timeout) {
  co_await sleep(timeout);
  for (std::size_t i = 0; i < ack_waiters_.size(); ++i)
    if (ack_waiters_[i].serial == serial) {
      answer_wait(i, count_acks(ack_waiters_[i].offset));
      co_return;
    }
}

}  // namespace locksim
