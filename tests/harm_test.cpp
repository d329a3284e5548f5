// The harm measure (judge/harm.hpp): of the increments the storage accepted
// and acknowledged to their client, the fraction the final counter lost —
// per run, and pooled over explore's runs with a bootstrap interval.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness/explore.hpp"
#include "reports/explore_output.hpp"
#include "harness/run.hpp"
#include "judge/harm.hpp"
#include "reports/report.hpp"
#include "tests/support.hpp"

namespace harm_test {

using namespace locksim;

namespace {

// A storage and three clients; each increment is a read, then a write of
// the value read plus one, then (unless said otherwise) its acknowledgement.
struct H {
  Trace trace;
  ProcId c1 = trace.add_process("client1", ProcessRole::Client);
  ProcId c2 = trace.add_process("client2", ProcessRole::Client);
  ProcId c3 = trace.add_process("client3", ProcessRole::Client);
  ProcId storage = trace.add_process("storage", ProcessRole::Storage);
  std::int64_t now = 0;

  H& read(ProcId c, std::int64_t value) {
    testing::record_event(trace, ++now, storage, Ev::StorageRead, c, kNoProc, value, -1, {});
    return *this;
  }
  H& write(ProcId c, std::int64_t value, bool acknowledged = true) {
    testing::record_event(trace, ++now, storage, Ev::StorageWrite, c, kNoProc, value, -1, {});
    if (acknowledged) testing::record_event(trace, ++now, c, Ev::Wrote, kNoProc, kNoProc, value, -1, {});
    return *this;
  }
};

}  // namespace

TEST_CASE("harm: increments that build on each other lose nothing") {
  H h;
  h.read(h.c1, 0).write(h.c1, 1).read(h.c2, 1).write(h.c2, 2).read(h.c3, 2).write(h.c3, 3);
  CHECK(measure_harm(h.trace) == Harm{3, 3, 0});
  CHECK(measure_harm(h.trace).fraction() == 0.0);
}

TEST_CASE("harm: a write built on a stale read loses every acknowledged increment it overwrote") {
  // All three read 0; client1 and client2 write 1, client3 writes 1 last:
  // the final counter holds client3's increment alone.
  H h;
  h.read(h.c1, 0).read(h.c2, 0).read(h.c3, 0).write(h.c1, 1).write(h.c2, 1).write(h.c3, 1);
  const Harm harm = measure_harm(h.trace);
  CHECK(harm == Harm{3, 3, 2});
  CHECK(harm.fraction() == doctest::Approx(2.0 / 3.0));
}

TEST_CASE("harm: an increment is lost when a later write skips it, even if it was on the chain for a while") {
  // client1: 0 -> 1, client2 builds on it: 1 -> 2; client3 read 1 before
  // client2 wrote and writes 2 last: client2's increment is gone, client1's kept.
  H h;
  h.read(h.c1, 0).write(h.c1, 1).read(h.c2, 1).read(h.c3, 1).write(h.c2, 2).write(h.c3, 2);
  CHECK(measure_harm(h.trace) == Harm{3, 3, 1});
}

TEST_CASE("harm: an accepted write whose acknowledgement never came counts as accepted, not as acknowledged") {
  // client1's write is accepted but it never hears so (it crashed): lost, but not an acknowledged loss.
  H h;
  h.read(h.c1, 0).read(h.c2, 0).write(h.c1, 1, false).write(h.c2, 1);
  CHECK(measure_harm(h.trace) == Harm{2, 1, 0});
  // The same with client2's acknowledgement missing instead: client1's acknowledged increment is lost.
  H g;
  g.read(g.c1, 0).read(g.c2, 0).write(g.c1, 1).write(g.c2, 1, false);
  CHECK(measure_harm(g.trace) == Harm{2, 1, 1});
  CHECK(measure_harm(g.trace).fraction() == 1.0);
}

TEST_CASE("harm: an acknowledgement that comes late marks its own client's write, not the latest one") {
  // client1 and client2 both read 0 and write 1; client1 hears back after
  // client2's write, client2 never does: client1's acknowledged increment is the lost one.
  H h;
  h.read(h.c1, 0).read(h.c2, 0).write(h.c1, 1, false).write(h.c2, 1, false);
  testing::record_event(h.trace, ++h.now, h.c1, Ev::Wrote, kNoProc, kNoProc, 1, -1, {});
  CHECK(measure_harm(h.trace) == Harm{2, 1, 1});
}

TEST_CASE("harm of a run: Kleppmann's GC pause loses one of two acknowledged increments, its fenced twin none") {
  const RunResult r = run_scenario(testing::catalogue("scenarios/kleppmann/gc-pause.toml"));
  CHECK(r.harm == Harm{2, 2, 1});
  const RunResult fenced = run_scenario(testing::catalogue("scenarios/kleppmann/gc-pause-fenced.toml"));
  CHECK(fenced.harm == Harm{1, 1, 0});
  // The streaming judge and the kept trace agree.
  CHECK(measure_harm(r.world->trace()) == r.harm);
}

TEST_CASE("harm in the reports: a line in the text (both languages), fields in the JSON") {
  const RunResult r = run_scenario(testing::catalogue("scenarios/kleppmann/gc-pause.toml"));
  CHECK(text_report(r, {}).find("  harm: 1 of 2 acknowledged increments lost (50.0%)\n") != std::string::npos);
  TextOptions zh;
  zh.lang = Lang::Zh;
  CHECK(text_report(r, zh).find("  损害：2 次已确认的加一中丢失了 1 次（50.0%）\n") != std::string::npos);
  const auto j = nlohmann::json::parse(json_report(r));
  CHECK(j.at("harm").at("accepted") == 2);
  CHECK(j.at("harm").at("acknowledged") == 2);
  CHECK(j.at("harm").at("lost") == 1);
  CHECK(j.at("harm").at("fraction") == 0.5);
  // A run whose clients never write says nothing of harm.
  const RunResult holds = run_scenario(testing::catalogue("scenarios/etcd/lease-expires-while-waiting-3.4.toml"));
  CHECK(holds.harm.acknowledged == 0);
  CHECK(text_report(holds, {}).find("harm:") == std::string::npos);
}

TEST_CASE("harm over runs: the pooled fraction, and a bootstrap interval that a constant rate pins") {
  HarmTally same;
  for (int i = 0; i < 200; ++i) same.add(Harm{4, 4, 1});
  CHECK(same.run_count() == 200);
  CHECK(same.fraction() == 0.25);
  const auto pinned = same.interval95();
  REQUIRE(pinned);
  CHECK(pinned->first == 0.25);
  CHECK(pinned->second == 0.25);
  HarmTally none;
  none.add(Harm{});
  CHECK_FALSE(none.interval95());
}

TEST_CASE("harm over runs: half the runs lose both increments, half none: 0.5 with the run-level spread") {
  // The runs, not the increments, are the independent draws: with 400 runs
  // the pooled fraction's standard error is 0.5 / sqrt(400) = 0.025, so the
  // 95% interval is 0.5 +- 0.049. A binomial interval over the 800
  // increments would claim +- 0.035: too narrow, since a run's two
  // increments are lost together.
  HarmTally t;
  for (int i = 0; i < 200; ++i) t.add(Harm{2, 2, 2});
  for (int i = 0; i < 200; ++i) t.add(Harm{2, 2, 0});
  CHECK(t.fraction() == 0.5);
  const auto ci = t.interval95();
  REQUIRE(ci);
  CHECK(ci->first == doctest::Approx(0.451).epsilon(0.02));
  CHECK(ci->second == doctest::Approx(0.549).epsilon(0.02));
  CHECK(ci->second - ci->first > 0.085);
  CHECK(ci->first > 0.44);   // the 2.5th and 97.5th percentiles, not the extremes
  CHECK(ci->second < 0.56);
  // The interval depends on the counts alone: the same tally merged from parts.
  HarmTally a, b;
  for (int i = 0; i < 200; ++i) (i % 2 ? a : b).add(Harm{2, 2, 2});
  for (int i = 0; i < 200; ++i) (i % 3 ? b : a).add(Harm{2, 2, 0});
  a.merge(b);
  CHECK(a.interval95() == ci);
}

TEST_CASE("harm over runs: rare losses get the exact bootstrap's skewed interval") {
  // 5 of 1,000 runs lose their one increment: a resample's losses are
  // Binomial(1000, 0.005), whose 2.5th and 97.5th percentiles are 1 and 10
  // (Poisson(5): 2 and 10 within a draw's noise) -- not 0.005 +- 0.0044, a
  // normal interval's symmetric shape.
  HarmTally t;
  t.runs[{1, 1}] = 5;
  t.runs[{0, 1}] = 995;
  const auto ci = t.interval95();
  REQUIRE(ci);
  CHECK(ci->first >= 0.001);
  CHECK(ci->first <= 0.002);
  CHECK(ci->second >= 0.009);
  CHECK(ci->second <= 0.011);
}

TEST_CASE("harm over runs: the interval costs the number of distinct runs, not of runs") {
  // Two merged shards may claim any counts (a shard file is the user's):
  // 2e15 runs, which drawn one by one would never end.
  HarmTally t;
  t.runs[{1, 4}] = 1'000'000'000'000'000;
  t.runs[{0, 4}] = 1'000'000'000'000'000;
  const auto ci = t.interval95();
  REQUIRE(ci);
  CHECK(ci->first == doctest::Approx(0.125).epsilon(1e-6));
  CHECK(ci->second == doctest::Approx(0.125).epsilon(1e-6));
  CHECK(ci->first <= ci->second);
}

TEST_CASE("explore's harm: the scenario's own schedule seed after seed, a known rate, in text and JSON") {
  const Scenario s = testing::catalogue("scenarios/kleppmann/gc-pause.toml");
  ExploreOptions o;
  o.runs = 40;
  o.keep_faults = true;
  o.max_faults = 0;  // no drawn fault: every run is the scenario itself, losing 1 of 2
  const ExploreSummary sum = explore(s, o);
  CHECK(sum.harm.run_count() == 40);
  CHECK(sum.harm.lost() == 40);
  CHECK(sum.harm.acknowledged() == 80);
  const std::string text = explore_text(s, o, sum);
  CHECK(text.find("harm: 40 of 80 acknowledged increments lost (50.00%), 95% CI [50.00%, 50.00%]") != std::string::npos);
  const auto j = nlohmann::json::parse(explore_json(s, o, sum));
  CHECK(j.at("harm").at("fraction") == 0.5);
  CHECK(j.at("harm").at("runs") == nlohmann::json::array({nlohmann::json::array({1, 2, 40})}));
}

}  // namespace harm_test
