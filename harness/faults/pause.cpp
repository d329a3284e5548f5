// pause: a stop-the-world pause of one process (a GC pause, a VM stall).
#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"target", "duration"};

void parse(const FaultReader& in, FaultSpec& f) {
  f.target = in.process("target", true);
  f.duration = in.duration("duration", true, FaultReader::Positive);
}

void apply(FaultContext& ctx, const FaultSpec& f) { ctx.world.pause(ctx.id(f.target), *f.duration); }

void write(FaultWriter& out, const FaultSpec& f) {
  out.string("target", f.target);
  out.duration("duration", *f.duration);
}

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultPause).name("who", f.target).duration("d", *f.duration); }

void draw(FaultDraw& d, std::vector<FaultSpec>& out) {
  FaultSpec& f = out.back();
  f.target = d.target(d.rng.chance(0.7) ? d.clients : d.nodes);
  f.duration = d.length(d.max_pause, f.target);
}

void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  std::vector<std::string> targets = c.everyone;  // the storage too: it holds a request back
  for (const std::string& t : targets)
    for (Duration d : c.lengths) {
      FaultSpec f;
      f.kind = FaultKind::Pause;
      f.target = t;
      f.duration = d;
      out.push_back({f});
    }
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.pause(f.target, *f.duration); }

// The live storage runs inside locksim (live/live_run.cpp): there is no process to stop.
std::optional<Phrase> live_refusal(const Scenario& s, const FaultSpec& f) {
  if (f.target == s.storage.name) return Phrase(W::LiveRefusedStorageFault);
  return std::nullopt;
}

}  // namespace

constinit const FaultKindInfo kPauseFault{
    .kind = FaultKind::Pause,
    .name = "pause",
    .help = "stop-the-world pause of target for duration: nothing runs, timers and messages wait",
    .keys = kKeys,
    .example = R"(target = "client1"
duration = "2s")",
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
