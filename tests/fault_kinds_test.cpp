// The fault-kind table is the extension point: a kind is one file under
// harness/faults/ and one line in table.hpp. These tests hold every entry,
// present and future, to what the harness relies on: the loader reads it, the
// writer writes it back, the engine applies it, explore draws it, the shrinker
// resizes and describes it, `locksim list` shows it.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <string>

#include "harness/explore.hpp"
#include "harness/faults.hpp"
#include "harness/faults/kind.hpp"
#include "harness/run.hpp"
#include "harness/scenario_writer.hpp"
#include "reports/words.hpp"

namespace fault_kinds_test {

using namespace locksim;

namespace {

// The standard topology the kinds' examples name (kind.hpp, FaultKindInfo::example).
// Long enough that a drawn crash's restart, up to 2 x TTL after a crash in
// the first 80% of the run, lands within it: explore draws it regardless,
// and the loader would refuse a file with a restart after the end.
const char* kTopology = R"(title = "every fault kind"
about = "one fault of each kind: the table's examples"
source = "tests/fault_kinds_test.cpp"
duration = "60s"

[lock]
algorithm = "redis-single"
ttl = "5s"

[[node]]
name = "redis1"

[[node]]
name = "redis2"
replica_of = "redis1"

[sentinel]
down_after = "5s"

[[client]]
name = "client1"
work = "3s"
repeat = 4

[[client]]
name = "client2"
work = "2s"
repeat = 4
)";

// The topology with every kind's example, in table order, at 1s, 2s, ...
std::string every_kind() {
  std::string text = kTopology;
  int second = 0;
  for (const FaultKindInfo* k : fault_kinds()) {
    text += "\n[[fault]]\nat = \"" + std::to_string(++second) + "s\"\nkind = \"" + std::string(k->name) + "\"\n";
    if (!k->example.empty()) text += std::string(k->example) + "\n";
  }
  return text;
}

bool same_fault(const FaultSpec& a, const FaultSpec& b) {
  return a.kind == b.kind && a.at == b.at && a.on_process == b.on_process && a.on_event == b.on_event &&
         a.on_occurrence == b.on_occurrence && a.after == b.after && a.target == b.target && a.duration == b.duration &&
         a.by == b.by && a.drift_ppb == b.drift_ppb && a.groups == b.groups && a.one_way == b.one_way && a.from == b.from &&
         a.to == b.to && a.count == b.count && a.probability == b.probability;
}

std::string locksim_output(const std::string& args) {
  const std::string cmd = std::string(LOCKSIM_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  pclose(pipe);
  return out;
}

}  // namespace

TEST_CASE("every entry of the fault-kind table has a name, a help line and every part the harness calls") {
  REQUIRE(!fault_kinds().empty());
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < fault_kinds().size(); ++i) {
    const FaultKindInfo& k = *fault_kinds()[i];
    INFO("table entry " << i << ": " << k.name);
    CHECK(static_cast<std::size_t>(k.kind) == i);  // the table's line and the enum agree
    CHECK(&fault_kind(k.kind) == &k);
    CHECK(!k.name.empty());
    CHECK(names.insert(k.name).second);
    CHECK(!k.help.empty());
    CHECK(k.help.find('\n') == std::string_view::npos);
    CHECK(find_fault_kind(k.name) == k.kind);
    CHECK(fault_kind_name(k.kind) == k.name);
    CHECK((k.parse != nullptr));
    CHECK((k.apply != nullptr));
    CHECK((k.write != nullptr));
    CHECK((k.describe != nullptr));
    if (k.offered) CHECK_MESSAGE((k.draw != nullptr), "offered to explore, but it has no draw");
    if (k.magnitude) CHECK((k.magnitude->size && k.magnitude->resize));
    if (k.undoes) CHECK(static_cast<std::size_t>(*k.undoes) < i);  // its example follows the one it undoes
  }
  CHECK_FALSE(find_fault_kind("freeze").has_value());
}

TEST_CASE("the loader's and explore's lists of fault kinds name every kind in the table") {
  try {
    parse_scenario(std::string(kTopology) + "\n[[fault]]\nat = \"1s\"\nkind = \"freeze\"\n", "x.toml");
    FAIL("an unknown kind was accepted");
  } catch (const ScenarioError& e) {
    for (const FaultKindInfo* k : fault_kinds()) CHECK_MESSAGE(std::string(e.what()).find(k->name) != std::string::npos, k->name);
  }
  const std::string drawn = fault_kind_names(", ", true);
  for (const FaultKindInfo* k : fault_kinds()) {
    const bool listed = (", " + drawn + ",").find(", " + std::string(k->name) + ",") != std::string::npos;
    CHECK_MESSAGE(listed == (k->draw != nullptr), k->name);
  }
}

TEST_CASE("locksim list prints every fault kind with its help line") {
  const std::string out = locksim_output("list");
  for (const FaultKindInfo* k : fault_kinds()) {
    INFO(k->name);
    const auto at = out.find("\n  " + std::string(k->name) + " ");
    REQUIRE(at != std::string::npos);
    CHECK(out.substr(at, out.find('\n', at + 1) - at).find(k->help) != std::string::npos);
  }
}

TEST_CASE("one fault of each kind, written and read back, gives the same faults and the same trace") {
  const Scenario s = parse_scenario(every_kind(), "every-kind.toml");
  REQUIRE(s.faults.size() == fault_kinds().size());
  for (std::size_t i = 0; i < s.faults.size(); ++i) CHECK(s.faults[i].kind == fault_kinds()[i]->kind);
  const std::string written = to_toml(s);
  const Scenario again = parse_scenario(written, "written.toml");
  REQUIRE(again.faults.size() == s.faults.size());
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    INFO(fault_kind_name(s.faults[i].kind));
    CHECK(same_fault(again.faults[i], s.faults[i]));
    // Said as a fact (an id and its arguments), which each language words whole.
    const Phrase said = fault_kind(s.faults[i].kind).describe(s.faults[i]);
    CHECK(said.id != kNoWord);
    for (Lang lang : {Lang::En, Lang::Zh}) {
      const std::string text = say(lang, said);
      CHECK(!text.empty());
      CHECK(text.find('{') == std::string::npos);
      if (!s.faults[i].target.empty()) CHECK(text.find(s.faults[i].target) != std::string::npos);
    }
  }
  CHECK(to_toml(again) == written);
  CHECK(run_scenario(again).trace_hash == run_scenario(s).trace_hash);
}

TEST_CASE("every kind's fault, applied, leaves its mark on the run") {
  const Scenario all = parse_scenario(every_kind(), "every-kind.toml");
  const std::string with_all = run_scenario(all).trace_hash;
  for (std::size_t i = 0; i < all.faults.size(); ++i) {
    INFO(fault_kind_name(all.faults[i].kind));
    // Without it, and without what undoes it (a crash takes its restart along).
    Scenario without = all;
    std::erase_if(without.faults, [&](const FaultSpec& f) { return same_fault(f, all.faults[i]) || undoes(f, all.faults[i]); });
    CHECK(run_scenario(without).trace_hash != with_all);
  }
}

TEST_CASE("explore draws every kind it offers, each written and read back as drawn") {
  const Scenario base = parse_scenario(kTopology, "topology.toml");
  std::vector<FaultKind> expected;
  for (const FaultKindInfo* k : fault_kinds())
    if (k->draw) expected.push_back(k->kind);
  CHECK(drawn_kinds(base) == expected);  // the topology offers every kind
  for (FaultKind kind : expected) {
    INFO(fault_kind_name(kind));
    ExploreOptions o;
    o.kinds = {kind};
    int drawn = 0;
    for (std::uint64_t seed = 1; seed <= 30; ++seed) {
      const Scenario s = with_random_faults(base, seed, o);
      for (const FaultSpec& f : s.faults) {
        drawn += f.kind == kind;
        CHECK((f.kind == kind || fault_kind(f.kind).undoes == kind));
      }
      const Scenario again = parse_scenario(to_toml(s), "drawn.toml");
      REQUIRE(again.faults.size() == s.faults.size());
      for (std::size_t i = 0; i < s.faults.size(); ++i) CHECK(same_fault(again.faults[i], s.faults[i]));
    }
    CHECK(drawn >= 30);  // at least one fault a run
  }
}

TEST_CASE("explore does not offer a kind the scenario cannot take") {
  std::string text = kTopology;
  text.erase(text.find("[sentinel]"), std::string("[sentinel]\ndown_after = \"5s\"\n").size());
  const Scenario base = parse_scenario(text, "no-sentinel.toml");
  const auto drawn = drawn_kinds(base);
  CHECK(std::find(drawn.begin(), drawn.end(), FaultKind::Failover) == drawn.end());
  CHECK(std::find(drawn.begin(), drawn.end(), FaultKind::Pause) != drawn.end());
  ExploreOptions o;
  o.kinds = {FaultKind::Failover};  // asked for all the same: nothing to draw
  for (std::uint64_t seed = 1; seed <= 10; ++seed) CHECK(with_random_faults(base, seed, o).faults.empty());
}

TEST_CASE("a kind's shrinkable magnitude resizes to what it then measures, keeping its sign") {
  // The examples are at their kind's resolution, so resizing one to its own size changes nothing.
  const Scenario s = parse_scenario(every_kind(), "every-kind.toml");
  int magnitudes = 0;
  for (const FaultSpec& example : s.faults) {
    const auto& m = fault_kind(example.kind).magnitude;
    if (!m) continue;
    INFO(fault_kind_name(example.kind));
    ++magnitudes;
    FaultSpec f = example;
    m->resize(f, Duration::ms(5));
    CHECK(m->size(f) == Duration::ms(5));
    m->resize(f, Duration::ms(700));
    CHECK(m->size(f) == Duration::ms(700));
    m->resize(f, m->size(example));  // back: the same fault, its sign kept through both
    CHECK(same_fault(f, example));
  }
  CHECK(magnitudes >= 1);
}

TEST_CASE("every kind explore draws has choices for the exhaustive search, each a fault the loader takes back") {
  const Scenario base = parse_scenario(kTopology, "topology.toml");
  FaultChoices c;
  c.clients = {"client1", "client2"};
  c.nodes = {"redis1", "redis2"};
  c.storage = "storage";
  c.everyone = {"client1", "client2", "redis1", "redis2", "storage"};
  c.masters_with_replicas = {"redis1"};
  c.lengths = {Duration::ms(5), Duration::s(6)};
  c.max_drift_ppm = 1000;
  for (const FaultKindInfo* k : fault_kinds()) {
    INFO(k->name);
    if (k->draw) CHECK_MESSAGE((k->choices != nullptr), "drawn by explore, but the exhaustive search cannot try it");
    if (!k->choices) continue;
    std::vector<FaultChoice> choices;
    k->choices(c, choices);
    CHECK(!choices.empty());
    Scenario s = base;
    for (FaultChoice& choice : choices)
      for (FaultSpec& f : choice) {
        f.on_process = "client1";
        f.on_event = "acquired";
        s.faults.push_back(f);
      }
    const Scenario again = parse_scenario(to_toml(s), "choices.toml");
    REQUIRE(again.faults.size() == s.faults.size());
    for (std::size_t i = 0; i < s.faults.size(); ++i) CHECK(same_fault(again.faults[i], s.faults[i]));
  }
}

TEST_CASE("sort_faults orders a schedule by time, stably: a fault on an event counts as at zero") {
  auto fault = [](std::optional<Duration> at, std::string target) {
    FaultSpec f;
    f.kind = FaultKind::Pause;
    f.at = at;
    f.target = std::move(target);
    return f;
  };
  std::vector<FaultSpec> faults{fault(Duration::s(3), "a"), fault(std::nullopt, "b"), fault(Duration::s(1), "c"),
                                fault(Duration::s(3), "d"), fault(Duration::zero(), "e"), fault(Duration::s(1), "f")};
  sort_faults(faults);
  std::string order;
  for (const FaultSpec& f : faults) order += f.target;
  CHECK(order == "becfad");
  sort_faults(faults);  // already in order: left as it is
  order.clear();
  for (const FaultSpec& f : faults) order += f.target;
  CHECK(order == "becfad");
}

TEST_CASE("an event's trace name reads back as that event, and nothing else reads as one") {
  for (std::size_t i = 0; i <= static_cast<std::size_t>(kLastEvent); ++i) {
    const Ev e = static_cast<Ev>(i);
    INFO(event_name(e));
    REQUIRE(event_from_name(event_name(e)).has_value());
    CHECK(*event_from_name(event_name(e)) == e);
  }
  for (std::string_view other : {"", "acquire", "acquiredd", "Acquired", "zzz", "a"}) CHECK(!event_from_name(other));
}

TEST_CASE("a fault is described as a fact, an id with its arguments as values, and worded only by reports") {
  const Scenario s = parse_scenario(std::string(kTopology) + R"(
[[fault]]
kind = "pause"
target = "client1"
at = "1s"
duration = "40s"
[[fault]]
kind = "crash"
target = "redis1"
on = "client1 acquired"
after = "5ms"
)",
                                    "described.toml");
  const Phrase at = describe_fault(s.faults[0]);
  CHECK(at.id == W::FaultAt);
  REQUIRE(at.find("t"));
  CHECK(at.find("t")->type == Phrase::Arg::Type::Duration);
  CHECK(at.find("t")->number == Duration::s(1).count_ns());
  REQUIRE(at.parts.size() == 1);
  const Phrase& pause = at.parts[0];
  CHECK(pause.id == W::FaultPause);
  REQUIRE(pause.find("who"));
  CHECK(pause.find("who")->text == "client1");
  CHECK(pause.find("d")->number == Duration::s(40).count_ns());
  CHECK(say(Lang::En, at) == "at 1s client1 pauses for 40s");
  CHECK(say(Lang::Zh, at).find("停顿 40s") != std::string::npos);

  const Phrase on = describe_fault(s.faults[1]);
  CHECK(on.id == W::FaultOnAfter);
  CHECK(on.find("process")->text == "client1");
  CHECK(on.find("event")->text == "acquired");
  CHECK(on.find("d")->number == Duration::ms(5).count_ns());
  CHECK(on.parts.at(0).id == W::FaultCrash);
  CHECK(say(Lang::En, on) == "on client1 acquired, 5ms after: redis1 crashes");
  CHECK(say(Lang::Zh, on) == "在 client1 的“acquired”事件之后 5ms：redis1 崩溃");
}

namespace {

// What a kind's `live` asked of the live run, one line per operation.
struct RecordingTarget final : LiveFaultTarget {
  std::vector<std::string> asked;
  void pause(const std::string& t, Duration d) override { asked.push_back("pause " + t + " " + format_duration(d)); }
  void crash(const std::string& t) override { asked.push_back("crash " + t); }
  void restart(const std::string& t) override { asked.push_back("restart " + t); }
  void clock_jump(const std::string& t, Duration by) override { asked.push_back("clock_jump " + t + " " + format_duration(by)); }
  void clock_drift(const std::string& t, std::int64_t ppb) override { asked.push_back("clock_drift " + t + " " + std::to_string(ppb)); }
  void partition(const FaultSpec& f) override { asked.push_back("partition " + std::to_string(f.groups.size())); }
  void link(const FaultSpec& f) override { asked.push_back(std::string("link ") + std::string(fault_kind_name(f.kind)) + " " + f.to); }
  void heal() override { asked.push_back("heal"); }
  void failover(const std::string& master) override { asked.push_back("failover " + master); }
};

}  // namespace

TEST_CASE("every fault kind says how it runs live, as one operation on the real processes, or why it cannot") {
  const Scenario s = parse_scenario(every_kind(), "every-kind.toml");
  REQUIRE(s.faults.size() == fault_kinds().size());
  RecordingTarget to;
  for (const FaultSpec& f : s.faults) {
    const FaultKindInfo& k = fault_kind(f.kind);
    INFO(k.name);
    REQUIRE((k.live != nullptr));
    // Of the examples, a client's restart and a drop by chance cannot run live.
    const bool refused = k.live_refusal && k.live_refusal(s, f).has_value();
    CHECK(refused == (f.kind == FaultKind::Restart || f.kind == FaultKind::Drop));
    const std::size_t before = to.asked.size();
    k.live(to, f);
    CHECK(to.asked.size() == before + 1);  // one operation per fault
  }
  // Each example, as its operation (the table's order).
  CHECK(to.asked == std::vector<std::string>{
                        "pause client1 2s", "crash client2", "restart client2", "clock_jump redis1 -3s",
                        "clock_drift redis1 -20000", "partition 2", "heal", "link delay redis1", "link drop storage",
                        "failover redis1"});

  // And what each refuses, with the reason as a fact reports/ words.
  auto refusal = [&](FaultKind kind, auto change) {
    FaultSpec f = *std::find_if(s.faults.begin(), s.faults.end(), [&](const FaultSpec& x) { return x.kind == kind; });
    change(f);
    const auto why = fault_kind(kind).live_refusal(s, f);
    return why ? say(Lang::En, *why) : std::string();
  };
  CHECK(refusal(FaultKind::Restart, [](FaultSpec&) {}) == "restarting a client");
  CHECK(refusal(FaultKind::Restart, [](FaultSpec& f) { f.target = "redis1"; }).empty());
  CHECK(refusal(FaultKind::Pause, [](FaultSpec& f) { f.target = "storage"; }) == "a fault of the storage");
  CHECK(refusal(FaultKind::Pause, [](FaultSpec&) {}).empty());
  CHECK(refusal(FaultKind::Crash, [](FaultSpec& f) { f.target = "storage"; }) == "a fault of the storage");
  CHECK(refusal(FaultKind::Drop, [](FaultSpec&) {}) == "a drop with a probability");
  CHECK(refusal(FaultKind::Drop, [](FaultSpec& f) { f.probability = 1.0; }).empty());
}

}  // namespace fault_kinds_test
