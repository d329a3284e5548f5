// partition: no messages between groups of processes, for a while or until a heal.
#include "harness/faults/kind.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"groups", "one_way", "duration"};

void parse(const FaultReader& in, FaultSpec& f) {
  f.groups = in.process_groups("groups");
  if (auto o = in.boolean("one_way")) f.one_way = *o;
  f.duration = in.duration("duration", false, FaultReader::Positive);
}

std::string names(const World& w, const std::vector<ProcId>& ids) {
  std::string s;
  for (ProcId p : ids) s += (s.empty() ? "" : ", ") + w.trace().name(p);
  return s;
}

void apply(FaultContext& ctx, const FaultSpec& f) {
  World& world = ctx.world;
  const bool words = ctx.detailed();  // no label when the trace keeps no words
  std::vector<std::vector<ProcId>> groups;
  std::string label = words ? "partition" : "";
  for (const auto& g : f.groups) {
    groups.emplace_back();
    for (const auto& n : g) groups.back().push_back(ctx.id(n));
    if (words)
      label += (groups.size() == 1 ? " [" : (f.one_way ? " -/-> [" : " | [")) + names(world, groups.back()) + "]";
  }
  const std::uint64_t pid = world.network().partition(std::move(groups), f.one_way, label);
  world.note_world(Ev::Fault, words ? label + (f.duration ? " for " + format_duration(*f.duration) : "") : "");
  if (f.duration)
    world.at(world.now() + *f.duration, [&world, pid, label, words] {
      world.network().heal(pid);
      world.note_world(Ev::Fault, words ? "healed: " + label : "");
    });
}

void write(FaultWriter& out, const FaultSpec& f) {
  out.groups("groups", f.groups);
  if (f.one_way) out.raw("one_way", "true");
  if (f.duration) out.duration("duration", *f.duration);
}

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultPartition).duration("d", f.duration.value_or(Duration::zero())); }

void draw(FaultDraw& d, std::vector<FaultSpec>& out) {
  FaultSpec& f = out.back();
  // A random nonempty proper subset against everyone else.
  // Or the process whose event it waits for, alone.
  std::vector<std::string> a, rest;
  const bool alone = !d.anchor_process.empty() && d.rng.chance(0.5);
  if (!alone)
    for (const std::string& p : d.everyone) (d.rng.chance(0.5) ? a : rest).push_back(p);
  if (a.empty() || rest.empty()) {
    a = {alone ? d.anchor_process : pick(d.rng, d.clients)};
    rest.clear();
    for (const std::string& p : d.everyone)
      if (p != a[0]) rest.push_back(p);
  }
  f.groups = {a, rest};
  f.one_way = d.rng.chance(0.2);
  f.duration = d.length(d.max_outage);
}

// One process cut off from all the others, for each length.
void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  for (const std::string& alone : c.everyone) {
    std::vector<std::string> rest;
    for (const std::string& p : c.everyone)
      if (p != alone) rest.push_back(p);
    for (Duration d : c.lengths) {
      FaultSpec f;
      f.kind = FaultKind::Partition;
      f.groups = {{alone}, rest};
      f.duration = d;
      out.push_back({f});
    }
  }
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.partition(f); }

}  // namespace

constinit const FaultKindInfo kPartitionFault{
    .kind = FaultKind::Partition,
    .name = "partition",
    .help = "no messages between groups (one_way: only from the first group); ends after duration or at heal",
    .keys = kKeys,
    .example = R"(groups = [["client1"], ["redis1", "storage"]]
one_way = true
duration = "2s")",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .draw = draw,
    .choices = choices,
    .live = live,
};

}  // namespace locksim
