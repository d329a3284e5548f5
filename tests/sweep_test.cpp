// locksim sweep: the grid's cells and boundary against hand expectations, the
// same bytes for any --jobs, errors that name the key, a heatmap that parses
// and marks where safe meets unsafe.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/sweep.hpp"
#include "reports/heatmap.hpp"
#include "tests/command_support.hpp"
#include "tests/support.hpp"

namespace sweep_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {

// client1 takes the lock at 0, reads, and computes for 1 s; at 0.5 s it
// pauses. client2 asks from 0.5 s on and gets the lock as soon as client1's
// key expires or client1 releases it. client1 writes 1 s + the pause after
// it read: before the lease ends (pause < ttl - 1 s) all is well; after it
// (pause > ttl - 1 s) client2 holds the lock too. The pauses and TTLs are
// seconds apart from that edge, so the network's milliseconds do not matter.
constexpr const char* kTiny = R"(
title = "tiny pause"
about = "a pause against a lease"
source = "sweep_test"
duration = "40s"

[lock]
algorithm = "redis-single"
ttl = "5s"

[network]
delay = "1ms"

[[node]]
name = "redis1"

[[client]]
name = "client1"
work = "1s"

[[client]]
name = "client2"
start = "0.5s"
work = "1s"

[[fault]]
at = "0.5s"
kind = "pause"
target = "client1"
duration = "1s"
)";

SweepResult tiny_sweep(int jobs, std::uint64_t seeds = 1) {
  const Scenario s = parse_scenario(kTiny, "tiny.toml");
  const std::vector<SweepAxis> axes{parse_sweep_axis(s, "fault[1].duration=1s..11s:step=2s"),
                                    parse_sweep_axis(s, "lock.ttl=5s,11s")};
  return run_sweep(s, axes, {.seeds = seeds, .jobs = jobs});
}

std::string in_source(const std::string& args) {
  return "cd " + std::string(LOCKSIM_SOURCE_DIR) + " && " + LOCKSIM_BINARY + " " + args;
}

}  // namespace

TEST_CASE("a sweep's values: points, steps and lists, in each unit") {
  const Scenario s = parse_scenario(kTiny, "tiny.toml");
  CHECK(parse_sweep_axis(s, "fault[1].duration=1s..40s:40").values.size() == 40);
  CHECK(parse_sweep_axis(s, "fault[1].duration=1s..40s:40").values[39] == Duration::s(40).count_ns());
  CHECK(parse_sweep_axis(s, "fault[1].duration=1s..2s:3").values == std::vector<std::int64_t>{1'000'000'000, 1'500'000'000, 2'000'000'000});
  CHECK(parse_sweep_axis(s, "lock.ttl=1s..10s:step=4s").values.size() == 3);  // 1, 5, 9
  CHECK(parse_sweep_axis(s, "client[2].drift_ppm=0..5%:step=1%").values ==
        std::vector<std::int64_t>{0, 10'000'000, 20'000'000, 30'000'000, 40'000'000, 50'000'000});
  CHECK(parse_sweep_axis(s, "node[redis1].drift_ppm=0,50000ppm").values == std::vector<std::int64_t>{0, 50'000'000});
  CHECK(parse_sweep_axis(s, "client[1].repeat=1,2,3").knob.unit == KnobUnit::Integer);
}

TEST_CASE("a sweep's table: a pause shorter than what is left of the lease is safe, a longer one is not") {
  const SweepResult r = tiny_sweep(1);
  REQUIRE(r.rows() == 6);  // pauses 1, 3, 5, 7, 9, 11 s
  REQUIRE(r.columns() == 2);  // ttl 5 s, 11 s
  // ttl 5 s: client1 writes at 2 s and 4 s in time; at 6 s and later, after its key died.
  for (std::size_t row = 0; row < 6; ++row) {
    INFO("pause " << 1 + 2 * row << "s");
    CHECK((r.at(row, 0).violating == 0) == (row < 2));
    CHECK((r.at(row, 1).violating == 0) == (row < 5));  // ttl 11 s: safe up to the 9 s pause (written at 10 s)
  }
  CHECK(r.at(5, 1).kinds.count(ViolationKind::Overlap) == 1);
  const std::vector<SweepFlip> flips = sweep_flips(r);
  REQUIRE(flips.size() == 2);
  CHECK((flips[0].column == 0 && flips[0].row_before == 1 && flips[0].row_after == 2 && flips[0].unsafe_after));
  CHECK((flips[1].column == 1 && flips[1].row_before == 4 && flips[1].row_after == 5 && flips[1].unsafe_after));

  const std::string text = sweep_text(r, "tiny");
  CHECK(text.find("lock.ttl = 5s: unsafe from 5s on (3s is safe)") != std::string::npos);
  CHECK(text.find("lock.ttl = 11s: unsafe from 11s on (9s is safe)") != std::string::npos);
  const std::string csv = sweep_csv(r);
  CHECK(csv.rfind("fault[1].duration,fault[1].duration_ns,lock.ttl,lock.ttl_ns,runs,violating,rate,", 0) == 0);
  CHECK(csv.find("\n3s,3000000000,5s,5000000000,1,0,0.0000,0,0,0,0,0,0,0\n") != std::string::npos);
  CHECK(csv.find("\n5s,5000000000,5s,5000000000,1,1,1.0000,1,") != std::string::npos);
}

TEST_CASE("a sweep's table is laid out as its heatmap: the first --set across, the second up from the bottom") {
  const SweepResult r = tiny_sweep(1);
  const std::string text = sweep_text(r, "tiny");
  // The table's head row: the first number's values, left to right, as the heatmap's x axis.
  const auto head = text.find("  lock.ttl \\ fault[1].duration  1s");
  REQUIRE(head != std::string::npos);
  const std::string head_line = text.substr(head, text.find('\n', head) - head);
  CHECK(head_line.find("1s") < head_line.find("3s"));
  CHECK(head_line.find("9s") < head_line.find("11s"));
  // Then the second number's rows from its last value down to its first: the heatmap's y runs up.
  const auto row11 = text.find("\n  11s "), row5 = text.find("\n  5s ");
  REQUIRE(row11 != std::string::npos);
  REQUIRE(row5 != std::string::npos);
  CHECK(head < row11);
  CHECK(row11 < row5);
  // ttl 5 s: unsafe from the 5 s pause on (the third column).
  const std::string row = text.substr(row5, text.find('\n', row5 + 1) - row5);
  CHECK(row.find("0%") < row.find("100%"));
  CHECK(text.find("columns: fault[1].duration") != std::string::npos);
  // The heatmap: the first number on x (its title under the cells), the second up the y axis, its first value lowest.
  const std::string svg = sweep_svg(r, "tiny");
  CHECK(svg.find(">fault[1].duration (s)</text>") != std::string::npos);
  CHECK(svg.find("rotate(-90") != std::string::npos);
}

TEST_CASE("a sweep too wide for a terminal is cut into blocks of columns, each under the one before") {
  const Scenario s = parse_scenario(kTiny, "tiny.toml");
  const SweepResult r = run_sweep(s, {parse_sweep_axis(s, "fault[1].duration=1s..40s:40"), parse_sweep_axis(s, "lock.ttl=5s,11s")}, {});
  const std::string text = sweep_text(r, "tiny");
  std::istringstream in(text);
  std::size_t heads = 0;
  for (std::string line; std::getline(in, line);) {
    const bool head = line.rfind("  lock.ttl \\ fault[1].duration", 0) == 0;
    if (head || line.rfind("  5s ", 0) == 0 || line.rfind("  11s ", 0) == 0) CHECK(line.size() <= 100);
    heads += head;
  }
  CHECK(heads >= 2);
}

TEST_CASE("a sweep gives the same cells for any number of threads") {
  const SweepResult one = tiny_sweep(1, 3), two = tiny_sweep(2, 3);
  CHECK(sweep_csv(one) == sweep_csv(two));
  CHECK(sweep_svg(one, "t") == sweep_svg(two, "t"));
  CHECK(one.at(0, 0).runs == 3);
}

TEST_CASE("locksim sweep --jobs 1 and --jobs 2 write the same bytes") {
  const ScratchDir dir("locksim-sweep-jobs");
  std::string out[2];
  for (int jobs : {1, 2}) {
    const std::string p = (dir.path() / std::to_string(jobs)).string();
    const auto o = run_command(in_source("sweep scenarios/kleppmann/gc-pause.toml --set fault[1].duration=20s..40s:5 "
                                                  "--set lock.ttl=10s,30s --seeds 2 --jobs " + std::to_string(jobs) +
                                                  " --csv " + p + ".csv --svg " + p + ".svg"));
    CHECK(o.status == 0);
    out[jobs - 1] = o.output + read_text(p + ".csv") + read_text(p + ".svg");
  }
  CHECK(out[0] == out[1]);
  CHECK(out[0].find("unsafe from") != std::string::npos);
}

TEST_CASE("a bad --set names the key, the file's line and what is allowed, and exits 2") {
  const std::string file = " scenarios/kleppmann/gc-pause.toml ";
  auto sweep = [&](const std::string& set) { return locksim_in_source("sweep" + file + "--set '" + set + "'"); };
  auto o = sweep("fault[1].duration=1s..abc:5");
  CHECK(o.status == 2);
  CHECK(o.output.find("fault[1].duration") != std::string::npos);
  CHECK(o.output.find("'abc' is not a duration") != std::string::npos);
  CHECK(o.output.find("gc-pause.toml:43") != std::string::npos);  // the [[fault]]'s line
  CHECK(o.output.find("FROM..TO:POINTS") != std::string::npos);
  o = sweep("fault[2].duration=1s,2s");
  CHECK(o.status == 2);
  CHECK(o.output.find("has 1 fault") != std::string::npos);
  o = sweep("lock.ttl=0s..10s:3");
  CHECK(o.status == 2);
  CHECK(o.output.find("out of range") != std::string::npos);
  o = sweep("lock.ttl=10s..1s:3");
  CHECK(o.output.find("goes down") != std::string::npos);
  o = sweep("client[1].drift_ppm=fast");
  CHECK(o.status == 2);
  CHECK(o.output.find("parts per million") != std::string::npos);
  o = sweep("colour=1..3:3");
  CHECK(o.status == 2);
  CHECK(o.output.find("lock.KEY") != std::string::npos);  // the keys there are
  o = sweep("lock.fencing=1,2");  // a [lock] key that is not a number
  CHECK(o.status == 2);
  CHECK(o.output.find("gc-pause.toml:25: only durations and integers") != std::string::npos);
  o = sweep("lock.retry_delay=0,1");  // an integer where the loader wants a duration: its refusal, located at [lock]
  CHECK(o.status == 2);
  CHECK(o.output.find("gc-pause.toml:") != std::string::npos);
  CHECK(o.output.find("retry_delay") != std::string::npos);
}

TEST_CASE("the heatmap is well-formed SVG that marks the safe/unsafe boundary, and renders as PNG") {
  const SweepResult r = tiny_sweep(1);
  const std::string svg = sweep_svg(r, "tiny & small");
  CHECK(svg.find("tiny &amp; small") != std::string::npos);
  // The boundary: where a safe cell meets an unsafe one.
  const auto b = svg.find("<path class=\"boundary\" d=\"");
  REQUIRE(b != std::string::npos);
  const std::string d = svg.substr(b, svg.find('"', b + 27) - b);
  // Two edges along the pauses (one per TTL), three between the TTLs (the pauses of 5, 7 and 9 s differ).
  CHECK(std::count(d.begin(), d.end(), 'M') == 5);
  CHECK(svg.find("fault[1].duration (s)") != std::string::npos);  // the axes say their units
  CHECK(svg.find("lock.ttl (s)") != std::string::npos);
  CHECK(svg.find("safe/unsafe boundary") != std::string::npos);  // the legend

  const ScratchDir dir("locksim-sweep-svg");
  const std::string p = (dir.path() / "map").string();
  const auto o = locksim_in_source("sweep scenarios/kleppmann/gc-pause.toml --set fault[1].duration=25s..35s:3 --svg " + p +
                                   ".svg --png " + p + ".png --format json");
  REQUIRE(o.status == 0);
  const auto j = nlohmann::json::parse(o.output);  // one JSON document, nothing else
  CHECK(j["cells"].size() == 3);
  CHECK(j["boundary"].size() == 1);
  if (run_command("command -v xmllint >/dev/null").status == 0)
    CHECK(run_command("xmllint --noout " + p + ".svg 2>&1").output == "");
  CHECK(read_text(p + ".png").substr(1, 3) == "PNG");  // rsvg-convert parsed the SVG as XML, and drew it
}

TEST_CASE("sweep --png without rsvg-convert is refused before the grid runs, saying how to get it") {
  const ScratchDir dir("locksim-sweep-no-rsvg");
  const std::string png = (dir.path() / "map.png").string();
  // A PATH without rsvg-convert (locksim is run by its full path); a grid of
  // 100,000 runs that would take minutes if it ran first.
  const auto o = run_command("cd " + std::string(LOCKSIM_SOURCE_DIR) + " && PATH=" + dir.path().string() + " " + LOCKSIM_BINARY +
                             " sweep scenarios/kleppmann/gc-pause.toml --set fault[1].duration=1s..40s:1000 --seeds 100 --png " +
                             png + " 2>&1");
  CHECK(o.status == 2);
  CHECK(o.output.find("map.png: rsvg-convert is not on PATH") != std::string::npos);
  CHECK(o.output.find("apt-get install librsvg2-bin") != std::string::npos);
  CHECK(o.output.find("unsafe from") == std::string::npos);  // no table: nothing ran
  CHECK(!std::filesystem::exists(png));
}

}  // namespace sweep_test
