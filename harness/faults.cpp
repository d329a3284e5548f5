#include "harness/faults.hpp"

#include <array>
#include <stdexcept>

namespace locksim {

std::optional<Ev> event_from_name(std::string_view name) {
  // Every kind's name, looked up once (each run's fault engine asks for its triggers').
  static const auto names = [] {
    std::array<std::string_view, static_cast<std::size_t>(kLastEvent) + 1> all;
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = event_name(static_cast<Ev>(i));
    return all;
  }();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<Ev>(i);
  return std::nullopt;
}

bool fault_may_wait_for(Ev e) {
  return e != Ev::Sent && e != Ev::Delivered && e != Ev::Dropped && e != Ev::Command && e != Ev::Fault && e != Ev::Holder &&
         e != Ev::Retrying;
}

ProcId FaultContext::id(const std::string& name) const {
  const auto p = world.find(name);
  if (!p) throw std::logic_error("fault names unknown process " + name);  // the loader checked
  return *p;
}

FaultEngine::FaultEngine(World& world, const Scenario& scenario)
    : ctx_{world, scenario, {}}, applied_(scenario.faults.size(), false) {}

void FaultEngine::arm() {
  for (const FaultSpec& f : ctx_.scenario.faults) {
    if (f.at) {
      ctx_.world.at(Instant::zero() + *f.at, [this, &f] { apply(f); });
    } else {
      const auto ev = event_from_name(f.on_event);
      if (!ev) throw std::logic_error("unknown trigger event " + f.on_event);
      triggers_.push_back({&f, ctx_.id(f.on_process), *ev, 0});
      trigger_kinds_ |= EvSet{*ev};
    }
  }
}

void FaultEngine::on_event(const TraceEvent& e) {
  for (Trigger& t : triggers_) {
    if (t.process != e.process || t.event != e.kind) continue;
    if (++t.seen != t.fault->on_occurrence) continue;
    const FaultSpec* f = t.fault;
    // Scheduled, not applied inline: the process that recorded the event is
    // mid-step; `mark` yields right after, so a zero `after` still lands
    // before that process does anything else.
    ctx_.world.at(ctx_.world.now() + f->after, [this, f] { apply(*f); });
  }
}

void FaultEngine::apply(const FaultSpec& f) {
  applied_[static_cast<std::size_t>(&f - ctx_.scenario.faults.data())] = true;
  if (!healed_) fault_kind(f.kind).apply(ctx_, f);
}

void FaultEngine::digest(Digest& d) const {
  d.add(healed_);
  const auto& faults = ctx_.scenario.faults;
  for (std::size_t i = 0; i < faults.size(); ++i) {
    if (applied_[i]) continue;
    const FaultSpec& f = faults[i];
    d.add(static_cast<std::uint64_t>(i));
    d.add(static_cast<std::uint64_t>(f.kind));
    d.add(f.target);
    d.add(f.duration.value_or(Duration::zero()));
    d.add(f.by);
    d.add(f.drift_ppb);
    d.add(f.from);
    d.add(f.to);
    d.add(f.at.value_or(Duration::zero()));
    d.add(f.after);
  }
  for (const Trigger& t : triggers_) {
    if (applied_[static_cast<std::size_t>(t.fault - faults.data())]) continue;
    d.add(static_cast<std::uint64_t>(t.process));
    d.add(static_cast<std::uint64_t>(t.event));
    d.add(t.fault->on_occurrence - t.seen);
  }
}

std::vector<FaultFate> FaultEngine::fates() const {
  std::vector<FaultFate> out(applied_.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i].applied = applied_[i];
  for (const Trigger& t : triggers_) out[static_cast<std::size_t>(t.fault - ctx_.scenario.faults.data())].seen = t.seen;
  return out;
}

void FaultEngine::heal_all() {
  healed_ = true;
  World& world = ctx_.world;
  world.network().heal();
  world.network().clear_rules();
  for (ProcId p = 0; p < world.process_count(); ++p) {
    if (world.process(p).state() == Process::State::Paused) world.end_pause(p);
    if (world.process(p).state() == Process::State::Down) world.restart(p);
  }
  world.note_world(Ev::Fault, "liveness phase: every fault healed");
}

}  // namespace locksim
