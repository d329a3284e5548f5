// Inputs fuzzing found to break the harness, each fixed: what the writer
// writes the loader reads back, and a malformed shard file is refused by name.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "harness/explore.hpp"
#include "reports/explore_output.hpp"
#include "harness/scenario_writer.hpp"
#include "tests/support.hpp"

namespace hardening_test {

using namespace locksim;
using locksim::testing::catalogue;

namespace {

std::string merge_error(const std::vector<std::string>& texts) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < texts.size(); ++i) names.push_back("shard" + std::to_string(i + 1) + ".json");
  try {
    merge_results(texts, names);
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(merged)";
}

// A one-shard result with `violations.overlap` as given.
std::string shard(const std::string& overlap, const std::string& shard_field = "[1, 1]") {
  std::string v = "{";
  for (ViolationKind k : kAllViolationKinds) {
    const std::string name(violation_name(k));
    v += (v.size() > 1 ? ", " : "") + ("\"" + name + "\": ") +
         (name == "overlap" ? overlap : std::string("{\"runs\": 0, \"ci95\": [0, 0]}"));
  }
  v += "}";
  return "{\"scenario\": \"x.toml\", \"base_seed\": 1, \"runs\": 5, \"shard\": " + shard_field +
         ", \"options\": {\"runs\": 5, \"faults\": [], \"max_faults\": 3, \"keep_faults\": false, \"max_events\": 1000,"
         " \"max_pause_ns\": null, \"max_jump_ns\": null, \"max_outage_ns\": null, \"max_drift_ppm\": 500},"
         " \"violating_runs\": 1, \"budget_exhausted\": 0, \"violations\": " + v + "}";
}

}  // namespace

TEST_CASE("a scenario whose strings hold control characters and DEL is written with escapes the loader reads back") {
  Scenario s = catalogue("scenarios/kleppmann/gc-pause.toml");
  s.title = "a\x7F" "b";
  s.about = "line one\x01\nline\rtwo\x1B[0m\n";
  const std::string written = to_toml(s);
  for (const char c : written) {
    const auto b = static_cast<unsigned char>(c);
    CHECK_FALSE(((b < 0x20 && b != '\n') || b == 0x7F));
  }
  const Scenario back = parse_scenario(written, "written.toml");
  CHECK(back.title == s.title);
  CHECK(back.about == s.about);
  CHECK(to_toml(back) == written);
}

TEST_CASE("a shard result missing a violation's first run is refused with the file's name") {
  CHECK(merge_error({shard("{\"runs\": 1, \"ci95\": [0, 1]}")}).rfind("shard1.json: not an explore result (a field is missing", 0) == 0);
  CHECK(merge_error({shard("{\"runs\": 1, \"first\": {\"run\": 3}}")}).rfind("shard1.json: not an explore result", 0) == 0);
  CHECK(merge_error({shard("{\"runs\": 1, \"first\": {\"run\": 3, \"seed\": 9}}")}) == "(merged)");
}

TEST_CASE("a shard count out of range is refused rather than listing its missing shards") {
  CHECK(merge_error({shard("{\"runs\": 0}", "[1, 1000000000000000]")}) ==
        "shard1.json: a shard count of 1000000000000000 (1 to 1,000,000)");
  CHECK(merge_error({shard("{\"runs\": 0}", "[7, 3]")}) == "shard1.json: shard 7 of 3");
}

}  // namespace hardening_test
