// Determinism is enforced by a machine, not by review: sim/ and lockalgos/ may
// not reach for real time, unseeded randomness, threads, or the standard
// library's (implementation-defined) distributions.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tidy_test {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> banned_uses(const fs::path& dir) {
  static const std::regex banned(
      R"(system_clock|steady_clock|high_resolution_clock|random_device|\bs?rand\s*\(|std::thread|std::jthread|std::async|\btime\s*\(\s*(nullptr|NULL|0)\s*\)|gettimeofday|clock_gettime|_distribution\b|std::mt19937|std::unordered_)");
  std::vector<std::string> hits;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".h") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      if (std::regex_search(code, banned)) hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  return hits;
}

}  // namespace

TEST_CASE("the simulation core uses no wall clock, unseeded randomness, threads or std distributions") {
  for (const char* dir : {"sim", "lockalgos"}) {
    const fs::path path = fs::path(LOCKSIM_SOURCE_DIR) / dir;
    REQUIRE(fs::is_directory(path));
    const auto hits = banned_uses(path);
    for (const auto& h : hits) MESSAGE(h);
    CHECK(hits.empty());
  }
}

// LIVE mode's real-time code lives in live/, and the simulation core never reaches for it.
TEST_CASE("the simulation core includes nothing from live/") {
  static const std::regex live_include(R"(^\s*#\s*include\s*["<]live/)");
  std::vector<std::string> hits;
  for (const char* dir : {"sim", "lockalgos"}) {
    for (const auto& entry : fs::recursive_directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        if (std::regex_search(line, live_include)) hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  for (const auto& h : hits) MESSAGE(h);
  CHECK(hits.empty());
}

// The coroutine types come from sim/coroutine.hpp alone: it picks <coroutine>
// or, for the WebAssembly build's libc++ (web/), <experimental/coroutine>.
// A file that includes either itself, or names std::coroutine_handle and its
// kin, builds natively and breaks the playground's build.
TEST_CASE("every file takes the coroutine types from sim/coroutine.hpp") {
  static const std::regex direct(R"((#\s*include\s*<(experimental/)?coroutine>)|std::(experimental::)?(coroutine_handle|noop_coroutine|suspend_always|suspend_never)\b)");
  std::vector<std::string> hits;
  for (const char* dir : {"sim", "lockalgos", "judge", "harness", "reports", "live", "cli", "web", "tests", "fuzz", "bench"}) {
    const fs::path root = fs::path(LOCKSIM_SOURCE_DIR) / dir;
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h")) continue;
      if (entry.path() == fs::path(LOCKSIM_SOURCE_DIR) / "sim" / "coroutine.hpp") continue;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        const auto comment = line.find("//");
        const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
        if (std::regex_search(code, direct)) hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
      }
    }
  }
  for (const auto& h : hits) MESSAGE(h);
  CHECK(hits.empty());
}

// g++ 12 corrupts aggregate temporaries inside co_await expressions (task.hpp).
std::vector<std::string> braced_temporaries_in_co_await(const fs::path& dir) {
  static const std::regex pattern(R"(co_await[^;]*\{\s*\.[a-z_]+\s*=)");
  std::vector<std::string> hits;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || (entry.path().extension() != ".cpp" && entry.path().extension() != ".hpp")) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (std::regex_search(line, pattern)) hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
  }
  return hits;
}

TEST_CASE("no co_await expression builds an aggregate temporary (g++ 12 miscompiles it)") {
  for (const char* dir : {"sim", "lockalgos", "judge", "harness", "reports", "cli", "tests"}) {
    const auto hits = braced_temporaries_in_co_await(fs::path(LOCKSIM_SOURCE_DIR) / dir);
    for (const auto& h : hits) MESSAGE(h);
    CHECK(hits.empty());
  }
}

// g++ 12 also miscompiles some co_await expressions used directly as an `if`
// or `while` condition: await into a named local first, then test it.
std::vector<std::string> co_await_in_conditions(const fs::path& dir) {
  static const std::regex pattern(R"(\b(if|while)\s*\(\s*[!(\s]*co_await\b)");
  std::vector<std::string> hits;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file() || (entry.path().extension() != ".cpp" && entry.path().extension() != ".hpp")) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      if (std::regex_search(code, pattern)) hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  return hits;
}

TEST_CASE("no if or while tests a co_await directly (g++ 12 miscompiles some of these)") {
  for (const char* dir : {"sim", "lockalgos", "judge", "harness", "reports", "cli", "tests"}) {
    const auto hits = co_await_in_conditions(fs::path(LOCKSIM_SOURCE_DIR) / dir);
    for (const auto& h : hits) MESSAGE(h);
    CHECK(hits.empty());
  }
}

TEST_CASE("the co_await-in-a-condition check catches if, else if, negated and parenthesised forms") {
  const fs::path tmp = fs::temp_directory_path() / "locksim-tidy-co-await-probe";
  fs::create_directories(tmp);
  // Split so that this file does not match itself.
  std::ofstream(tmp / "bad.cpp") << "if (co_" "await a()) {}\n"
                                    "} else if (!co_" "await b()) {}\n"
                                    "while ((co_" "await c()).ok()) {}\n"
                                    "const bool ok = co_await d();\n"
                                    "if (ok) {}  // if (co_" "await e()) in a comment is fine\n";
  const auto hits = co_await_in_conditions(tmp);
  fs::remove_all(tmp);
  CHECK(hits.size() == 3);
}

// doctest_discover_tests hands CTest the names as a CMake list: a ';' splits a
// name (the halves then match no test and "pass"), and brackets glue names together.
TEST_CASE("no test name has a character that CTest's test list would mangle") {
  static const std::regex test_case(R"(TEST_CASE\("((?:[^"\\]|\\.)*)\")");
  for (const auto& entry : fs::directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "tests")) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::sregex_iterator it(text.begin(), text.end(), test_case), end; it != end; ++it) {
      const std::string name = (*it)[1];
      INFO(entry.path().filename().string() << ": " << name);
      CHECK(name.find_first_of(";[]") == std::string::npos);
    }
  }
}

// A test marked may_fail, should_fail or skip cannot fail the suite: one so
// marked once passed for releases after the bug it pinned was fixed, and
// would have passed as well had it come back.
TEST_CASE("no test is marked so that it cannot fail the suite") {
  static const std::regex decorator(R"(TEST_CASE\([^\n]*\*\s*doctest::(may_fail|should_fail|expected_failures|skip)\b)");
  for (const auto& entry : fs::directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "tests")) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    INFO(entry.path().filename().string());
    CHECK_FALSE(std::regex_search(text, decorator));
  }
}

// CI compiles the tests in batches, several files in one translation unit
// (CMakeLists.txt, LOCKSIM_UNITY_BUILD): a file's helpers, aliases and `using`s
// must not meet another file's, so each file's code after its includes is in
// a namespace named after the file, closed at its end. The files of `dir`
// (tests/main.cpp, doctest's main, aside) that are not.
std::vector<std::string> outside_own_namespace(const fs::path& dir) {
  std::vector<std::string> hits;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".cpp" || entry.path().filename() == "main.cpp") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string stem = entry.path().stem().string();
    const auto open = text.find("\nnamespace " + stem + " {\n");
    bool ok = open != std::string::npos && text.ends_with("\n}  // namespace " + stem + "\n");
    // Before it, only comments, blank lines and the preprocessor.
    std::istringstream head(text.substr(0, open == std::string::npos ? 0 : open));
    for (std::string line; ok && std::getline(head, line);)
      ok = line.empty() || line.starts_with("//") || line.starts_with("#");
    if (!ok) hits.push_back(entry.path().filename().string());
  }
  return hits;
}

TEST_CASE("every test file's code is in a namespace named after the file") {
  const auto hits = outside_own_namespace(fs::path(LOCKSIM_SOURCE_DIR) / "tests");
  for (const auto& h : hits) MESSAGE(h);
  CHECK(hits.empty());
}

TEST_CASE("the own-namespace check itself catches code before it, another name and an unclosed one") {
  const fs::path tmp = fs::temp_directory_path() / "locksim-tidy-namespace-probe";
  fs::create_directories(tmp);
  std::ofstream(tmp / "good_test.cpp") << "// a test\n#include <string>\n\nnamespace good_test {\n\nint x;\n\n}  // namespace good_test\n";
  std::ofstream(tmp / "before_test.cpp") << "#include <string>\nusing namespace std;\nnamespace before_test {\n}  // namespace before_test\n";
  std::ofstream(tmp / "other_test.cpp") << "#include <string>\n\nnamespace another {\n}  // namespace another\n";
  std::ofstream(tmp / "open_test.cpp") << "#include <string>\n\nnamespace open_test {\nint x;\n";
  auto hits = outside_own_namespace(tmp);
  fs::remove_all(tmp);
  std::sort(hits.begin(), hits.end());
  CHECK(hits == std::vector<std::string>{"before_test.cpp", "open_test.cpp", "other_test.cpp"});
}

TEST_CASE("the tidy check itself catches a banned name") {
  const fs::path tmp = fs::temp_directory_path() / "locksim-tidy-probe";
  fs::create_directories(tmp);
  std::ofstream(tmp / "bad.cpp") << "auto t = std::chrono::steady_clock::now();\n// rand() in a comment is fine\n";
  const auto hits = banned_uses(tmp);
  fs::remove_all(tmp);
  CHECK(hits.size() == 1);
}

// The layers (CMakeLists.txt, LOCKSIM_LAYERS, lowest first): a folder may
// include only its own headers and those of the folders before it. The build
// enforces it (each layer's include path holds only those folders); this test
// states it over the sources and names the line that breaks it.
std::vector<std::string> layers() {
  std::ifstream in(fs::path(LOCKSIM_SOURCE_DIR) / "CMakeLists.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::smatch m;
  REQUIRE(std::regex_search(text, m, std::regex(R"(set\(LOCKSIM_LAYERS ([a-z ]+)\))")));
  std::vector<std::string> out;
  std::istringstream words(m[1].str());
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

std::vector<std::string> back_edges(const fs::path& root, const std::vector<std::string>& order) {
  static const std::regex include(R"(^\s*#\s*include\s*"([a-z_]+)/)");
  std::vector<std::string> hits;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const fs::path dir = root / order[i];
    if (!fs::is_directory(dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        std::smatch m;
        if (!std::regex_search(line, m, include)) continue;
        const auto at = std::find(order.begin(), order.end(), m[1].str());
        if (at != order.end() && static_cast<std::size_t>(at - order.begin()) > i)
          hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + order[i] + "/ includes " + m[1].str() + "/, a layer above it");
      }
    }
  }
  return hits;
}

TEST_CASE("no folder includes a folder above it in the layers") {
  const auto order = layers();
  CHECK(order.size() >= 5);
  CHECK(order.front() == "sim");
  const auto hits = back_edges(LOCKSIM_SOURCE_DIR, order);
  for (const auto& h : hits) MESSAGE(h);
  CHECK(hits.empty());
}

TEST_CASE("the layer check itself catches a back-edge") {
  const fs::path tmp = fs::temp_directory_path() / "locksim-tidy-layers-probe";
  fs::create_directories(tmp / "low");
  fs::create_directories(tmp / "high");
  std::ofstream(tmp / "low" / "a.cpp") << "#include \"low/b.hpp\"\n#include \"high/c.hpp\"\n";
  std::ofstream(tmp / "high" / "c.cpp") << "#include \"low/b.hpp\"\n";
  const auto hits = back_edges(tmp, {"low", "high"});
  fs::remove_all(tmp);
  CHECK(hits.size() == 1);
}

// A lock algorithm sees the world only through ClientEnv (lockalgos/client.hpp):
// lockalgos/ includes only its own headers and the plain sim/ vocabulary
// (tasks, time, randomness, messages, trace events, the Wakeup), and never names the
// simulator's World or Process.
std::vector<std::string> outside_client_env(const fs::path& dir) {
  static const std::regex include(R"(^\s*#\s*include\s*"([^"]+)\")");
  static const std::regex allowed(R"(lockalgos/[a-z_]+\.hpp|sim/(task|time|rng|message|trace|wakeup|coroutine|servers/kind|fencing)\.hpp)");
  static const std::regex simulator(R"(\bworld\s*\(|\bProcess\b|\bWorld\b)");
  std::vector<std::string> hits;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      const auto comment = line.find("//");
      const std::string code = comment == std::string::npos ? line : line.substr(0, comment);
      std::smatch m;
      const bool bad_include = std::regex_search(code, m, include) && !std::regex_match(m[1].str(), allowed);
      if (bad_include || std::regex_search(code, simulator))
        hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  return hits;
}

TEST_CASE("lock algorithms reach the world only through their ClientEnv") {
  const auto hits = outside_client_env(fs::path(LOCKSIM_SOURCE_DIR) / "lockalgos");
  for (const auto& h : hits) MESSAGE(h);
  CHECK(hits.empty());
}

TEST_CASE("the ClientEnv check itself catches a simulator header, a world and a process") {
  const fs::path tmp = fs::temp_directory_path() / "locksim-tidy-client-env-probe";
  fs::create_directories(tmp);
  std::ofstream(tmp / "bad.cpp") << "#include \"lockalgos/client.hpp\"\n#include \"sim/time.hpp\"\n"
                                    "#include \"sim/world.hpp\"\n#include \"harness/run.hpp\"\n"
                                    "auto& w = env.self.world();\nProcess& p = q;\n"
                                    "// the World and its Process in a comment are fine\n";
  const auto hits = outside_client_env(tmp);
  fs::remove_all(tmp);
  CHECK(hits.size() == 4);
}

// The suite leaves nothing in /tmp (issue 38: 14 files a run): tests/main.cpp
// points TMPDIR into a directory of the test process's own, removed when it
// ends, so a test's temporary files go where temp_directory_path() says,
// never to a path of its own making.
TEST_CASE("the suite's temporary files are in a directory of its own, and no test names /tmp") {
  const fs::path tmp = fs::temp_directory_path();
  CHECK(tmp.filename().string().rfind("locksim-tests-", 0) == 0);
  CHECK(fs::is_directory(tmp));
  static const std::regex named_tmp(R"re(["']/tmp\b)re");
  std::vector<std::string> hits;
  for (const auto& entry : fs::directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "tests")) {
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (std::regex_search(line, named_tmp)) hits.push_back(entry.path().filename().string() + ":" + std::to_string(n) + ": " + line);
  }
  for (const auto& h : hits) MESSAGE(h);
  CHECK(hits.empty());
}

// The code says why, not which issue asked: a reader of the code has no
// tracker. "issue 15" and the like belong in commit messages and notes; a
// library's own tracker (a GitHub issue of Redisson, say) is named with its
// project, as "Redisson #1602".
std::vector<std::string> issue_references(const fs::path& dir) {
  static const std::regex issue(R"(\b[Ii]ssues? \d+)");
  std::vector<std::string> hits;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const auto ext = entry.path().extension();
    if (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".c" && ext != ".js" && ext != ".mjs" && ext != ".py") continue;
    if (entry.path().string().find("node_modules") != std::string::npos) continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      if (std::regex_search(line, issue)) hits.push_back(entry.path().string() + ":" + std::to_string(n) + ": " + line);
  }
  return hits;
}

TEST_CASE("no code names the project's own issues: it says the reason") {
  for (const char* dir : {"sim", "judge", "harness", "lockalgos", "reports", "live", "cli", "web", "adapters"}) {
    const auto hits = issue_references(fs::path(LOCKSIM_SOURCE_DIR) / dir);
    for (const auto& h : hits) MESSAGE(h);
    CHECK(hits.empty());
  }
}

TEST_CASE("the issue-reference check itself catches one") {
  const fs::path dir = fs::temp_directory_path() / "tidy-issue-reference";
  fs::create_directories(dir);
  std::ofstream(dir / "a.hpp") << "// faster (issue 15)\n";
  CHECK(issue_references(dir).size() == 1);
  std::ofstream(dir / "a.hpp") << "// faster: a profile showed it\n";
  CHECK(issue_references(dir).empty());
  fs::remove_all(dir);
}

}  // namespace tidy_test
