// failover: the sentinel promotes a master's replica now (SENTINEL FAILOVER).
#include <algorithm>

#include "harness/faults/kind.hpp"
#include "sim/servers/redis/sentinel.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"target"};

bool has_replica(const Scenario& s, const std::string& master) {
  return std::any_of(s.nodes.begin(), s.nodes.end(), [&](const NodeConfig& n) { return n.replica_of == master; });
}

void parse(const FaultReader& in, FaultSpec& f) {
  f.target = in.process("target", true);
  const Scenario& s = in.scenario();
  const bool replica = has_replica(s, f.target);
  if (!s.sentinel.present || !replica)
    in.fail("target", "a failover needs a [sentinel] and a master with a replica; " + f.target + " has " +
                          (replica ? "no [sentinel] watching it" : "no replica (replica_of = \"" + f.target + "\")"));
}

void apply(FaultContext& ctx, const FaultSpec& f) {
  // The sentinel is the last process the builder adds.
  auto& sentinel = dynamic_cast<Sentinel&>(ctx.world.process(*ctx.world.find(ctx.scenario.sentinel.process_name(0))));
  sentinel.force_failover(f.target);
}

void write(FaultWriter& out, const FaultSpec& f) { out.string("target", f.target); }

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultFailover).name("who", f.target); }

void draw(FaultDraw& d, std::vector<FaultSpec>& out) { out.back().target = pick(d.rng, d.masters_with_replicas); }

void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  for (const std::string& m : c.masters_with_replicas) {
    FaultSpec f;
    f.kind = FaultKind::Failover;
    f.target = m;
    out.push_back({f});
  }
}

// A sentinel to ask, and a master with a replica for it to promote.
bool offered(const Scenario& base) {
  return base.sentinel.present &&
         std::any_of(base.nodes.begin(), base.nodes.end(), [](const NodeConfig& n) { return !n.replica_of.empty(); });
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.failover(f.target); }

}  // namespace

constinit const FaultKindInfo kFailoverFault{
    .kind = FaultKind::Failover,
    .name = "failover",
    .help = "the [sentinel] promotes the target master's replica now (SENTINEL FAILOVER)",
    .keys = kKeys,
    .example = R"(target = "redis1")",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .draw = draw,
    .offered = offered,
    .choices = choices,
    .live = live,
};

}  // namespace locksim
