// Unsigned numbers on the command line refuse a sign (cli/numbers.hpp): CLI11
// alone read "-1" as 2^64 - 1.
#include <doctest/doctest.h>

#include "tests/command_support.hpp"

namespace cli_numbers_test {

using namespace locksim::testing;

TEST_CASE("a negative seed or run count is refused with the option's name and exit 2, not wrapped around") {
  for (const char* args : {"run scenarios/kleppmann/gc-pause.toml --seed -1", "explore scenarios/kleppmann/gc-pause.toml --runs -5",
                           "explore scenarios/kleppmann/gc-pause.toml --seed=-3", "run scenarios/kleppmann/gc-pause.toml --arrows -1"}) {
    CAPTURE(args);
    const Outcome o = locksim_in_source(args);
    CHECK(o.status == 2);
    CHECK(o.output.find(": a whole number, 0 or more, without a sign") != std::string::npos);
  }
  CHECK(locksim_in_source("run scenarios/kleppmann/gc-pause.toml --seed 7").status == 0);
}

}  // namespace cli_numbers_test
