// Control characters in a scenario file are refused, located, before toml++
// sees them: toml++ 3.3.0 asserts on a table header key that starts with one
// (parse_key's TOML_ASSERT_ASSUME), which fuzzing found as an abort in a build
// without NDEBUG and which is undefined behaviour in one with it. The same
// message in every build type is the point: ctest runs this file in Release
// (build/), in the sanitizer build (build-asan/, Debug) and the fuzz corpus
// keeps the input (fuzz/corpus/scenario/control-character-header.toml).
#include <doctest/doctest.h>

#include <string>

#include "harness/scenario.hpp"

namespace control_character_test {

using namespace locksim;

namespace {

// A valid scenario; `client_header` is the line that opens its client table.
std::string scenario_with(const std::string& client_header, const std::string& client_body = "name = \"client1\"\n") {
  return "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"10s\"\n"  // lines 1-4
         "\n[lock]\nalgorithm = \"redis-single\"\nttl = \"1s\"\n"              // lines 5-8
         "\n[[node]]\nname = \"redis1\"\n"                                     // lines 9-11
         "\n" + client_header + "\n" + client_body;                            // lines 12-14...
}

std::string error_of(const std::string& text) {
  try {
    parse_scenario(text, "x.toml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("a table header key that starts with a control character is refused with its line, not parsed") {
  // The input fuzzing found: byte 0x1D opening the [[client]] header's key.
  CHECK(error_of(scenario_with("[[\x1D" "client]]")) ==
        "x.toml:13: byte 0x1D (a control character) is not allowed in a scenario file");
  CHECK(error_of(scenario_with("[\x1D]")) == "x.toml:13: byte 0x1D (a control character) is not allowed in a scenario file");
}

TEST_CASE("a control character at the start of a line in a client table is refused with its line") {
  CHECK(error_of(scenario_with("[[client]]", "\x1D" "name = \"client1\"\n")) ==
        "x.toml:14: byte 0x1D (a control character) is not allowed in a scenario file");
}

TEST_CASE("control characters anywhere are refused, NUL and DEL included, and the first one is named") {
  CHECK(error_of(scenario_with("[[client]]", "name = \"cli\x01" "ent1\"\n")) ==
        "x.toml:14: byte 0x01 (a control character) is not allowed in a scenario file");
  CHECK(error_of(std::string("title = \"t\0\"\n", 13)) ==
        "x.toml:1: byte 0x00 (a control character) is not allowed in a scenario file");
  CHECK(error_of("# a comment\x7F\n" + scenario_with("[[client]]")) ==
        "x.toml:1: byte 0x7F (a control character) is not allowed in a scenario file");
  CHECK(error_of(scenario_with("[[client]]", "name = \"client1\"\n\x1B[0m\x1F\n")) ==
        "x.toml:15: byte 0x1B (a control character) is not allowed in a scenario file");
}

TEST_CASE("tabs, CRLF line ends and escaped control characters in strings are still accepted") {
  std::string crlf;
  for (const char c : scenario_with("[[client]]", "name\t= \"client1\"\t# tab\n"))
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const Scenario s = parse_scenario(crlf, "x.toml");
  CHECK(s.clients.at(0).name == "client1");
  // An escape is text, not a control character: it reaches the scenario as the byte.
  const Scenario t = parse_scenario("title = \"a\\u001Db\"\n" + scenario_with("[[client]]").substr(12), "x.toml");
  CHECK(t.title == "a\x1D" "b");
}

TEST_CASE("a table header that cannot start with a key is refused with its line, not parsed") {
  // toml++ 3.3.0 asserts on these (marzer/tomlplusplus#294): fuzzing found them.
  const std::string msg = ": a table header must start with a key name (a letter, digit, _, - or a quote)";
  CHECK(error_of(scenario_with("[[[client]]")) == "x.toml:13" + msg);
  CHECK(error_of(scenario_with("[&")) == "x.toml:13" + msg);
  CHECK(error_of(scenario_with("  [ .a]")) == "x.toml:13" + msg);
  CHECK(error_of(scenario_with("[[ *x]]")) == "x.toml:13" + msg);
}

TEST_CASE("lines inside strings and arrays that start with a bracket are not table headers") {
  const std::string about = "title = \"t\"\nabout = \"\"\"\n[*] a note\n[&] another \\\"\"\" still\n\"\"\"\n";
  const Scenario s = parse_scenario(about + scenario_with("[[client]]").substr(24), "x.toml");
  CHECK(s.about == "[*] a note\n[&] another \"\"\" still\n");
  const Scenario t = parse_scenario(scenario_with("[[client]]") + "\n[[fault]]\nkind = \"partition\"\nat = \"1s\"\ngroups = [\n"
                                    "  [\"client1\"],\n  [\"redis1\"],\n]\n", "x.toml");
  CHECK(t.faults.size() == 1);
}

TEST_CASE("a brace where an array expects a value is refused with its line, not parsed") {
  // toml++ 3.3.0 asserts in parse_value (parser.inl:2549) on a '}' after an
  // array's '[' or ','; fuzz_roundtrip found it (fuzz/corpus/roundtrip/brace-in-array.toml).
  const std::string msg = ": a '}' inside an array opened with '['";
  const std::string base = scenario_with("[[client]]");
  CHECK(error_of(base + "\n[expect]\nviolations = [\"overlap\", }\n") == "x.toml:17" + msg);
  CHECK(error_of(base + "\n[expect]\nviolations = [\n  }]\n") == "x.toml:18" + msg);
  CHECK(error_of(base + "\n[expect]\nviolations = [[}]]\n") == "x.toml:17" + msg);
  // A brace in a string or a comment is no bracket; inline tables in arrays still load.
  CHECK(error_of(base + "\n[expect]\nviolations = [\"}\", # }\n]\n").find(msg) == std::string::npos);
  CHECK(error_of(base + "\n[[fault]]\nkind = \"partition\"\nat = \"1s\"\ngroups = [[\"client1\"], [\"redis1\"]]\nx = [{a = 1}]\n")
            .find(msg) == std::string::npos);
}

}  // namespace control_character_test
