#include "harness/state_fingerprint.hpp"

namespace locksim {

void StateFingerprint::observe(const TraceEvent& e) {
  if (e.process == kNoProc) return;
  switch (e.kind) {
    case Ev::Sent: case Ev::Delivered: case Ev::Dropped: case Ev::Command: case Ev::Fault:
    case Ev::Paused: case Ev::Resumed: case Ev::ClockJumped: case Ev::ClockDrift:
    case Ev::Expired: case Ev::KeyDeleted: case Ev::Promoted: case Ev::Holder:
    case Ev::StorageRead: case Ev::StorageWrite: case Ev::StorageReject:
    case Ev::Retrying:  // a client between tries is still acquiring: the phase it was in
      return;  // the world's state, or not a step of a client's lock
    default: break;
  }
  if (clients_.size() <= e.process) clients_.resize(e.process + 1);
  Phase& p = clients_[e.process];
  p.last = e.kind;
  if (e.kind == Ev::Acquired) {
    p.token = e.token;
    p.valid_until = e.value;
    p.value = e.key;
  }
  if (e.kind == Ev::Read) p.read = e.value;
}

std::uint64_t StateFingerprint::value(const World& world, const FaultEngine& faults) const {
  Digest d;
  world.digest(d);
  faults.digest(d);
  for (const Phase& p : clients_) {
    d.add(static_cast<std::uint64_t>(p.last));
    d.add(p.token);
    d.add(p.valid_until);
    d.add(p.value);
    d.add(p.read);
  }
  return d.value();
}

}  // namespace locksim
