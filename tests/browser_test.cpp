// The HTML report in a real browser: headless Chromium (Debian's package,
// installed by scripts/install-deps) loads the GC-pause page; the DOM it
// renders has a lane per process and the violations marked.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "reports/diagram.hpp"
#include "tests/support.hpp"

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

}  // namespace

TEST_CASE("headless Chromium renders the GC-pause page with a lane per process and the overlap marked") {
  REQUIRE_MESSAGE(fs::exists("/usr/bin/chromium"), "Debian's chromium is missing: scripts/install-deps installs it");
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  const fs::path dir = fs::temp_directory_path() / "locksim-browser-test";
  fs::create_directories(dir);
  const fs::path page = dir / "gc-pause.html";
  std::ofstream(page) << html_report(r);
  // Flags as this machine needs them: no sandbox as root, and no background
  // networking (the machine has no network but its package registries).
  const std::string dom = run_capture(
      "/usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
      "--disable-background-networking --disable-component-update --disable-sync --user-data-dir=" +
      (dir / "profile").string() + " --dump-dom file://" + page.string() + " 2>/dev/null");
  REQUIRE_MESSAGE(dom.find("</html>") != std::string::npos, "chromium printed no DOM");
  CHECK(count(dom, "class=\"lane ") == r.world->trace().processes().size());
  for (const char* who : {"client1", "client2", "redis1", "storage"})
    CHECK_MESSAGE(dom.find(std::string("data-process=\"") + who + "\"") != std::string::npos, who);
  CHECK(dom.find("class=\"violation violation-overlap\"") != std::string::npos);
  CHECK(dom.find("class=\"violation violation-stale-write\"") != std::string::npos);
  CHECK(dom.find("Verdict: overlap, stale-write, lost-update") != std::string::npos);
  fs::remove_all(dir);
}
