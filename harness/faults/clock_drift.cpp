// clock-drift: a process's clocks run fast or slow from now on.
#include <cmath>

#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"target", "drift_ppm"};

void parse(const FaultReader& in, FaultSpec& f) {
  f.target = in.process("target", true);
  if (!in.has("drift_ppm")) in.fail("drift_ppm", "missing (it is required)");
  const double ppm = *in.number("drift_ppm");
  if (!(ppm > -1e6 && ppm < 1e9)) in.fail("drift_ppm", "a clock must run forward (more than -1000000 ppm)");
  f.drift_ppb = std::llround(ppm * 1000.0);
}

void apply(FaultContext& ctx, const FaultSpec& f) { ctx.world.set_drift_ppb(ctx.id(f.target), f.drift_ppb); }

void write(FaultWriter& out, const FaultSpec& f) {
  out.string("target", f.target);
  out.ppm("drift_ppm", f.drift_ppb);
}

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultDrift).name("who", f.target).number("ppm", f.drift_ppb / 1000); }

void draw(FaultDraw& d, std::vector<FaultSpec>& out) {
  FaultSpec& f = out.back();
  f.target = d.target(d.rng.chance(0.7) ? d.nodes : d.clients);
  f.drift_ppb = d.rng.between(-d.max_drift_ppm, d.max_drift_ppm) * 1000;
}

// As fast or as slow as explore draws them.
void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  std::vector<std::string> targets = c.nodes;
  targets.insert(targets.end(), c.clients.begin(), c.clients.end());
  for (const std::string& t : targets)
    for (int sign : {1, -1}) {
      FaultSpec f;
      f.kind = FaultKind::ClockDrift;
      f.target = t;
      f.drift_ppb = sign * c.max_drift_ppm * 1000;
      out.push_back({f});
    }
}

// Parts per billion read as nanoseconds, so that the shrinker bisects them
// like a duration (to the millisecond: 1000 ppm), and rounded to whole ppm.
Duration size(const FaultSpec& f) { return Duration::ns(f.drift_ppb < 0 ? -f.drift_ppb : f.drift_ppb); }
void resize(FaultSpec& f, Duration size) {
  const std::int64_t ppb = std::max<std::int64_t>(size.count_ns() / 1000 * 1000, 1000);
  f.drift_ppb = f.drift_ppb < 0 ? -ppb : ppb;
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.clock_drift(f.target, f.drift_ppb); }

}  // namespace

constinit const FaultKindInfo kClockDriftFault{
    .kind = FaultKind::ClockDrift,
    .name = "clock-drift",
    .help = "target's clocks run drift_ppm parts per million fast (or slow, if negative)",
    .keys = kKeys,
    .example = R"(target = "redis1"
drift_ppm = -20)",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .draw = draw,
    .choices = choices,
    .magnitude = Magnitude{.size = size, .resize = resize},
    .live = live,
};

}  // namespace locksim
