#include "sim/trace.hpp"

#include <cstdio>

#include "sim/rng.hpp"

namespace locksim {

std::string_view event_name(Ev kind) {
  switch (kind) {
    case Ev::Started: return "started";
    case Ev::Paused: return "paused";
    case Ev::Resumed: return "resumed";
    case Ev::Crashed: return "crashed";
    case Ev::Restarted: return "restarted";
    case Ev::ClockJumped: return "clock-jumped";
    case Ev::ClockDrift: return "clock-drift";
    case Ev::Acquiring: return "acquiring";
    case Ev::Acquired: return "acquired";
    case Ev::AcquireFailed: return "acquire-failed";
    case Ev::OwnerChecked: return "owner-checked";
    case Ev::Read: return "read";
    case Ev::Checked: return "checked";
    case Ev::Lost: return "lost";
    case Ev::Writing: return "writing";
    case Ev::Wrote: return "wrote";
    case Ev::WriteRejected: return "write-rejected";
    case Ev::Releasing: return "releasing";
    case Ev::Released: return "released";
    case Ev::ReleaseFailed: return "release-failed";
    case Ev::JobDone: return "done";
    case Ev::AttemptFailed: return "attempt-failed";
    case Ev::Renewed: return "renewed";
    case Ev::Claiming: return "claiming";
    case Ev::Sent: return "sent";
    case Ev::Delivered: return "delivered";
    case Ev::Dropped: return "dropped";
    case Ev::Command: return "command";
    case Ev::Expired: return "expired";
    case Ev::KeyDeleted: return "key-deleted";
    case Ev::Promoted: return "promoted";
    case Ev::StorageRead: return "storage-read";
    case Ev::StorageWrite: return "storage-write";
    case Ev::StorageReject: return "storage-reject";
    case Ev::Fault: return "fault";
    case Ev::Holder: return "holder";
    case Ev::Notified: return "notified";
  }
  return "?";
}

ProcId Trace::add_process(std::string name, ProcessRole role) {
  if (processes_.empty()) processes_.reserve(8);  // a scenario's few processes, without regrowing
  processes_.push_back({std::move(name), role});
  return static_cast<ProcId>(processes_.size() - 1);
}

const std::string& Trace::name(ProcId p) const {
  static const std::string world = "world";
  return p < processes_.size() ? processes_[p].name : world;
}

std::optional<ProcId> Trace::find(std::string_view name) const {
  for (ProcId i = 0; i < processes_.size(); ++i)
    if (processes_[i].name == name) return i;
  return std::nullopt;
}

std::string Trace::line(const TraceEvent& e) const {
  std::string s = std::to_string(e.at.ns());
  s += ' ';
  s += name(e.process);
  s += ' ';
  s += event_name(e.kind);
  if (e.peer != kNoProc) s += " peer=" + name(e.peer);
  if (e.owner != kNoProc) s += " owner=" + name(e.owner);
  if (e.value != 0) s += " value=" + std::to_string(e.value);
  if (e.token >= 0) s += " token=" + std::to_string(e.token);
  if (e.process != kNoProc) {
    s += " wall=" + std::to_string(e.wall.ns());
    s += " mono=" + std::to_string(e.mono.ns());
  }
  if (!e.key.empty()) s += " key=" + e.key;
  if (!e.detail.empty()) s += " | " + e.detail;
  return s;
}


std::size_t Trace::add_listener(Listener l, Interest reads) {
  listeners_.push_back({std::move(l), reads});
  want_again();
  return listeners_.size() - 1;
}

void Trace::widen_listener(std::size_t id, Interest more) {
  Interest& r = listeners_.at(id).reads;
  // Owned-only stays so for a kind `more` does not name, or names owned-only;
  // a kind new to the listener is as `more` reads it.
  r.owned_only = r.owned_only.without(more.kinds) | (r.owned_only & more.owned_only) | more.owned_only.without(r.kinds);
  r.kinds |= more.kinds;
  r.clocks = r.clocks || more.clocks;
  want_again();
}

void Trace::set_hashing(bool on) {
  hashing_ = on;
  want_again();
}

void Trace::want_again() {
  wanted_ = hashing_ ? EvSet::all() : EvSet{};
  wanted_unowned_ = wanted_;
  clocks_wanted_ = hashing_;
  heard_ = {};
  heard_unowned_ = {};
  for (const Listening& l : listeners_) {
    heard_ |= l.reads.kinds;
    heard_unowned_ |= l.reads.kinds.without(l.reads.owned_only);
    wanted_ |= l.reads.kinds;
    wanted_unowned_ |= l.reads.kinds.without(l.reads.owned_only);
    clocks_wanted_ = clocks_wanted_ || l.reads.clocks;
  }
}

void Trace::record(TraceEvent&& e) {
  e.seq = count_++;
  if (hashing_) hash_event(e);
  for (const Listening& l : listeners_)
    if (l.reads.kinds.has(e.kind) && (e.owner != kNoProc || !l.reads.owned_only.has(e.kind))) l.listener(e);
  if (events_.size() < keep_limit_) events_.push_back(std::move(e));
}

void Trace::hash_event(const TraceEvent& e) {
  hash_ = hash_fields(hash_, e.at, e.process, e.kind, e.peer, e.owner, e.value, e.token, e.wall, e.mono, e.content,
                      e.key);
}

std::string Trace::hash_hex() const {
  if (!hashing_) return {};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash_));
  return buf;
}

}  // namespace locksim
