// The HTML report in a real browser: headless Chromium (Debian's package,
// installed by scripts/install-deps) loads a run's page; the DOM it renders
// has a lane per process, the violations marked, the axis said, the arrows
// labelled, and a retry loop folded.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "reports/diagram.hpp"
#include "tests/support.hpp"

namespace browser_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {

std::string run_capture(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 65536> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  pclose(pipe);
  return out;
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

// The DOM headless Chromium renders of the run's page.
std::string rendered(const RunResult& r, const std::string& name) {
  REQUIRE_MESSAGE(fs::exists("/usr/bin/chromium"), "Debian's chromium is missing: scripts/install-deps installs it");
  const fs::path dir = fs::temp_directory_path() / ("locksim-browser-test-" + name);
  fs::create_directories(dir);
  const fs::path page = dir / (name + ".html");
  std::ofstream(page) << html_report(r);
  // Flags as this machine needs them: no sandbox as root, and no background
  // networking (the machine has no network but its package registries).
  const std::string dom = run_capture(
      "/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync --user-data-dir=" +
      (dir / "profile").string() + " --dump-dom file://" + page.string() + " 2>/dev/null");
  fs::remove_all(dir);
  REQUIRE_MESSAGE(dom.find("</html>") != std::string::npos, "chromium printed no DOM");
  return dom;
}

}  // namespace

TEST_CASE("headless Chromium renders the GC-pause page with a lane per process and the overlap marked") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  const std::string dom = rendered(r, "gc-pause");
  CHECK(count(dom, "class=\"lane ") == r.world->trace().processes().size());
  for (const char* who : {"client1", "client2", "redis1", "storage"})
    CHECK_MESSAGE(dom.find(std::string("data-process=\"") + who + "\"") != std::string::npos, who);
  CHECK(dom.find("class=\"violation violation-overlap\"") != std::string::npos);
  CHECK(dom.find("class=\"violation violation-stale-write\"") != std::string::npos);
  CHECK(dom.find("Verdict: overlap, stale-write, lost-update") != std::string::npos);
  // Drawn to scale and saying so; the grant and the writes labelled; redis1's strip of whose value it holds.
  CHECK(dom.find("class=\"axis-caption axis-linear\"") != std::string::npos);
  CHECK(count(dom, "class=\"arrow-label\"") >= 3);
  CHECK(dom.find("class=\"holds\" data-process=\"redis1\" data-holder=\"client1\"") != std::string::npos);
}

TEST_CASE("headless Chromium renders a retry loop as one folded line of the story and one mark on the diagram") {
  const RunResult r = run_scenario(catalogue("scenarios/redis/redlock-restart-delayed.toml"));
  const std::string dom = rendered(r, "restart-delayed");
  CHECK(count(dom, "<li class=\"folded\"><details>") == 2);
  CHECK(dom.find("client2 tries and fails 40 times") != std::string::npos);
  CHECK(dom.find("redis3 restarts") != std::string::npos);
  CHECK(count(dom, "class=\"retries\"") == 1);
}

}  // namespace browser_test
