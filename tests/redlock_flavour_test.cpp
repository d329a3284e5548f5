// Each Redlock flavour is one version of one library: the flavour is parsed
// once into an enum, and each flavour's behaviours are pinned to its
// reference's code (the comments in lockalgos/redlock.cpp name the lines).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "harness/run.hpp"
#include "lockalgos/redlock.hpp"
#include "lockalgos/registry.hpp"
#include "tests/support.hpp"

using namespace locksim;
using namespace locksim::testing;

namespace {

std::string scenario_text(int nodes, const std::string& lock_keys, const std::string& extra = "",
                          const std::string& duration = "20s") {
  std::string s = "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"" + duration +
                  "\"\n[lock]\nalgorithm = \"redlock\"\n" + lock_keys + "\n[network]\ndelay = \"1ms\"\n";
  for (int i = 1; i <= nodes; ++i) s += "[[node]]\nname = \"redis" + std::to_string(i) + "\"\n";
  return s + extra;
}

}  // namespace

TEST_CASE("every flavour the registry lists is parsed once into its own enum value") {
  const AlgorithmInfo* redlock = find_algorithm("redlock");
  REQUIRE(redlock != nullptr);
  std::set<RedlockFlavour> seen;
  for (const OptionInfo& f : redlock->flavours) {
    INFO(f.key);
    const Scenario s = parse_scenario(
        scenario_text(3, "ttl = \"10s\"\nflavour = \"" + std::string(f.key) + "\"", "[[client]]\nname = \"c\"\n"), "t.toml");
    seen.insert(s.lock.options_as<RedlockOptions>().flavour);
  }
  CHECK(seen.size() == redlock->flavours.size());
  // No flavour given: the first, the default.
  const Scenario d = parse_scenario(scenario_text(3, "ttl = \"10s\"", "[[client]]\nname = \"c\"\n"), "t.toml");
  CHECK(d.lock.options_as<RedlockOptions>().flavour == RedlockFlavour::RedlockRb);
}
