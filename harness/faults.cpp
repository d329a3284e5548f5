#include "harness/faults.hpp"

#include <stdexcept>

#include "sim/sentinel.hpp"

namespace locksim {

std::optional<Ev> event_from_name(std::string_view name) {
  for (int i = 0; i <= static_cast<int>(Ev::Fault); ++i)
    if (event_name(static_cast<Ev>(i)) == name) return static_cast<Ev>(i);
  return std::nullopt;
}

FaultEngine::FaultEngine(World& world, const Scenario& scenario) : world_(world), scenario_(scenario) {}

ProcId FaultEngine::id(const std::string& name) const {
  const auto p = world_.find(name);
  if (!p) throw std::logic_error("fault names unknown process " + name);  // the loader checked
  return *p;
}

void FaultEngine::arm() {
  for (const FaultSpec& f : scenario_.faults) {
    if (f.at) {
      world_.at(Instant::zero() + *f.at, [this, &f] { apply(f); });
    } else {
      const auto ev = event_from_name(f.on_event);
      if (!ev) throw std::logic_error("unknown trigger event " + f.on_event);
      triggers_.push_back({&f, id(f.on_process), *ev, 0});
    }
  }
  if (!triggers_.empty()) world_.trace().add_listener([this](const TraceEvent& e) { on_event(e); });
}

void FaultEngine::on_event(const TraceEvent& e) {
  for (Trigger& t : triggers_) {
    if (t.process != e.process || t.event != e.kind) continue;
    if (++t.seen != t.fault->on_occurrence) continue;
    const FaultSpec* f = t.fault;
    // Scheduled, not applied inline: the process that recorded the event is
    // mid-step; `mark` yields right after, so a zero `after` still lands
    // before that process does anything else.
    world_.at(world_.now() + f->after, [this, f] { apply(*f); });
  }
}

namespace {
std::string names(const World& w, const std::vector<ProcId>& ids) {
  std::string s;
  for (ProcId p : ids) s += (s.empty() ? "" : ", ") + w.trace().name(p);
  return s;
}
}  // namespace

void FaultEngine::apply(const FaultSpec& f) {
  switch (f.kind) {
    case FaultKind::Pause:
      world_.pause(id(f.target), *f.duration);
      break;
    case FaultKind::Crash:
      crashed_at_[id(f.target)] = world_.now();
      world_.crash(id(f.target));
      break;
    case FaultKind::Restart: {
      // A node with restart_delay comes back no sooner than that after its crash
      // (the Redlock page's "delayed restart").
      const ProcId p = id(f.target);
      Instant when = world_.now();
      for (const NodeConfig& n : scenario_.nodes)
        if (n.name == f.target && crashed_at_.count(p)) when = max(when, crashed_at_[p] + n.restart_delay);
      world_.at(when, [this, p] { world_.restart(p); });
      break;
    }
    case FaultKind::ClockJump:
      world_.clock_jump(id(f.target), f.by);
      break;
    case FaultKind::ClockDrift:
      world_.set_drift_ppb(id(f.target), f.drift_ppb);
      break;
    case FaultKind::Partition: {
      std::vector<std::vector<ProcId>> groups;
      std::string label = "partition";
      for (const auto& g : f.groups) {
        groups.emplace_back();
        for (const auto& n : g) groups.back().push_back(id(n));
        label += (groups.size() == 1 ? " [" : (f.one_way ? " -/-> [" : " | [")) + names(world_, groups.back()) + "]";
      }
      const std::uint64_t pid = world_.network().partition(std::move(groups), f.one_way, label);
      world_.note_world(Ev::Fault, label + (f.duration ? " for " + format_duration(*f.duration) : ""));
      if (f.duration)
        world_.at(world_.now() + *f.duration, [this, pid, label] {
          world_.network().heal(pid);
          world_.note_world(Ev::Fault, "healed: " + label);
        });
      break;
    }
    case FaultKind::Failover: {
      // The sentinel is the last process the builder adds.
      auto& sentinel = dynamic_cast<Sentinel&>(world_.process(*world_.find(scenario_.sentinel.name)));
      sentinel.force_failover(f.target);
      break;
    }
    case FaultKind::Heal:
      world_.network().heal();
      world_.note_world(Ev::Fault, "heal: every partition ends");
      break;
    case FaultKind::Delay:
    case FaultKind::Drop: {
      LinkRule r;
      r.from = f.from.empty() ? kNoProc : id(f.from);
      r.to = f.to.empty() ? kNoProc : id(f.to);
      r.from_time = world_.now();
      if (f.duration) r.until = world_.now() + *f.duration;
      r.remaining = f.count;
      std::string link = (f.from.empty() ? "*" : f.from) + " -> " + (f.to.empty() ? "*" : f.to);
      if (f.kind == FaultKind::Drop) {
        r.kind = LinkRule::Kind::Drop;
        r.probability = f.probability;
        r.label = "dropped by a fault on " + link;
      } else if (f.duration && f.by.is_zero()) {
        r.kind = LinkRule::Kind::Hold;
        r.label = "held back on " + link;
      } else {
        r.kind = LinkRule::Kind::ExtraDelay;
        r.extra = f.by;
        r.label = "delayed on " + link;
      }
      std::string what = f.kind == FaultKind::Drop ? "drop messages on " + link
                         : r.kind == LinkRule::Kind::Hold
                             ? "hold back messages on " + link + " until " + format_instant(r.until)
                             : "delay messages on " + link + " by " + format_duration(f.by);
      if (f.count != kForever) what += " (at most " + std::to_string(f.count) + ")";
      if (f.duration && r.kind != LinkRule::Kind::Hold) what += " for " + format_duration(*f.duration);
      world_.network().add_rule(std::move(r));
      world_.note_world(Ev::Fault, what);
      break;
    }
  }
}

}  // namespace locksim
