// restart: a crashed process starts again.
#include <algorithm>

#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"target"};

void parse(const FaultReader& in, FaultSpec& f) {
  f.target = in.process("target", true);
  const auto& earlier = in.scenario().faults;
  if (std::none_of(earlier.begin(), earlier.end(), [&](const FaultSpec& e) { return undoes(f, e); }))
    in.fail("target", "restart of " + f.target + ", which no earlier fault crashes");
}

void apply(FaultContext& ctx, const FaultSpec& f) {
  // A node with restart_delay comes back no sooner than that after its crash
  // (the Redlock page's "delayed restart").
  const ProcId p = ctx.id(f.target);
  Instant when = ctx.world.now();
  for (const NodeConfig& n : ctx.scenario.nodes)
    if (n.name == f.target && ctx.crashed_at.count(p)) when = max(when, ctx.crashed_at[p] + n.restart_delay);
  World& world = ctx.world;
  world.at(when, [&world, p] { world.restart(p); });
}

void write(FaultWriter& out, const FaultSpec& f) { out.string("target", f.target); }

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultRestart).name("who", f.target); }

}  // namespace

// Not drawn on its own: explore's crashes bring their restarts (crash.cpp).
constinit const FaultKindInfo kRestartFault{
    .kind = FaultKind::Restart,
    .name = "restart",
    .help = "a crashed target starts again (a node's restart_delay holds it down longer)",
    .keys = kKeys,
    .example = R"(target = "client2")",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .undoes = FaultKind::Crash,
};

}  // namespace locksim
