// Every sentence's id, in the word tables' order (reports/words_en.cpp,
// reports/words_zh.cpp): what a Phrase (sim/phrase.hpp) says.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sim/phrase.hpp"

namespace locksim {

enum class W : std::uint16_t {
#define LOCKSIM_WORD(id) id,
#include "sim/word_ids.inc"
#undef LOCKSIM_WORD
  Count
};
inline constexpr std::size_t kWordCount = static_cast<std::size_t>(W::Count);

}  // namespace locksim
