// The table of violation kinds (judge/violation_kinds.inc): each line is
// a kind with its name, its checker, its words and its mark, and each of
// those holds for every line.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "judge/checkers.hpp"
#include "reports/words.hpp"
#include "sim/word_ids.hpp"
#include "tests/support.hpp"

namespace violation_kinds_test {

using namespace locksim;

TEST_CASE("every violation kind of the table has a name, a mark, words in both languages, and a checker that finds it") {
  std::set<std::string_view> names;
  std::set<char> marks;
  for (ViolationKind k : kAllViolationKinds) {
    const std::string_view name = violation_name(k);
    INFO(name);
    CHECK(names.insert(name).second);  // no two kinds share a name
    CHECK(parse_violation(name) == k);
    CHECK(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string_view::npos);
    const char mark = violation_mark(k);
    CHECK(marks.insert(mark).second);  // nor a heatmap letter
    CHECK(mark >= 'A');
    CHECK(mark <= 'Z');  // a capital letter, as a cell shows it
    for (Lang lang : {Lang::En, Lang::Zh}) {
      CHECK_FALSE(kind_words(lang, k).empty());
      CHECK_FALSE(kind_help(lang, k).empty());
      CHECK(kind_help(lang, k).find('\n') == std::string::npos);
    }
    CHECK(kind_words(Lang::En, k) == name);  // English says the name the files use
    CHECK(kind_help(Lang::Zh, k) != kind_help(Lang::En, k));
  }
  CHECK_FALSE(parse_violation("overlaps").has_value());

  // The checker of each line finds its kind: some catalogue scenario expects
  // it, and the judge, run, reports it.
  std::set<ViolationKind> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(LOCKSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    const Scenario s = load_scenario(entry.path().string());
    bool wanted = false;
    for (ViolationKind k : s.expect.violations) wanted |= !found.count(k);
    if (!wanted) continue;
    for (const Violation& v : run_scenario(s).violations)
      if (s.expect.violations.count(v.kind)) found.insert(v.kind);
  }
  for (ViolationKind k : kAllViolationKinds) {
    INFO(violation_name(k));
    CHECK(found.count(k));
  }
}

}  // namespace violation_kinds_test
