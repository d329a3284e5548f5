// What the word tables (reports/words_*.cpp) check of themselves at compile
// time: one entry per id, in the ids' order. Internal to reports/.
#pragma once

#include "reports/words.hpp"

namespace locksim::words_detail {

constexpr bool in_order(const Entry (&table)[kWordCount]) {
  for (std::size_t i = 0; i < kWordCount; ++i)
    if (static_cast<std::size_t>(table[i].id) != i || table[i].text.empty()) return false;
  return true;
}

}  // namespace locksim::words_detail
