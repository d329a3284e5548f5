#include "harness/faults/link.hpp"

namespace locksim::link_fault {

void parse(const FaultReader& in, FaultSpec& f) {
  f.from = in.process("from", false);
  f.to = in.process("to", false);
  if (f.from.empty() && f.to.empty()) in.fail("from", "name the link: from = \"...\" and/or to = \"...\"");
  f.duration = in.duration("duration", false, FaultReader::Positive);
  if (auto c = in.integer("count", 1, 1'000'000'000)) f.count = static_cast<int>(*c);
}

LinkRule rule(FaultContext& ctx, const FaultSpec& f) {
  LinkRule r;
  r.from = f.from.empty() ? kNoProc : ctx.id(f.from);
  r.to = f.to.empty() ? kNoProc : ctx.id(f.to);
  r.from_time = ctx.world.now();
  if (f.duration) r.until = ctx.world.now() + *f.duration;
  r.remaining = f.count;
  return r;
}

std::string name(const FaultSpec& f) { return (f.from.empty() ? "*" : f.from) + " -> " + (f.to.empty() ? "*" : f.to); }

void add(FaultContext& ctx, const FaultSpec& f, LinkRule r, std::string what) {
  if (ctx.detailed()) {
    if (f.count != kForever) what += " (at most " + std::to_string(f.count) + ")";
    if (f.duration && r.kind != LinkRule::Kind::Hold) what += " for " + format_duration(*f.duration);
  }
  ctx.world.network().add_rule(std::move(r));
  ctx.world.note_world(Ev::Fault, what);
}

void write(FaultWriter& out, const FaultSpec& f) {
  if (!f.from.empty()) out.string("from", f.from);
  if (!f.to.empty()) out.string("to", f.to);
  if (f.duration) out.duration("duration", *f.duration);
}

void each_link(const FaultChoices& c, const FaultSpec& f, std::vector<FaultChoice>& out) {
  std::vector<std::string> servers = c.nodes;
  servers.push_back(c.storage);
  for (const std::string& client : c.clients)
    for (const std::string& server : servers)
      for (bool outward : {true, false}) {
        FaultSpec g = f;
        g.from = outward ? client : server;
        g.to = outward ? server : client;
        out.push_back({g});
      }
}

void draw(FaultDraw& d, FaultSpec& f) {
  f.from = d.target(d.clients);
  f.to = d.target(d.servers);
  if (d.rng.chance(0.5)) std::swap(f.from, f.to);
  f.duration = d.length(d.max_outage);
}

}  // namespace locksim::link_fault
