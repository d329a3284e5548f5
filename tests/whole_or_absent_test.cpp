// What locksim writes is whole or absent: a run interrupted while its trace
// is being written leaves no file under the name asked for, and no temporary
// beside it (cli/output_file.hpp).
#include <doctest/doctest.h>

#include <filesystem>

#include "tests/command_support.hpp"

namespace whole_or_absent_test {

using namespace locksim::testing;
namespace fs = std::filesystem;

TEST_CASE("a run interrupted while writing its trace and page leaves neither, nor any temporary") {
  ScratchDir dir("locksim-whole-or-absent");
  const std::string trace = (dir.path() / "trace.jsonl").string(), page = (dir.path() / "page.html").string();
  // The benchmark's simulated hour of 100 clients, every event written as
  // JSON: many seconds of work, interrupted after one (timeout's status 124
  // says it was cut short, not finished).
  const Outcome o = run_command("cd " + std::string(LOCKSIM_SOURCE_DIR) + " && timeout -s INT 1 " + LOCKSIM_BINARY +
                                " run bench/redlock-contention.toml --trace " + shell_quote(trace) + " --html " +
                                shell_quote(page) + " >/dev/null 2>&1; echo $?");
  CHECK(o.output == "124\n");
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("a run that finishes leaves its trace whole under its name, and nothing else") {
  ScratchDir dir("locksim-whole-or-absent-done");
  const std::string trace = (dir.path() / "trace.jsonl").string();
  const Outcome o = locksim_in_source("run scenarios/kleppmann/gc-pause.toml --trace " + shell_quote(trace));
  CHECK(o.status == 0);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    ++files;
    CHECK(e.path().filename() == "trace.jsonl");
  }
  CHECK(files == 1);
  CHECK(read_text(trace).find("\"event\":\"acquired\"") != std::string::npos);
}

}  // namespace whole_or_absent_test
