// `locksim new [ALGORITHM]`: a commented starting scenario for one algorithm
// of the registry, valid as written (two clients, no fault), with the
// algorithm's flavours and [lock] options listed as comments from the
// registry's help, and a fault and an [expect] table ready to uncomment.
#pragma once

#include <string>

#include "lockalgos/registry.hpp"

namespace locksim {

std::string new_scenario(const AlgorithmInfo& algorithm);

}  // namespace locksim
