// `--format text|json`, parsed (cli/choice.hpp): the report for a person, or
// one JSON document for a tool.
#pragma once

#include <cstdint>

namespace locksim {

enum class Format : std::uint8_t { Text, Json };

}  // namespace locksim
