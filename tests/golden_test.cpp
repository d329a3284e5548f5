// Golden outputs (SimGrid's .tesh habit): what a user reads of every catalogue
// scenario is checked in beside it, and any change shows up here as a diff.
// After an intended change, `scripts/golden` rewrites them all; the review
// then sees the difference.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace golden_test {

namespace fs = std::filesystem;

namespace {

std::string run_locksim(const std::string& args) {
  const std::string cmd = "cd '" + std::string(LOCKSIM_SOURCE_DIR) + "' && '" + LOCKSIM_BINARY + "' " + args + " 2>/dev/null";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 65536> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The first line where the two differ, both versions, for the failure message.
std::string first_difference(const std::string& want, const std::string& got) {
  const auto a = lines_of(want), b = lines_of(got);
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "(no line)", y = i < b.size() ? b[i] : "(no line)";
    if (x != y) return "line " + std::to_string(i + 1) + ":\n  golden: " + x + "\n  now:    " + y;
  }
  return "";
}

std::vector<std::string> catalogue() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios"))
    if (e.path().extension() == ".toml")
      files.push_back(fs::relative(e.path(), LOCKSIM_SOURCE_DIR).string());
  std::sort(files.begin(), files.end());
  return files;
}

void check_golden(const std::string& scenario, const std::string& suffix, const std::string& args) {
  const fs::path golden = fs::path(LOCKSIM_SOURCE_DIR) / (scenario.substr(0, scenario.size() - 5) + suffix);
  INFO("scenario: " << scenario << " (after an intended change: scripts/golden)");
  REQUIRE_MESSAGE(fs::exists(golden), "no golden output " << golden.string());
  const std::string want = read_file(golden);
  const std::string got = run_locksim(args);
  CHECK_MESSAGE(want == got, first_difference(want, got));
}

}  // namespace

TEST_CASE("every catalogue scenario's text report is the golden one checked in beside it") {
  const auto files = catalogue();
  CHECK(files.size() >= 45);
  for (const std::string& f : files) check_golden(f, ".golden.txt", "run " + f);
}

TEST_CASE("the JSON reports of four catalogue scenarios are the golden ones") {
  int n = 0;
  for (const std::string& f : catalogue()) {
    const fs::path g = fs::path(LOCKSIM_SOURCE_DIR) / (f.substr(0, f.size() - 5) + ".golden.json");
    if (!fs::exists(g)) continue;
    check_golden(f, ".golden.json", "run " + f + " --format json");
    ++n;
  }
  CHECK(n >= 4);
}

TEST_CASE("the diagrams of two catalogue scenarios are the golden ones") {
  int n = 0;
  for (const std::string& f : catalogue()) {
    const fs::path g = fs::path(LOCKSIM_SOURCE_DIR) / (f.substr(0, f.size() - 5) + ".golden.svg");
    if (!fs::exists(g)) continue;
    const fs::path out = fs::temp_directory_path() / ("locksim-golden-" + std::to_string(n) + ".svg");
    run_locksim("run " + f + " --svg '" + out.string() + "'");
    INFO("scenario: " << f << " (after an intended change: scripts/golden)");
    const std::string want = read_file(g), got = read_file(out);
    CHECK_MESSAGE(want == got, first_difference(want, got));
    fs::remove(out);
    ++n;
  }
  CHECK(n >= 2);
}

}  // namespace golden_test
