// Fuzz target: the writer's round trip. A scenario the loader accepts,
// written back (to_toml) and loaded again, must load, write the same text,
// and run to the same trace hash; anything else aborts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common.hpp"
#include "harness/scenario.hpp"
#include "harness/scenario_writer.hpp"

using namespace locksim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Scenario s;
  try {
    s = parse_scenario(text, "fuzz.toml");
  } catch (const ScenarioError&) {
    return 0;
  }
  const std::string written = to_toml(s);
  Scenario again;
  try {
    again = parse_scenario(written, "written.toml");
  } catch (const ScenarioError& e) {
    fuzz::fail(std::string("the loader refuses what the writer wrote: ") + e.what() + "\n" + written);
  }
  if (to_toml(again) != written) fuzz::fail("written twice, the texts differ:\n" + written + "\n---\n" + to_toml(again));
  const RunResult a = fuzz::bounded_run(s), b = fuzz::bounded_run(again);
  if (a.trace_hash != b.trace_hash)
    fuzz::fail("the written scenario runs to trace " + b.trace_hash + ", the original to " + a.trace_hash + "\n" + written);
  return 0;
}
