// The languages locksim's reports speak (`--lang en|zh`). The words
// themselves are in reports/words.hpp; this is all a report's options need.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace locksim {

enum class Lang : std::uint8_t { En, Zh };
inline constexpr Lang kAllLangs[] = {Lang::En, Lang::Zh};

std::string_view lang_name(Lang l);  // "en", "zh"
std::optional<Lang> parse_lang(std::string_view name);
// "--lang: "fr" is not a language locksim speaks (en, zh)".
std::string unknown_lang_message(std::string_view name);

}  // namespace locksim
