// drop: messages on a link are lost (some of them, with a probability).
#include <fmt/format.h>

#include "harness/faults/link.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"from", "to", "duration", "count", "probability"};

void parse(const FaultReader& in, FaultSpec& f) {
  link_fault::parse(in, f);
  if (auto p = in.number("probability")) {
    if (!(*p > 0.0 && *p <= 1.0)) in.fail("probability", "must be more than 0 and at most 1");
    f.probability = *p;
  }
}

void apply(FaultContext& ctx, const FaultSpec& f) {
  LinkRule r = link_fault::rule(ctx, f);
  r.kind = LinkRule::Kind::Drop;
  r.probability = f.probability;
  if (!ctx.detailed()) return link_fault::add(ctx, f, std::move(r), "");
  const std::string link = link_fault::name(f);
  r.label = "dropped by a fault on " + link;
  link_fault::add(ctx, f, std::move(r), "drop messages on " + link);
}

void write(FaultWriter& out, const FaultSpec& f) {
  link_fault::write(out, f);
  if (f.count != kForever) out.raw("count", std::to_string(f.count));
  if (f.probability != 1.0) out.raw("probability", fmt::format("{}", f.probability));
}

Phrase describe(const FaultSpec& f) { return Phrase(W::FaultDropped).name("from", f.from).name("to", f.to); }

void draw(FaultDraw& d, std::vector<FaultSpec>& out) {
  FaultSpec& f = out.back();
  link_fault::draw(d, f);
  f.count = static_cast<int>(d.rng.between(std::int64_t{1}, std::int64_t{5}));
}

// The next message on each link lost.
void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  FaultSpec f;
  f.kind = FaultKind::Drop;
  f.count = 1;
  link_fault::each_link(c, f, out);
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.link(f); }

// The live proxy drops the next N messages of a link, not a random share of them.
std::optional<Phrase> live_refusal(const Scenario&, const FaultSpec& f) {
  if (f.probability < 1.0) return Phrase(W::LiveRefusedDropProbability);
  return std::nullopt;
}

}  // namespace

constinit const FaultKindInfo kDropFault{
    .kind = FaultKind::Drop,
    .name = "drop",
    .help = "messages on the link from -> to are dropped (count, duration, probability)",
    .keys = kKeys,
    .example = R"(to = "storage"
count = 2
probability = 0.5)",
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
