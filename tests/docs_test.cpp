// The project stands on its own: the catalogue in docs/catalogue.md names
// every scenario file with the verdict the file expects, every path the
// README and the docs name is in the repository, and no file points outside
// it to the design notes the project started from.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "judge/checkers.hpp"
#include "tests/command_support.hpp"
#include "tests/support.hpp"

namespace docs_test {

namespace fs = std::filesystem;
using locksim::testing::read_text;
using locksim::testing::run_command;

namespace {

const fs::path kSource = LOCKSIM_SOURCE_DIR;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The catalogue's tables: "| `scenarios/DIR/NAME.toml` | kind, kind |" -> the kinds as written.
std::map<std::string, std::string> catalogue_rows(const std::string& text) {
  static const std::regex row(R"(^\| `(scenarios/[^`]+\.toml)` \|([^|]*)\|\s*$)");
  std::map<std::string, std::string> out;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      INFO(line);
      CHECK(out.count(m[1]) == 0);  // one row per file
      out[m[1]] = trim(m[2]);
    }
  }
  return out;
}

// Every `scenarios/....toml` the text names, in a table or not.
std::set<std::string> named_scenarios(const std::string& text) {
  static const std::regex name(R"(scenarios/[A-Za-z0-9_./@-]+\.toml)");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it)
    out.insert(it->str());
  return out;
}

// The [expect] list of a scenario file, written as the catalogue writes it ("none" when empty).
std::string expected_as_written(const std::string& relative) {
  const locksim::Scenario s = locksim::testing::catalogue(relative);
  std::set<std::string> kinds;
  for (locksim::ViolationKind k : s.expect.violations) kinds.insert(std::string(locksim::violation_name(k)));
  return kinds.empty() ? "none" : [&] {
    std::string out;
    for (const std::string& k : kinds) out += (out.empty() ? "" : ", ") + k;
    return out;
  }();
}

std::string sorted_kinds(const std::string& written) {
  std::set<std::string> kinds;
  std::istringstream in(written);
  for (std::string k; std::getline(in, k, ',');) kinds.insert(trim(k));
  std::string out;
  for (const std::string& k : kinds) out += (out.empty() ? "" : ", ") + k;
  return out;
}

// The repository's own files: git's list in a checkout, else every file but the build trees.
std::vector<fs::path> repository_files() {
  std::vector<fs::path> out;
  if (fs::exists(kSource / ".git")) {
    const auto listed = run_command("cd " + kSource.string() + " && git ls-files 2>/dev/null");
    if (listed.status == 0) {
      for (const std::string& line : lines_of(listed.output))
        if (!line.empty()) out.push_back(kSource / line);
      return out;
    }
  }
  for (auto it = fs::recursive_directory_iterator(kSource); it != fs::recursive_directory_iterator(); ++it) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) out.push_back(it->path());
  }
  return out;
}

}  // namespace

TEST_CASE("docs/catalogue.md names every catalogue scenario, and every file it names exists") {
  const std::string text = read_text(kSource / "docs" / "catalogue.md");
  const std::set<std::string> named = named_scenarios(text);
  int on_disk = 0;
  for (const auto& e : fs::recursive_directory_iterator(kSource / "scenarios")) {
    if (e.path().extension() != ".toml") continue;
    const std::string relative = fs::relative(e.path(), kSource).generic_string();
    ++on_disk;
    if (relative.rfind("scenarios/found/", 0) == 0) continue;  // explore's finds may wait for their entry
    INFO(relative << " is not in docs/catalogue.md: give it an entry, or a row in its entry's table");
    CHECK(named.count(relative) == 1);
  }
  CHECK(on_disk >= 50);
  for (const std::string& relative : named) {
    INFO("docs/catalogue.md names " << relative << ", which does not exist");
    CHECK(fs::is_regular_file(kSource / relative));
  }
}

TEST_CASE("each verdict in docs/catalogue.md's tables is the one its scenario's expect table declares") {
  const auto rows = catalogue_rows(read_text(kSource / "docs" / "catalogue.md"));
  CHECK(rows.size() >= 50);
  for (const auto& [relative, written] : rows) {
    if (!fs::is_regular_file(kSource / relative)) continue;  // the test above says so
    INFO(relative);
    CHECK(sorted_kinds(written) == expected_as_written(relative));
  }
}

TEST_CASE("the verdict check reads what it should: a wrong verdict or a missing row is seen") {
  const auto rows = catalogue_rows("| file | verdict |\n|---|---|\n"
                                   "| `scenarios/kleppmann/gc-pause.toml` | overlap |\n"
                                   "| `scenarios/redis/get-then-del-fixed.toml` | none |\n");
  REQUIRE(rows.size() == 2);
  CHECK(sorted_kinds(rows.at("scenarios/kleppmann/gc-pause.toml")) !=
        expected_as_written("scenarios/kleppmann/gc-pause.toml"));
  CHECK(sorted_kinds(rows.at("scenarios/redis/get-then-del-fixed.toml")) ==
        expected_as_written("scenarios/redis/get-then-del-fixed.toml"));
  CHECK(named_scenarios("see `scenarios/a/b-c.toml`, and scenarios/x/y.toml.").size() == 2);
}

TEST_CASE("no file of the repository refers to the design notes outside it") {
  // Spelled in two pieces so that this file does not match itself.
  const std::string outside = std::string("../") + "shared";
  const std::string absolute = std::string("/work/") + "shared";
  const auto files = repository_files();
  CHECK(files.size() > 100);
  std::vector<std::string> hits;
  for (const fs::path& f : files) {
    if (!fs::is_regular_file(f)) continue;
    const std::string text = read_text(f);
    if (text.find(outside) != std::string::npos || text.find(absolute) != std::string::npos)
      hits.push_back(fs::relative(f, kSource).generic_string());
  }
  std::string list;
  for (const std::string& h : hits) list += " " + h;
  INFO("files that point outside the repository:" << list);
  CHECK(hits.empty());
}

TEST_CASE("every docs/ file and scenario the README and the docs name is in the repository") {
  // A path of ours starts a word; docs/algorithms-*.md also cite the paths of other repositories.
  static const std::regex path(R"re((?:^|[\s`(\["])((?:docs|scenarios|bench|scripts)/[A-Za-z0-9_./-]*[A-Za-z0-9_-](?:\.[a-z]+)?))re");
  std::vector<fs::path> texts = {kSource / "README.md", kSource / "bench" / "README.md"};
  for (const auto& e : fs::directory_iterator(kSource / "docs"))
    if (e.path().extension() == ".md" && e.path().filename().string().rfind("algorithms-", 0) != 0)
      texts.push_back(e.path());
  int checked = 0;
  for (const fs::path& t : texts) {
    const std::string text = read_text(t);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), path); it != std::sregex_iterator(); ++it) {
      const std::string p = (*it)[1].str();
      // Whole names only: a path with a placeholder (NAME, DIR, ...) or a file a command writes is not one.
      if (p.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos || p.find("my.") != std::string::npos)
        continue;
      const bool whole = p.find('.') != std::string::npos || p.back() == '/';
      if (!whole && !fs::exists(kSource / p)) continue;  // a word like "docs/" in prose
      INFO(t.filename().string() << " names " << p);
      CHECK(fs::exists(kSource / p));
      ++checked;
    }
  }
  CHECK(checked > 50);
}

namespace {

// scripts/install-deps's package lines: "  NAME [NAME...]   # what uses them", inside its arrays.
struct PackageLine {
  std::vector<std::string> packages;
  std::string users;
};

std::vector<PackageLine> install_deps_lines(std::string* bench_list) {
  std::vector<PackageLine> out;
  std::string array;
  for (const std::string& line : lines_of(read_text(kSource / "scripts" / "install-deps"))) {
    static const std::regex opens(R"(^([a-z_]+)=\($)");
    std::smatch m;
    if (std::regex_match(line, m, opens)) {
      array = m[1];
      continue;
    }
    if (trim(line) == ")") array.clear();
    if (array.empty() || trim(line).empty()) continue;
    const auto hash = line.find('#');
    PackageLine p;
    std::istringstream names(line.substr(0, hash));
    for (std::string n; names >> n;) {
      p.packages.push_back(n);
      if (array == "bench_packages" && bench_list) *bench_list += " " + n;
    }
    p.users = hash == std::string::npos ? "" : line.substr(hash + 1);
    out.push_back(p);
  }
  return out;
}

}  // namespace

TEST_CASE("scripts/install-deps names what uses each package, and every file it names exists") {
  const auto lines = install_deps_lines(nullptr);
  CHECK(lines.size() >= 15);
  // A file of ours starts a word with a lower-case folder (not /usr/..., not ASan/UBSan).
  static const std::regex path(R"((?:^|[\s(])([a-z]+/[A-Za-z0-9_./-]*))");
  for (const PackageLine& p : lines) {
    INFO(p.packages.front());
    CHECK_FALSE(p.users.empty());
    int named = 0;
    for (auto it = std::sregex_iterator(p.users.begin(), p.users.end(), path); it != std::sregex_iterator(); ++it) {
      std::string f = (*it)[1].str();
      while (!f.empty() && (f.back() == '.' || f.back() == ',')) f.pop_back();
      INFO(f);
      CHECK(fs::exists(kSource / f));
      ++named;
    }
    CHECK(named >= 1);
  }
}

TEST_CASE("scripts/install-deps --bench covers every package bench/run installs") {
  std::string bench;
  install_deps_lines(&bench);
  const std::string run = read_text(kSource / "bench" / "run");
  static const std::regex listed(R"re(pkgs = \[([^\]]*)\])re");
  std::smatch m;
  REQUIRE(std::regex_search(run, m, listed));
  static const std::regex quoted(R"re("([a-z0-9+.-]+)")re");
  const std::string list = m[1];
  int n = 0;
  for (auto it = std::sregex_iterator(list.begin(), list.end(), quoted); it != std::sregex_iterator(); ++it) {
    const std::string pkg = (*it)[1];
    INFO(pkg);
    ++n;
    const bool in_bench = (bench + " ").find(" " + pkg + " ") != std::string::npos;
    const bool in_main = read_text(kSource / "scripts" / "install-deps").find(" " + pkg + " ") != std::string::npos;
    CHECK((in_bench || in_main));
  }
  CHECK(n >= 5);
  CHECK(run.find("valgrind") != std::string::npos);
  CHECK((bench + " ").find(" valgrind ") != std::string::npos);
}

}  // namespace docs_test
