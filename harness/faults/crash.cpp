// crash: a process crashes; its coroutines are destroyed and its volatile state is lost.
#include "harness/faults/kind.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"target"};

void parse(const FaultReader& in, FaultSpec& f) { f.target = in.process("target", true); }

void apply(FaultContext& ctx, const FaultSpec& f) {
  ctx.crashed_at[ctx.id(f.target)] = ctx.world.now();
  ctx.world.crash(ctx.id(f.target));
}

void write(FaultWriter& out, const FaultSpec& f) { out.string("target", f.target); }

std::string describe(const FaultSpec& f) { return f.target + " crashes"; }

void draw(FaultDraw& d, FaultSpec f, std::vector<FaultSpec>& out) {
  f.target = d.rng.chance(0.5) ? pick(d.rng, d.clients) : pick(d.rng, d.nodes);
  out.push_back(f);
  if (d.rng.chance(0.7)) {  // and comes back, with or without its keys
    FaultSpec r;
    r.kind = FaultKind::Restart;
    r.target = f.target;
    r.at = *f.at + d.rng.between(Duration::ms(1), d.max_outage);
    out.push_back(r);
  }
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
};

}  // namespace locksim
