// The command line's modes around a run: --version, --ignore-expect, the
// course mode (--quiz, --predict) and the progress line of a long run.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "tests/command_support.hpp"

namespace run_modes_test {

namespace fs = std::filesystem;
using locksim::testing::locksim_in_source;
using locksim::testing::run_command;
using locksim::testing::shell_quote;

namespace {

const std::string kGcPause = "scenarios/kleppmann/gc-pause.toml";

// A copy of a catalogue scenario with one text replaced, in a scratch directory.
std::string changed_copy(const std::string& relative, const std::string& from, const std::string& to) {
  std::string text = locksim::testing::read_text(fs::path(LOCKSIM_SOURCE_DIR) / relative);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  static const locksim::testing::ScratchDir dir("locksim-run-modes");
  const fs::path path = dir.path() / ("changed-" + fs::path(relative).filename().string());
  std::ofstream(path) << text;
  return path.string();
}

// locksim ARGS with a terminal for its stdin, stdout and stderr (util-linux's script), fed `input`.
locksim::testing::Outcome on_a_terminal(const std::string& args, const std::string& input = "",
                                        const std::string& env = "") {
  const std::string inner = env + " " + std::string(LOCKSIM_BINARY) + " " + args;
  return run_command("cd " + std::string(LOCKSIM_SOURCE_DIR) + " && printf %s " + shell_quote(input) +
                     " | script -qec " + shell_quote(inner) + " /dev/null");
}

}  // namespace

TEST_CASE("--version prints the project's version and the commit it was configured from") {
  const auto o = locksim_in_source("--version");
  CHECK(o.status == 0);
  std::smatch m;
  REQUIRE(std::regex_search(o.output, m, std::regex(R"(^locksim (\d+\.\d+\.\d+)( \(commit ([0-9a-f]{12})\))?\n)")));
  CHECK(m[1].str() == LOCKSIM_PROJECT_VERSION);
  // In a git checkout, the commit is HEAD's (the build re-configures when HEAD moves).
  const auto head = run_command("git -C " + std::string(LOCKSIM_SOURCE_DIR) + " rev-parse --short=12 HEAD 2>/dev/null");
  if (head.status == 0 && head.output.size() == 13) CHECK(m[3].str() == head.output.substr(0, 12));
}

TEST_CASE("--ignore-expect judges a changed copy by its verdict alone, exit 0 when safe and 1 when not") {
  // The pause shortened to fit in the lease: the copy's [expect] (overlap, ...) no longer applies.
  const std::string safe = changed_copy(kGcPause, "duration = \"40s\"", "duration = \"28s\"");
  const auto plain = locksim_in_source("run " + safe);
  CHECK(plain.status == 1);
  CHECK(plain.output.find("NOT as expected") != std::string::npos);
  const auto ignoring = locksim_in_source("run " + safe + " --ignore-expect");
  CHECK(ignoring.status == 0);
  CHECK(ignoring.output.find("\nVerdict: no violation\n") != std::string::npos);
  CHECK(ignoring.output.find("expected") == std::string::npos);

  const auto unsafe = locksim_in_source("run " + kGcPause + " --ignore-expect");
  CHECK(unsafe.status == 1);
  CHECK(unsafe.output.find("\nVerdict: overlap, stale-write, lost-update\n") != std::string::npos);
  const auto json = locksim_in_source("run " + kGcPause + " --ignore-expect --format json");
  CHECK(json.output.find("\"expected\":null") != std::string::npos);
  CHECK(json.output.find("\"as_expected\":false") != std::string::npos);
}

TEST_CASE("--quiz shows the set-up without the title, the story or the expected verdict, and how to reveal the run") {
  for (const char* flag : {"--quiz", "--no-spoilers"}) {
    INFO(flag);
    const auto o = locksim_in_source("run " + kGcPause + " " + flag + " < /dev/null");
    CHECK(o.status == 0);
    CHECK(o.output.find("GC pause outlives the lease") == std::string::npos);  // the title
    CHECK(o.output.find("stop-the-world") == std::string::npos);               // the about
    CHECK(o.output.find("as expected") == std::string::npos);
    CHECK(o.output.find("Verdict") == std::string::npos);                      // nothing ran
    CHECK(o.output.find("redis-single, ttl 30s, fencing none") != std::string::npos);
    CHECK(o.output.find("target = \"client1\", duration = \"40s\"") != std::string::npos);
    CHECK(o.output.find("client2, from 31s") != std::string::npos);
    CHECK(o.output.find("stale-write") != std::string::npos);  // the kinds to choose from
    CHECK(o.output.find("locksim run " + kGcPause + " --predict KINDS") != std::string::npos);
  }
  CHECK(locksim_in_source("run " + kGcPause + " --quiz --format json").status == 2);
}

TEST_CASE("--predict runs the scenario, tells it without its expectation and scores the prediction") {
  const auto right = locksim_in_source("run " + kGcPause + " --predict overlap,stale-write,lost-update");
  CHECK(right.status == 0);
  CHECK(right.output.find("\nVerdict: overlap, stale-write, lost-update\n") != std::string::npos);
  CHECK(right.output.find("as expected") == std::string::npos);
  CHECK(right.output.find("\nRight.\n") != std::string::npos);

  const auto partly = locksim_in_source("run " + kGcPause + " --predict overlap");
  CHECK(partly.status == 1);
  CHECK(partly.output.find("Not quite: the run also shows stale-write, lost-update.") != std::string::npos);

  const auto wrong = locksim_in_source("run scenarios/redis/redlock-drift-fixed.toml --predict \"overlap stuck\"");
  CHECK(wrong.status == 1);
  CHECK(wrong.output.find("it does not show overlap, stuck.") != std::string::npos);
  CHECK(locksim_in_source("run scenarios/redis/redlock-drift-fixed.toml --predict none").status == 0);

  const auto bad = locksim_in_source("run " + kGcPause + " --predict overlapp");
  CHECK(bad.status == 2);
  CHECK(bad.output.find("\"overlapp\" is not a violation kind") != std::string::npos);
}

TEST_CASE("--quiz at a terminal asks for a prediction, asks again after a wrong name, and scores it") {
  const auto o = on_a_terminal("run " + kGcPause + " --quiz", "stale writes\noverlap, stale-write\n");
  CHECK(o.status == 1);  // lost-update was missed
  CHECK(o.output.find("\"stale\" is not a violation kind") != std::string::npos);
  CHECK(o.output.find("You predicted: overlap, stale-write. The run shows: overlap, stale-write, lost-update.") != std::string::npos);
  CHECK(o.output.find("as expected") == std::string::npos);
}

TEST_CASE("a run draws a progress line on a terminal's stderr and nothing when stderr is not a terminal") {
  // Many events in a long simulated time: a client taking the lock again and again.
  const locksim::testing::ScratchDir dir("locksim-run-progress");
  const fs::path file = dir.path() / "busy.toml";
  std::ofstream(file) << "title = \"busy\"\nabout = \"a\"\nsource = \"s\"\nduration = \"10m\"\n"
                         "[lock]\nalgorithm = \"redis-single\"\nttl = \"10s\"\n[[node]]\nname = \"redis1\"\n"
                         "[[client]]\nname = \"c\"\ncount = 3\njob = \"hold\"\nhold = \"10ms\"\nrepeat = \"forever\"\n";
  const auto shown = on_a_terminal("run " + file.string(), "", "LOCKSIM_PROGRESS_DELAY_MS=0");
  CHECK(shown.status == 0);
  INFO(shown.output.substr(0, 400));
  CHECK(std::regex_search(shown.output, std::regex(R"(\r  simulated [0-9.hms]+ of 600s \([0-9.]+%\), [0-9,]+ events, ETA )")));
  CHECK(shown.output.find("Verdict: no violation") != std::string::npos);

  const auto piped = run_command("LOCKSIM_PROGRESS_DELAY_MS=0 " + std::string(LOCKSIM_BINARY) + " run " + file.string() +
                                 " 2>&1 >/dev/null");
  CHECK(piped.status == 0);
  CHECK(piped.output.empty());
}

}  // namespace run_modes_test
