#include "sim/world.hpp"

#include <algorithm>
#include <cassert>
#include <utility>

namespace locksim {

World::World(std::uint64_t seed) : seed_(seed), root_rng_(seed), network_(*this) {
  network_.configure({});
  processes_.reserve(8);  // a scenario's few processes, without regrowing (explore builds a world per run)
  queue_.reserve(32);     // and the few events queued at once, likewise
}

void World::set_lean(bool lean) {
  compact_timers_ = lean;
  trace_.set_hashing(!lean);
}

World::~World() {
  // Coroutine frames may refer to processes: destroy them all before any process.
  for (auto& p : processes_) p->destroy_coroutines();
}

void World::schedule(Event e) {
  assert(e.at >= now_ && "an event in the past");
  e.seq = queue_.next_seq();
  queue_.push(e);
}

std::uint64_t World::new_message_slot() {
  if (free_messages_.empty()) {
    messages_.emplace_back();
    return messages_.size() - 1;
  }
  const std::uint64_t slot = free_messages_.back();
  free_messages_.pop_back();
  return slot;
}

void World::at(Instant when, std::function<void()> action) {
  std::uint64_t slot;
  if (!free_actions_.empty()) {
    slot = free_actions_.back();
    free_actions_.pop_back();
    actions_[slot] = std::move(action);
  } else {
    actions_.push_back(std::move(action));
    slot = actions_.size() - 1;
  }
  Event e;
  e.at = max(when, now_);
  e.kind = Event::Kind::Action;
  e.arg = slot;
  schedule(e);
}

void World::refuse_later(const Message& m) {
  Event refuse;
  refuse.at = now_ + network_.config().delay.lo;
  refuse.pid = m.from;
  refuse.epoch = processes_[m.from]->epoch_;
  refuse.kind = Event::Kind::Refuse;
  refuse.arg = m.id;
  schedule(refuse);
}

void World::note_world(Ev kind, std::string detail) {
  TraceEvent e;
  e.at = now_;
  e.kind = kind;
  e.detail = std::move(detail);
  trace_.record(std::move(e));
}

void World::dispatch(Event& e) {
  if (e.pid != kNoProc) {
    Process& p = *processes_[e.pid];
    if (e.epoch != (p.epoch_ & 0xFFFFFF) || p.state_ == Process::State::Down) {
      if (e.kind == Event::Kind::Deliver) {
        const Message& m = messages_[e.arg];  // read in place; its slot is freed below
        if (trace_.wants(Ev::Dropped)) {  // explore's runs: nobody (a retry loop against a crashed node sends many)
          TraceEvent dropped{.peer = m.from, .value = static_cast<std::int64_t>(m.id)};
          if (p.detailed()) dropped.detail = p.state_ == Process::State::Down ? "destination down" : "destination restarted";
          p.note(Ev::Dropped, std::move(dropped));
        } else {
          trace_.skip();
        }
        // The sender's connection is refused (a TCP reset): its call fails one
        // network delay later, unless it gave up first.
        if (m.reply_to == 0) refuse_later(m);
        free_messages_.push_back(e.arg);
      }
      return;
    }
    if (p.state_ == Process::State::Paused) {
      p.held_.push_back(e);
      return;
    }
  }
  switch (e.kind) {
    case Event::Kind::Resume:
      e.handle().resume();
      break;
    case Event::Kind::Timer:
    case Event::Kind::ArmedTimer:
      processes_[e.pid]->fire_timer(e.arg);
      break;
    case Event::Kind::Deliver: {
      Message& m = messages_[e.arg];  // in place: the slot is freed once it has been handled
      Process& p = *processes_[e.pid];
      ++delivered_;
      if (trace_.hash_only(Ev::Delivered)) {
        p.note_hashed(Ev::Delivered, m.from, static_cast<std::int64_t>(m.id), m.content);
      } else if (trace_.wants(Ev::Delivered)) {
        TraceEvent delivered{.peer = m.from, .value = static_cast<std::int64_t>(m.id), .content = m.content};
        if (p.detailed()) delivered.detail = describe(m.body);
        p.note(Ev::Delivered, std::move(delivered));
      } else {
        trace_.skip();
      }
      p.deliver(m);
      free_messages_.push_back(e.arg);
      break;
    }
    case Event::Kind::Refuse:
      processes_[e.pid]->refuse_call(e.arg);
      break;
    case Event::Kind::Action: {
      std::function<void()> action = std::move(actions_[e.arg]);
      free_actions_.push_back(e.arg);
      action();
      break;
    }
  }
}

bool World::run_until(Instant end, std::uint64_t max_events) {
  std::uint64_t budget = max_events;
  // A livelock (processes resuming each other forever without time passing)
  // ends the run as an exhausted budget would.
  constexpr std::uint64_t kMaxAtOneInstant = 10'000'000;
  std::uint64_t at_this_instant = 0;
  while (!queue_.empty() && queue_.top().at <= end) {
    if (budget-- == 0) return false;
    Event e = queue_.pop();
    at_this_instant = e.at == now_ ? at_this_instant + 1 : 0;
    if (at_this_instant > kMaxAtOneInstant) return false;
    now_ = e.at;
    dispatch(e);
    ++events_run_;
  }
  now_ = max(now_, end);
  for (auto& p : processes_)
    if (auto err = p->failed_root()) std::rethrow_exception(err);
  return true;
}

void World::pause(ProcId id, Duration for_how_long) {
  Process& p = process(id);
  if (p.state() == Process::State::Down) return;
  const Instant until = now_ + for_how_long;
  if (p.state() == Process::State::Paused && until <= p.pause_until_) return;
  p.pause_until_ = until;
  const bool was_paused = p.state() == Process::State::Paused;
  p.pause();
  if (!was_paused) p.note(Ev::Paused, {.value = for_how_long.count_ns(), .detail = format_duration(for_how_long)});
  const std::uint32_t epoch = p.epoch();
  at(until, [this, id, epoch, until] {
    Process& q = process(id);
    if (q.epoch() != epoch || q.state() != Process::State::Paused || q.pause_until_ != until) return;
    q.resume();
    q.note(Ev::Resumed);
  });
}

void World::digest(Digest& d) const {
  d.add(now_);
  for (const auto& p : processes_) {
    d.add(static_cast<std::uint64_t>(p->state_));
    d.add(static_cast<std::uint64_t>(p->epoch_));
    if (p->state_ == Process::State::Paused) d.add(p->pause_until_);
    d.add(p->clocks_.wall.read(now_));
    d.add(p->clocks_.mono.read(now_));
    d.add(p->clocks_.mono.drift_ppb());
    d.add(static_cast<std::uint64_t>(p->timers_.size()));
    for (const Process::Timer& t : p->timers_) d.add(t.deadline);
    d.add(static_cast<std::uint64_t>(p->calls_.size()));
    d.add(p->rng_.position());
    for (const Event& e : p->held_) {
      d.add(static_cast<std::uint64_t>(e.kind));
      if (e.kind == Event::Kind::Deliver) d.add(messages_[e.arg].content);
    }
    p->digest(d);
  }
  // The queue as a multiset: its order depends on how it was filled.
  queue_.for_each([&](const Event& e) {
    Digest one;
    one.add(e.at);
    one.add(static_cast<std::uint64_t>(e.pid));
    one.add(static_cast<std::uint64_t>(e.epoch));
    one.add(static_cast<std::uint64_t>(e.kind));
    if (e.kind == Event::Kind::Deliver) one.add(messages_[e.arg].content);
    d.unordered(one.value());
  });
  network_.digest(d);
}

void World::end_pause(ProcId id) {
  Process& p = process(id);
  if (p.state() != Process::State::Paused) return;
  p.pause_until_ = now_;  // the pending resume finds a different deadline and does nothing
  p.resume();
  p.note(Ev::Resumed);
}

void World::crash(ProcId id) {
  Process& p = process(id);
  if (p.state() == Process::State::Down) return;
  p.note(Ev::Crashed);
  p.crash();
}

void World::restart(ProcId id) {
  Process& p = process(id);
  if (p.state() != Process::State::Down) return;
  p.restart();
  p.note(Ev::Restarted);
}

void World::clock_jump(ProcId id, Duration by) {
  Process& p = process(id);
  p.clocks().wall.jump(now_, by);
  p.on_clock_jump();
  p.note(Ev::ClockJumped, {.value = by.count_ns(), .detail = (by >= Duration::zero() ? "+" : "") + format_duration(by)});
}

void World::set_drift_ppb(ProcId id, std::int64_t ppb) {
  Process& p = process(id);
  p.clocks().set_drift_ppb(now_, ppb);
  p.reschedule_timers();
  p.note(Ev::ClockDrift, {.value = ppb});
}

}  // namespace locksim
