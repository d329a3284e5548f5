// crash: a process crashes; its coroutines are destroyed and its volatile state is lost.
#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"target"};

void parse(const FaultReader& in, FaultSpec& f) { f.target = in.process("target", true); }

void apply(FaultContext& ctx, const FaultSpec& f) {
  ctx.crashed_at[ctx.id(f.target)] = ctx.world.now();
  ctx.world.crash(ctx.id(f.target));
}

void write(FaultWriter& out, const FaultSpec& f) { out.string("target", f.target); }

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultCrash).name("who", f.target); }

void draw(FaultDraw& d, std::vector<FaultSpec>& out) {
  FaultSpec& crash = out.back();
  crash.target = d.target(d.rng.chance(0.5) ? d.clients : d.nodes);
  if (d.rng.chance(0.7)) {  // and comes back, with or without its keys
    FaultSpec r;
    r.kind = FaultKind::Restart;
    r.target = crash.target;
    if (crash.at) {
      // Within the run: a restart after its end would make the file unreadable.
      const Duration room = d.base.duration - *crash.at - Duration::ms(1);
      r.at = *crash.at + d.length(min(d.max_outage, room), crash.target);
    } else {  // on the crash's event, later
      r.on_process = crash.on_process;
      r.on_event = crash.on_event;
      r.on_occurrence = crash.on_occurrence;
      r.after = crash.after + d.length(d.max_outage, crash.target);
    }
    out.push_back(std::move(r));  // `crash` is not read after this
  }
}

// Down for good, or back after each length.
void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  std::vector<std::string> targets = c.clients;
  targets.insert(targets.end(), c.nodes.begin(), c.nodes.end());
  for (const std::string& t : targets) {
    FaultSpec crash;
    crash.kind = FaultKind::Crash;
    crash.target = t;
    out.push_back({crash});
    for (Duration d : c.lengths) {
      FaultSpec restart;
      restart.kind = FaultKind::Restart;
      restart.target = t;
      restart.after = d;
      out.push_back({crash, restart});
    }
  }
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.crash(f.target); }

// The live storage runs inside locksim (live/live_run.cpp): there is no process to stop.
std::optional<Phrase> live_refusal(const Scenario& s, const FaultSpec& f) {
  if (f.target == s.storage.name) return Phrase(W::LiveRefusedStorageFault);
  return std::nullopt;
}

}  // namespace

constinit const FaultKindInfo kCrashFault{
    .kind = FaultKind::Crash,
    .name = "crash",
    .help = "target crashes: its coroutines are destroyed, volatile state is lost",
    .keys = kKeys,
    .example = R"(target = "client2")",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .draw = draw,
    .choices = choices,
    .live = live,
    .live_refusal = live_refusal,
};

}  // namespace locksim
