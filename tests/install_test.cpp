// `cmake --install`: the program, the catalogue and the documentation under a
// prefix, and the installed program runs an installed scenario. (The .deb is
// built and inspected by scripts/package, outside the default suite.)
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/command_support.hpp"

namespace install_test {

namespace fs = std::filesystem;
using locksim::testing::run_command;

TEST_CASE("cmake --install puts locksim, its scenarios and its docs under the prefix, and the installed program runs") {
  const locksim::testing::ScratchDir scratch("locksim-install-test");
  const fs::path prefix = scratch.path();
  const auto install = run_command(std::string(LOCKSIM_CMAKE_COMMAND) + " --install " + LOCKSIM_BUILD_DIR +
                                   " --prefix " + prefix.string() + " 2>&1");
  INFO(install.output);
  REQUIRE(install.status == 0);

  const fs::path bin = prefix / "bin" / "locksim";
  const fs::path scenarios = prefix / "share" / "locksim" / "scenarios";
  REQUIRE(fs::is_regular_file(bin));
  CHECK(fs::is_regular_file(prefix / "share" / "doc" / "locksim" / "README.md"));
  CHECK(fs::is_regular_file(prefix / "share" / "doc" / "locksim" / "lab.md"));
  CHECK(fs::is_regular_file(prefix / "share" / "doc" / "locksim" / "scenarios.md"));
  CHECK(fs::is_regular_file(prefix / "share" / "doc" / "locksim" / "catalogue.md"));

  // Every catalogue scenario, and nothing else (no golden outputs).
  std::size_t source_count = 0, installed_count = 0, other = 0;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios"))
    source_count += e.path().extension() == ".toml";
  for (const auto& e : fs::recursive_directory_iterator(scenarios)) {
    if (!e.is_regular_file()) continue;
    (e.path().extension() == ".toml" ? installed_count : other)++;
  }
  CHECK(installed_count == source_count);
  CHECK(other == 0);

  // Run from elsewhere: nothing the program needs is left in the source or build tree.
  const auto run = run_command("cd / && " + bin.string() + " run " + (scenarios / "kleppmann" / "gc-pause.toml").string() + " 2>&1");
  CHECK(run.status == 0);
  CHECK(run.output.find("Verdict: overlap, stale-write, lost-update — as expected") != std::string::npos);
  const auto check = run_command("cd / && " + bin.string() + " check " + scenarios.string() + " 2>&1");
  CHECK(check.status == 0);
  const auto version = run_command(bin.string() + " --version");
  CHECK(version.output.find("scenarios: " + scenarios.string()) != std::string::npos);
}

}  // namespace install_test
