// heal: every partition ends.
#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

void parse(const FaultReader&, FaultSpec&) {}

void apply(FaultContext& ctx, const FaultSpec&) {
  ctx.world.network().heal();
  ctx.world.note_world(Ev::Fault, "heal: every partition ends");
}

void write(FaultWriter&, const FaultSpec&) {}

Phrase describe(const FaultSpec&) { return Phrase(W::FaultHeal); }


void live(LiveFaultTarget& to, const FaultSpec&) { to.heal(); }

}  // namespace

// Not drawn: explore's partitions end after their duration.
constinit const FaultKindInfo kHealFault{
    .kind = FaultKind::Heal,
    .name = "heal",
    .help = "every partition ends",
    .keys = {},
    .example = "",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .live = live,
};

}  // namespace locksim
