// The boundary search's result (harness/explore_boundary.hpp) as text and
// as JSON: where a scenario's verdict flips as one of its numbers moves.
#pragma once

#include <string>

#include "harness/explore_boundary.hpp"
#include "reports/lang.hpp"

namespace locksim {

std::string boundary_text(const Scenario& s, const BoundaryResult& b, Lang lang = Lang::En);
std::string boundary_json(const Scenario& s, const BoundaryResult& b);

}  // namespace locksim
