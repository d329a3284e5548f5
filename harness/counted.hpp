// A count and its English noun, for what is said in English alone: the
// scenario errors of harness/ (a person's bad input, in English like every
// error). Anything told in either language counts with say_count
// (reports/words.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace locksim {

// "1 watch notification", "2 watch notifications": a count and its noun,
// plural unless the count is one. `many` is for nouns that do not just add
// an 's' ("1 process", "2 processes").
inline std::string counted(std::uint64_t n, std::string_view one, std::string_view many = {}) {
  std::string s = std::to_string(n) + " ";
  if (n == 1) s += one;
  else if (!many.empty()) s += many;
  else (s += one) += "s";
  return s;
}

}  // namespace locksim
