// The words of a file that shrink writes: its title, source and about say
// what explore found and what the shrunk run needs.
#pragma once

#include "harness/scenario.hpp"

namespace locksim {

// Sets `shrunk`'s title, source and about (English: a scenario file's words)
// from the run it was shrunk from; its [expect] says what it shows.
void tell_shrunk(Scenario& shrunk, const Scenario& failing);

}  // namespace locksim
