// No function is over 120 lines (data tables aside): a long function is
// several ideas waiting for names. And no file is over 1,000 lines (the word
// tables aside): a long file is several primitives waiting for a header each. Found by brace matching, not by a parser:
// a definition is a line ending in "{" after a parameter list's ")", that is
// not a control statement, an else, or an assignment of a lambda or a table.
// A function that only builds a table (its first statement is `static const
// T table = {` or `return {`, as lockalgos/registry.cpp's) is a data table.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

namespace function_length_test {

namespace fs = std::filesystem;

namespace {

constexpr int kMaxLines = 120;

// The line without comments, strings and character literals.
std::string code_of(const std::string& line) {
  static const std::regex literals(R"("(\\.|[^"\\])*"|'(\\.|[^'\\])*')");
  // Digit separators (250'000) first: they are not character literals.
  std::string plain;
  for (std::size_t i = 0; i < line.size(); ++i)
    if (!(line[i] == '\'' && i > 0 && i + 1 < line.size() && std::isxdigit(static_cast<unsigned char>(line[i - 1])) &&
          std::isxdigit(static_cast<unsigned char>(line[i + 1]))))
      plain += line[i];
  std::string code = std::regex_replace(plain, literals, "\"\"");
  const auto comment = code.find("//");
  return comment == std::string::npos ? code : code.substr(0, comment);
}

bool opens_function(const std::string& code) {
  static const std::regex control(R"(^\s*(\}|if\b|for\b|while\b|switch\b|catch\b|else\b|do\b|return\b|case\b|try\b))");
  static const std::regex ends(R"(\)\s*(const)?\s*(noexcept)?\s*(override|final)?\s*(->\s*[\w:<>&*, ]+)?\s*\{\s*$)");
  if (std::regex_search(code, control) || code.find(';') != std::string::npos) return false;
  const auto paren = code.find('('), assign = code.find('=');
  if (assign != std::string::npos && (paren == std::string::npos || assign < paren)) return false;
  return std::regex_search(code, ends);
}

// The function opened at line i is only a table: its first statement starts one.
bool builds_a_table(const std::vector<std::string>& code, std::size_t i) {
  static const std::regex table(R"(^\s*(static\s+const\b[^(]*=\s*\{|return\s*\{)\s*$)");
  for (std::size_t j = i + 1; j < code.size(); ++j)
    if (code[j].find_first_not_of(" \t") != std::string::npos) return std::regex_search(code[j], table);
  return false;
}

std::vector<std::string> long_functions(const fs::path& dir) {
  std::vector<std::string> hits;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const auto ext = entry.path().extension();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
    std::ifstream in(entry.path());
    std::vector<std::string> code;
    for (std::string line; std::getline(in, line);) code.push_back(code_of(line));
    for (std::size_t i = 0; i < code.size(); ++i) {
      if (!opens_function(code[i])) continue;
      long depth = 0;
      std::size_t j = i;
      for (; j < code.size(); ++j) {
        for (const char c : code[j]) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
        if (depth <= 0) break;
      }
      const std::size_t lines = j - i + 1;
      if (lines <= kMaxLines || builds_a_table(code, i)) continue;
      hits.push_back(entry.path().string() + ":" + std::to_string(i + 1) + ": " + std::to_string(lines) + " lines");
      i = j;  // what it holds is counted with it
    }
  }
  return hits;
}

}  // namespace

TEST_CASE("no function is over 120 lines, in the code or the tests") {
  for (const char* dir : {"sim", "lockalgos", "judge", "harness", "reports", "live", "cli", "tests", "fuzz"}) {
    const fs::path path = fs::path(LOCKSIM_SOURCE_DIR) / dir;
    if (!fs::exists(path)) continue;
    const auto hits = long_functions(path);
    for (const auto& h : hits) MESSAGE(h);
    CHECK(hits.empty());
  }
}

TEST_CASE("no file is over 1,000 lines, but the word tables") {
  constexpr std::size_t kMaxFileLines = 1000;
  // Data, a line a phrase: each grows with what locksim says, not with what it does.
  const std::vector<std::string> tables = {"reports/words_en.cpp", "reports/words_zh.cpp"};
  const fs::path root(LOCKSIM_SOURCE_DIR);
  std::size_t files = 0;
  for (const char* dir : {"sim", "lockalgos", "judge", "harness", "reports", "live", "cli", "tests", "fuzz"}) {
    if (!fs::exists(root / dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".c")) continue;
      const std::string name = fs::relative(entry.path(), root).generic_string();
      std::ifstream in(entry.path());
      std::size_t lines = 0;
      for (std::string line; std::getline(in, line);) ++lines;
      ++files;
      if (std::find(tables.begin(), tables.end(), name) != tables.end()) continue;
      INFO(name << ": " << lines << " lines");
      CHECK(lines <= kMaxFileLines);
    }
  }
  CHECK(files > 100);
}

TEST_CASE("the function length check itself catches a long function and lets a long table, a function that only builds one, and a lambda's caller be") {
  const fs::path tmp = fs::temp_directory_path() / ("locksim-function-length-probe-" + std::to_string(::getpid()));
  fs::create_directories(tmp);
  {
    std::ofstream out(tmp / "probe.cpp");
    out << "int long_one(int x) {\n";
    for (int i = 0; i < 130; ++i) out << "  x += " << i << "'000;  // a { in a comment\n";
    out << "  return x;\n}\n";
    out << "const int table[] = {\n";
    for (int i = 0; i < 200; ++i) out << "  " << i << ",\n";
    out << "};\n";
    out << "void caller() {\n  run([&](int y) {\n    return y;\n  });\n  const char* s = \"}}}\";\n}\n";
    out << "const std::vector<int>& registry() {\n  static const std::vector<int> all = {\n";
    for (int i = 0; i < 200; ++i) out << "      " << i << ",\n";
    out << "  };\n  return all;\n}\n";
  }
  const auto hits = long_functions(tmp);
  fs::remove_all(tmp);
  REQUIRE(hits.size() == 1);
  CHECK(hits[0].find("probe.cpp:1: 133 lines") != std::string::npos);
}

}  // namespace function_length_test
