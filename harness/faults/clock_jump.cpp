// clock-jump: a process's wall clock steps forward or back (an NTP step, an operator).
#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"target", "by"};

void parse(const FaultReader& in, FaultSpec& f) {
  f.target = in.process("target", true);
  f.by = in.duration("by", true, FaultReader::NonZero).value();
}

void apply(FaultContext& ctx, const FaultSpec& f) { ctx.world.clock_jump(ctx.id(f.target), f.by); }

void write(FaultWriter& out, const FaultSpec& f) {
  out.string("target", f.target);
  // Not ("+" or "") + format_duration(...): a g++ 12 -Wrestrict false positive.
  std::string by = f.by > Duration::zero() ? "+" : "";
  out.string("by", by += format_duration(f.by));
}

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultJump).name("who", f.target).duration("by", f.by); }

void draw(FaultDraw& d, std::vector<FaultSpec>& out) {
  FaultSpec& f = out.back();
  f.target = d.target(d.rng.chance(0.7) ? d.nodes : d.clients);
  const bool back = d.rng.chance(0.5);
  f.by = d.length(d.max_jump);
  if (back) f.by = -f.by;
}

void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  std::vector<std::string> targets = c.nodes;
  targets.insert(targets.end(), c.clients.begin(), c.clients.end());
  for (const std::string& t : targets)
    for (Duration d : c.lengths)
      for (int sign : {1, -1}) {
        FaultSpec f;
        f.kind = FaultKind::ClockJump;
        f.target = t;
        f.by = d * sign;
        out.push_back({f});
      }
}

// The jump's size, either way; never zero (the loader refuses a zero jump).
Duration size(const FaultSpec& f) { return f.by < Duration::zero() ? -f.by : f.by; }
void resize(FaultSpec& f, Duration size) {
  size = max(size, Duration::ms(1));
  f.by = f.by < Duration::zero() ? -size : size;
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.clock_jump(f.target, f.by); }

}  // namespace

constinit const FaultKindInfo kClockJumpFault{
    .kind = FaultKind::ClockJump,
    .name = "clock-jump",
    .help = "target's wall clock steps by `by` (\"+15s\", \"-3s\"); monotonic clocks never jump",
    .keys = kKeys,
    .example = R"(target = "redis1"
by = "-3s")",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .draw = draw,
    .choices = choices,
    .magnitude = Magnitude{.size = size, .resize = resize, .rounds = true},
    .live = live,
};

}  // namespace locksim
