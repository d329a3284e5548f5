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

void live(LiveFaultTarget& to, const FaultSpec& f) { to.restart(f.target); }

// A live client is a coroutine of locksim's, or an external library's
// process: neither comes back from a crash as a restarted program would.
std::optional<Phrase> live_refusal(const Scenario& s, const FaultSpec& f) {
  for (const ClientConfig& c : s.clients)
    if (c.name == f.target) return Phrase(W::LiveRefusedClientRestart);
  return std::nullopt;
}

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
    .live = live,
    .live_refusal = live_refusal,
};

}  // namespace locksim
