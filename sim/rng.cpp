#include "sim/rng.hpp"

namespace locksim {

std::string format_range(const DurationRange& r) {
  if (r.is_fixed()) return format_duration(r.lo);
  return format_duration(r.lo) + ".." + format_duration(r.hi);
}

}  // namespace locksim
