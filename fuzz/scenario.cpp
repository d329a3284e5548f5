// Fuzz target: the scenario loader, then a bounded run of what it accepts.
// Bytes -> parse_scenario: every bad input must be a ScenarioError (anything
// else escaping, or a sanitizer report, is a crash); an accepted scenario
// must run (its first 5,000 events) without one.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common.hpp"
#include "harness/scenario.hpp"

using namespace locksim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Scenario s;
  try {
    s = parse_scenario(text, "fuzz.toml");
  } catch (const ScenarioError&) {
    return 0;
  }
  fuzz::bounded_run(s);
  return 0;
}
