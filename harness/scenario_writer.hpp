// A Scenario back to TOML: what `explore --out` and `shrink` write, and what
// `locksim run` reads back to the same scenario.
#pragma once

#include <string>

#include "harness/scenario.hpp"

namespace locksim {

std::string to_toml(const Scenario& s);

}  // namespace locksim
