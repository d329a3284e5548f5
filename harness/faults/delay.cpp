// delay: messages on a link are held back until a window ends, or each delayed by `by`.
#include "harness/faults/link.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::string_view kKeys[] = {"from", "to", "duration", "by", "count"};

void parse(const FaultReader& in, FaultSpec& f) {
  link_fault::parse(in, f);
  if (auto b = in.duration("by", false, FaultReader::Positive)) f.by = *b;
  if (!f.duration && f.by.is_zero())
    in.fail("duration", "a delay needs duration (hold messages until the window ends) and/or by (extra delay)");
}

void apply(FaultContext& ctx, const FaultSpec& f) {
  LinkRule r = link_fault::rule(ctx, f);
  const bool words = ctx.detailed();
  const std::string link = words ? link_fault::name(f) : "";
  std::string what;
  if (f.duration && f.by.is_zero()) {
    r.kind = LinkRule::Kind::Hold;
    if (words) {
      r.label = "held back on " + link;
      what = "hold back messages on " + link + " until " + format_instant(r.until);
    }
  } else {
    r.kind = LinkRule::Kind::ExtraDelay;
    r.extra = f.by;
    if (words) {
      r.label = "delayed on " + link;
      what = "delay messages on " + link + " by " + format_duration(f.by);
    }
  }
  link_fault::add(ctx, f, std::move(r), std::move(what));
}

void write(FaultWriter& out, const FaultSpec& f) {
  link_fault::write(out, f);
  if (!f.by.is_zero()) out.duration("by", f.by);
  if (f.count != kForever) out.raw("count", std::to_string(f.count));
}

Phrase describe(const FaultSpec& f) {
  return Phrase(W::FaultHeldBack).name("from", f.from).name("to", f.to).duration("d", f.duration.value_or(f.by));
}

void draw(FaultDraw& d, std::vector<FaultSpec>& out) {
  FaultSpec& f = out.back();
  link_fault::draw(d, f);
  f.count = static_cast<int>(d.rng.between(std::int64_t{1}, std::int64_t{3}));
}

// The next message on each link held back for each length.
void choices(const FaultChoices& c, std::vector<FaultChoice>& out) {
  for (Duration d : c.lengths) {
    FaultSpec f;
    f.kind = FaultKind::Delay;
    f.duration = d;
    f.count = 1;
    link_fault::each_link(c, f, out);
  }
}

void live(LiveFaultTarget& to, const FaultSpec& f) { to.link(f); }

}  // namespace

constinit const FaultKindInfo kDelayFault{
    .kind = FaultKind::Delay,
    .name = "delay",
    .help = "messages on the link from -> to are held back until the window of duration ends, or delayed by `by`",
    .keys = kKeys,
    .example = R"(from = "client1"
to = "redis1"
duration = "1s"
count = 3)",
    .parse = parse,
    .apply = apply,
    .write = write,
    .describe = describe,
    .draw = draw,
    .choices = choices,
    .live = live,
};

}  // namespace locksim
