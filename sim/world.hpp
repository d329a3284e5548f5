// The simulation world: true time, the event queue, the processes, the
// network, the random streams and the trace. It owns everything and is passed
// explicitly; nothing in locksim is global.
//
// Its parts, one per header: the event queue (event_queue.hpp), the
// processes (process.hpp), the network (network.hpp); the waits a process's
// coroutines use are wakeup.hpp and alarm.hpp.
#pragma once

#include <cassert>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/digest.hpp"
#include "sim/event_queue.hpp"
#include "sim/message.hpp"
#include "sim/network.hpp"
#include "sim/process.hpp"
#include "sim/rng.hpp"
#include "sim/time.hpp"
#include "sim/trace.hpp"

namespace locksim {

class World {
 public:
  explicit World(std::uint64_t seed);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  Instant now() const { return now_; }
  std::uint64_t seed() const { return seed_; }
  Trace& trace() { return trace_; }
  const Trace& trace() const { return trace_; }
  Network& network() { return network_; }
  // A named child of the run's root random stream.
  Rng fork_rng(std::string_view name) const { return root_rng_.fork(name); }
  // The same for the name that is the parts one after the other, without building it.
  Rng fork_rng_parts(std::initializer_list<std::string_view> parts) const { return root_rng_.fork_parts(parts); }

  template <typename P, typename... Args>
  P& add(Args&&... args) {
    auto p = std::make_unique<P>(*this, std::forward<Args>(args)...);
    P& ref = *p;
    processes_.push_back(std::move(p));
    return ref;
  }
  Process& process(ProcId id) { return *processes_.at(id); }
  std::size_t process_count() const { return processes_.size(); }
  std::optional<ProcId> find(std::string_view name) const { return trace_.find(name); }

  // Run `action` at `at` (not addressed to any process: faults, the engine).
  void at(Instant at, std::function<void()> action);

  // Compact timers: a timer set earlier than the process's queued timer
  // event moves that event in place instead of leaving it behind, stale, to
  // be popped for nothing. The same events in the same order (the moved
  // event takes the sequence number a new one would), fewer queue events,
  // a smaller queue. Off: the queue holds the stale events, as digest()
  // (explore --exhaustive's states) has always seen it. Set before the run.
  void set_compact_timers(bool on) { compact_timers_ = on; }
  // A lean world (explore's random runs, which read only their verdict):
  // compact timers, no trace hash, no message fingerprints.
  void set_lean(bool lean);

  // Run until the queue is empty, `end` is reached, or `max_events` have run.
  // Returns false if the event budget ran out first.
  bool run_until(Instant end, std::uint64_t max_events = ~std::uint64_t{0});
  std::uint64_t events_run() const { return events_run_; }
  // Messages that reached a running destination (each one a `delivered` event).
  std::uint64_t messages_delivered() const { return delivered_; }
  std::size_t pending_events() const { return queue_.size(); }
  // Fold the world's state into `d`: the time, every process (its kernel
  // state and its model's digest()), the pending events and the messages
  // in flight, the partitions and link rules. Coroutine frames are not
  // visible: two states that agree on all of this but differ in a local
  // variable of a process's code fold alike (the timers and messages that
  // variable will cause usually tell them apart). Messages in flight fold
  // their content fingerprint, taken only while the trace is hashing.
  void digest(Digest& d) const;

  // Faults, applied now.
  void pause(ProcId p, Duration for_how_long);
  // A paused process resumes now, its pause cut short (explore's liveness phase).
  void end_pause(ProcId p);
  void crash(ProcId p);
  void restart(ProcId p);
  void clock_jump(ProcId p, Duration by);
  void set_drift_ppb(ProcId p, std::int64_t ppb);

  // Kernel plumbing for Process and Network.
  void schedule(Event e);
  // schedule() of the event with these fields, written where it is queued
  // (EventQueue::emplace): the hot paths' form.
  void schedule(Instant at, ProcId pid, std::uint32_t epoch, Event::Kind kind, std::uint64_t arg);
  // The sender of request `m` has its call refused one network delay from now.
  void refuse_later(const Message& m);
  // A free slot for a message in flight; its body, to build in place.
  std::uint64_t new_message_slot();
  Payload& message_body(std::uint64_t slot) { return messages_[slot].body; }  // stays put
  // A slot taken and never sent (an awaiter destroyed before it was awaited).
  void free_message_slot(std::uint64_t slot) { free_messages_.push_back(slot); }
  void note_world(Ev kind, std::string detail);

 private:
  void dispatch(Event& e);

  std::uint64_t seed_;
  Rng root_rng_;
  Instant now_ = Instant::zero();
  EventQueue queue_;
  Trace trace_;
  Network network_;
  std::vector<std::unique_ptr<Process>> processes_;
  // Messages in flight, by slot, in chunks that never move (delivery reads
  // one in place while sending more). A deque did that too, but its nodes
  // held two messages each and every look-up divided (a profile showed it).
  class MessageSlots {
   public:
    Message& operator[](std::uint64_t slot) { return chunks_[slot / kChunk][slot % kChunk]; }
    const Message& operator[](std::uint64_t slot) const { return chunks_[slot / kChunk][slot % kChunk]; }
    std::uint64_t size() const { return size_; }
    void emplace_back() {
      if (size_ % kChunk == 0) chunks_.push_back(std::make_unique<Message[]>(kChunk));
      ++size_;
    }

   private:
    static constexpr std::uint64_t kChunk = 8;
    std::vector<std::unique_ptr<Message[]>> chunks_;
    std::uint64_t size_ = 0;
  };
  MessageSlots messages_;

  std::vector<std::uint64_t> free_messages_;
  std::vector<std::function<void()>> actions_;
  std::vector<std::uint64_t> free_actions_;
  std::uint64_t events_run_ = 0;
  std::uint64_t delivered_ = 0;
  bool compact_timers_ = false;
  friend class Process;
  friend class Network;
};

// Inline: every message sent, timer armed and coroutine resumed comes
// through here, from the network's and the processes' own files.
inline void World::schedule(Instant at, ProcId pid, std::uint32_t epoch, Event::Kind kind, std::uint64_t arg) {
  assert(at >= now_ && "an event in the past");
  queue_.emplace(at, queue_.next_seq(), arg, pid, epoch, kind);
}

template <typename Body>
std::uint64_t Network::send(ProcId from, ProcId to, std::uint64_t reply_to, Body&& body) {
  const std::uint64_t slot = world_.new_message_slot();
  world_.message_body(slot) = std::forward<Body>(body);
  return send_stored(from, to, reply_to, slot);
}

template <typename Body>
void Process::reply(const Message& request, Body&& body) {
  world_.network().send(id_, request.from, request.id, std::forward<Body>(body));
}

}  // namespace locksim
