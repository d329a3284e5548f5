// What the scenario loader refuses before toml++ sees the text: inputs on
// which toml++ 3.3.0 (Debian 12's) asserts instead of reporting an error —
// an abort in a build with assertions, undefined behaviour in Debian's
// NDEBUG library. Each throws a ScenarioError naming the file and line.
#pragma once

#include <string>
#include <string_view>

namespace locksim {

// Control characters (but tab, LF, CR) and DEL anywhere: TOML allows none
// outside escapes. toml++ asserts on one that starts a table header key
// ("[[\x1D"; impl/parser.inl parse_key, TOML_ASSERT_ASSUME).
void refuse_control_characters(std::string_view text, const std::string& path);

// A table header whose first character (after "[" or "[[" and blanks) cannot
// start a key: "[[[a]]", "[&", "[.a]". toml++ 3.3.0's parse_table_header()
// calls parse_key() on it, which asserts (marzer/tomlplusplus#294, fixed
// upstream by #301). Lines inside strings and arrays are not headers.
void refuse_bad_table_headers(std::string_view text, const std::string& path);

// What toml++'s description of a syntax error ("Error while parsing table
// header: expected ']', saw '\n'") says, in the loader's words and on one
// line ("the table header is not closed: ']' is missing before the end of
// the line"). The loader puts the file, line and column before it.
std::string toml_error_words(std::string_view description);

}  // namespace locksim
