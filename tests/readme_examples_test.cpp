// The README's examples are what locksim prints today. An example is a code
// block fenced as ```console whose lines are `$ COMMAND` followed by what
// COMMAND prints on stdout; COMMAND starts with `build/locksim` or `locksim`
// and runs here, from the source tree, as the built binary.
//
//   ```console            the whole output: compared line by line, and
//                          rewritten by scripts/readme-examples
//   ```console abridged   a part of it: each line shown must be in the output,
//                          in order; a line "..." (any indent) stands for lines
//                          left out, and a line ending in " ..." for the rest of
//                          that line. scripts/readme-examples only checks these:
//                          an abridged block is edited by hand.
//   ```console abridged slow   the same, for a command of minutes: checked by
//                          scripts/readme-examples (LOCKSIM_SLOW_EXAMPLES=1),
//                          skipped by the suite.
//
// Every block in README.md with a `$ build/locksim` or `$ locksim` line must be
// one of the two, except `locksim live` (real time: no two runs agree).
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/command_support.hpp"

namespace readme_examples_test {

namespace fs = std::filesystem;
using locksim::testing::read_text;
using locksim::testing::run_command;

namespace {

struct Block {
  std::size_t first = 0, last = 0;  // line numbers (0-based) of the fences
  std::string info;                 // what follows the opening ```
  std::vector<std::string> body;
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<Block> blocks_of(const std::vector<std::string>& lines) {
  std::vector<Block> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    Block b{i, i, lines[i].substr(3), {}};
    std::size_t j = i + 1;
    while (j < lines.size() && lines[j].rfind("```", 0) != 0) b.body.push_back(lines[j++]);
    b.last = j;
    out.push_back(b);
    i = j;
  }
  return out;
}

bool is_command(const std::string& line) {
  return line.rfind("$ build/locksim ", 0) == 0 || line.rfind("$ locksim ", 0) == 0;
}

std::string rtrim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// What the command prints on stdout, run from the source tree with the built binary.
std::vector<std::string> fresh_output(const std::string& command_line) {
  std::string command = command_line.substr(2);
  const std::string program = command.rfind("build/locksim", 0) == 0 ? "build/locksim" : "locksim";
  command = std::string(LOCKSIM_BINARY) + command.substr(program.size());
  const auto o = run_command("cd " + std::string(LOCKSIM_SOURCE_DIR) + " && " + command + " 2>/dev/null");
  std::vector<std::string> out;
  for (const std::string& l : lines_of(o.output)) out.push_back(rtrim(l));
  return out;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

bool is_ellipsis(const std::string& line) {
  const auto b = line.find_first_not_of(' ');
  return b != std::string::npos && line.substr(b) == "...";
}

// Each shown line in the output, in order: "..." skips, "TEXT ..." matches a line starting with TEXT.
// Returns the first shown line that is not there, or "" when all are.
std::string abridged_mismatch(const std::vector<std::string>& shown, const std::vector<std::string>& output) {
  std::size_t at = 0;
  for (const std::string& raw : shown) {
    const std::string s = rtrim(raw);
    if (is_ellipsis(s)) continue;
    const bool prefix = s.size() > 4 && s.compare(s.size() - 4, 4, " ...") == 0;
    const std::string want = prefix ? s.substr(0, s.size() - 3) : s;
    while (at < output.size() && !(prefix ? output[at].rfind(want, 0) == 0 : output[at] == want)) ++at;
    if (at == output.size()) return s;
    ++at;
  }
  return "";
}

// The block's commands, each with the lines shown after it.
std::vector<std::pair<std::string, std::vector<std::string>>> commands_of(const Block& b) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const std::string& line : b.body) {
    if (is_command(line))
      out.push_back({line, {}});
    else if (!out.empty())
      out.back().second.push_back(line);
  }
  return out;
}

// Checks (or, with LOCKSIM_WRITE_EXAMPLES set, rewrites) the examples of one file. Returns how many it saw.
int check_examples(const fs::path& file, bool must_mark_all) {
  std::vector<std::string> lines = lines_of(read_text(file));
  const bool write = std::getenv("LOCKSIM_WRITE_EXAMPLES") != nullptr;
  int seen = 0;
  const auto blocks = blocks_of(lines);
  for (auto b = blocks.rbegin(); b != blocks.rend(); ++b) {  // from the end: a rewrite keeps earlier line numbers
    const auto commands = commands_of(*b);
    if (commands.empty()) continue;
    INFO(file.filename().string() << " line " << b->first + 1 << ": " << commands.front().first);
    const bool live = commands.front().first.find("locksim live") != std::string::npos;
    const bool slow = b->info == "console abridged slow";
    if (b->info != "console" && b->info != "console abridged" && !slow) {
      if (must_mark_all && !live) FAIL_CHECK("an example of locksim's output must be fenced ```console or ```console abridged");
      continue;
    }
    ++seen;
    if (slow && std::getenv("LOCKSIM_SLOW_EXAMPLES") == nullptr) {
      MESSAGE("a slow example, not run (scripts/readme-examples runs it)");
      continue;
    }
    if (b->info != "console") {
      for (const auto& [command, shown] : commands) {
        INFO(command);
        CHECK(abridged_mismatch(shown, fresh_output(command)) == "");
      }
      continue;
    }
    std::vector<std::string> body;
    for (const auto& [command, shown] : commands) {
      INFO(command);
      const auto fresh = fresh_output(command);
      std::vector<std::string> trimmed;
      for (const std::string& s : shown) trimmed.push_back(rtrim(s));
      if (!write) CHECK(joined(trimmed) == joined(fresh));
      body.push_back(command);
      body.insert(body.end(), fresh.begin(), fresh.end());
    }
    lines.erase(lines.begin() + static_cast<long>(b->first) + 1, lines.begin() + static_cast<long>(b->last));
    lines.insert(lines.begin() + static_cast<long>(b->first) + 1, body.begin(), body.end());
  }
  if (write) {
    std::ofstream out(file);
    for (const std::string& l : lines) out << l << '\n';
  }
  return seen;
}

}  // namespace

TEST_CASE("the examples in README.md and docs/ are what a fresh run prints (scripts/readme-examples rewrites them)") {
  CHECK(check_examples(fs::path(LOCKSIM_SOURCE_DIR) / "README.md", true) >= 2);
  for (const auto& e : fs::directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "docs"))
    if (e.path().extension() == ".md") check_examples(e.path(), false);
}

TEST_CASE("an abridged example matches its shown lines in order, with ... for lines and for the rest of a line") {
  const std::vector<std::string> output = {"title", "  1. a", "  2. b", "Verdict: overlap", "seed 1 · trace 15fd"};
  CHECK(abridged_mismatch({"title", "   ...", "Verdict: overlap", "seed 1 · trace ..."}, output) == "");
  CHECK(abridged_mismatch({"  2. b", "  1. a"}, output) == "  1. a");  // out of order
  CHECK(abridged_mismatch({"seed 1 · trace af2e"}, output) == "seed 1 · trace af2e");  // a stale hash
  CHECK(abridged_mismatch({"Verdict: ..."}, output) == "");
  CHECK(abridged_mismatch({"Verdict: none ..."}, output) == "Verdict: none ...");
}

TEST_CASE("a whole example is found and its commands split from what they print") {
  const auto blocks = blocks_of({"text", "```console", "$ locksim list", "a", "$ build/locksim run x", "b", "c", "```", "```sh", "ls", "```"});
  REQUIRE(blocks.size() == 2);
  CHECK(blocks[0].info == "console");
  const auto commands = commands_of(blocks[0]);
  REQUIRE(commands.size() == 2);
  CHECK(commands[1].first == "$ build/locksim run x");
  CHECK(commands[1].second == std::vector<std::string>{"b", "c"});
  CHECK(commands_of(blocks[1]).empty());
}

}  // namespace readme_examples_test
