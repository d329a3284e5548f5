// explore, merge and shrink as a user meets them: what they print, what
// they write, and their exit statuses.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <thread>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace explore_cli_test {

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int status;
  std::string output;
};

// stdout only, or stdout and stderr together.
Outcome locksim(const std::string& args, bool with_stderr = true) {
  const std::string cmd = "cd " + std::string(LOCKSIM_SOURCE_DIR) + " && " + LOCKSIM_BINARY + " " + args +
                          (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

fs::path scratch(const std::string& name) {
  // This test process's own: /tmp is shared by every checkout's test runs.
  const fs::path dir = fs::temp_directory_path() / ("locksim-explore-cli-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Starts locksim ARGS in the source tree, its stdout and stderr to `log`,
// sends it SIGINT after `delay_ms`, and returns its exit status (-1: killed).
int interrupted_after(const std::vector<std::string>& args, int delay_ms, const fs::path& log) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || chdir(LOCKSIM_SOURCE_DIR) != 0) _exit(127);
    dup2(fd, 1);
    dup2(fd, 2);
    std::vector<char*> argv{const_cast<char*>(LOCKSIM_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(LOCKSIM_BINARY, argv.data());
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  kill(pid, SIGINT);
  int raw = 0;
  waitpid(pid, &raw, 0);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
}

std::string text_of(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("Ctrl-C during explore prints the summary of the runs done, marked partial, and exits 130") {
  const fs::path dir = scratch("interrupt-runs");
  const int status = interrupted_after({"explore", "scenarios/kleppmann/gc-pause.toml", "--runs", "200000", "--jobs", "2",
                                        "--out", (dir / "found").string()},
                                       700, dir / "log");
  const std::string log = text_of(dir / "log");
  INFO(log);
  CHECK(status == 130);
  CHECK(log.find("PARTIAL: interrupted; the summary of the ") != std::string::npos);
  CHECK(log.find(" of 200000 runs that finished") != std::string::npos);
  CHECK(log.find("overlap") != std::string::npos);
  CHECK(!fs::exists(dir / "found"));  // interrupted before shrinking: nothing started, nothing half-written
  fs::remove_all(dir);
}

TEST_CASE("explore --out interrupted at any moment leaves only whole scenario files, never a partial one") {
  const fs::path dir = scratch("interrupt-out");
  int interrupted = 0;
  // About 0.15 s of runs, then about as long shrinking three kinds: the
  // interrupts fall in either phase (or after the end, or, at worst, before
  // the handler is installed: killed, nothing written).
  for (int delay_ms : {40, 80, 120, 160, 200, 240, 280, 330, 400}) {
    const fs::path out = dir / ("found-" + std::to_string(delay_ms));
    const int status = interrupted_after(
        {"explore", "scenarios/redisson/multilock-node-down-redlock.toml", "--runs", "400", "--out", out.string()}, delay_ms,
        dir / "log");
    INFO(delay_ms << " ms: " << text_of(dir / "log"));
    CHECK((status == 130 || status == 0 || status == 1 || status == -1));
    interrupted += status == 130;
    if (!fs::exists(out)) continue;
    for (const auto& entry : fs::directory_iterator(out)) {
      const std::string name = entry.path().filename().string();
      INFO(name);
      CHECK(name.find(".locksim-") == std::string::npos);  // cli/output_file.cpp's temporaries
      CHECK(entry.path().extension() == ".toml");
      // Whole: it loads and replays (exit 0 or 1, never 2: a cut file would not load).
      const Outcome r = locksim("run " + entry.path().string());
      CHECK((r.status == 0 || r.status == 1));
    }
  }
  CHECK(interrupted > 0);
  fs::remove_all(dir);
}

TEST_CASE("explore --format json --out prints one JSON document, with what it shrank, and nothing else") {
  const fs::path dir = scratch("json");
  const Outcome o = locksim("explore scenarios/kleppmann/gc-pause.toml --runs 40 --format json --out " + dir.string(), false);
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(o.output));  // the whole of stdout is one document
  REQUIRE(j.contains("shrunk"));
  for (const auto& [kind, s] : j["shrunk"].items()) CHECK(fs::exists(s["path"].get<std::string>()));
  fs::remove_all(dir);
}

TEST_CASE("explore exits 1 when a run shows what the scenario does not allow, 0 when everything found is allowed") {
  // gc-pause allows the overlap, stale write and lost update its pause gives.
  CHECK(locksim("explore scenarios/kleppmann/gc-pause.toml --runs 50 --faults pause").status == 0);
  // gc-pause-fenced allows an overlap only: the fenced window's stale write is not.
  CHECK(locksim("explore scenarios/kleppmann/gc-pause-fenced.toml --runs 100").status == 1);
  // The same rule for the exhaustive search.
  CHECK(locksim("explore scenarios/kleppmann/gc-pause-fenced.toml --exhaustive --depth 1").status == 1);
  CHECK(locksim("explore scenarios/kleppmann/gc-pause.toml --runs 5 --svg x.svg").status == 2);
}

TEST_CASE("explore --replay tells the whole run, lists its faults, writes every report, and its footer replays it") {
  const fs::path dir = scratch("replay");
  const std::string replay = "explore scenarios/kleppmann/gc-pause-fenced.toml --replay 7505579150628244444 --faults pause,clock-jump";
  const Outcome o = locksim(replay + " --svg " + (dir / "d.svg").string() + " --html " + (dir / "d.html").string() + " --trace " +
                            (dir / "t.jsonl").string());
  INFO(o.output);
  CHECK(o.output.find("its faults, drawn from its seed:") != std::string::npos);
  CHECK(o.output.find("a long run") == std::string::npos);  // every step is told
  CHECK(o.output.find("Verdict:") != std::string::npos);
  CHECK(o.output.find("replay: locksim " + replay) != std::string::npos);  // with --faults, as given
  for (const char* f : {"d.svg", "d.html", "t.jsonl"}) CHECK(fs::file_size(dir / f) > 0);
  const Outcome j = locksim(replay + " --format json", false);
  nlohmann::json doc;
  REQUIRE_NOTHROW(doc = nlohmann::json::parse(j.output));
  CHECK(doc["replay"] == "locksim " + replay);
  CHECK(doc["explore"]["faults"].size() >= 1);
  fs::remove_all(dir);
}

TEST_CASE("shrink without explore's flags says what it drew with, and --from takes them from a result") {
  const fs::path dir = scratch("shrink");
  // A run found with --faults pause,clock-jump shows nothing when drawn from every kind.
  const Outcome missing = locksim("shrink scenarios/kleppmann/gc-pause-fenced.toml --seed 7505579150628244444 --out " + dir.string());
  CHECK(missing.status == 1);
  CHECK(missing.output.find("drawn with the default options") != std::string::npos);
  CHECK(missing.output.find("--faults") != std::string::npos);
  const Outcome flags = locksim("shrink scenarios/kleppmann/gc-pause-fenced.toml --seed 7505579150628244444 --faults pause,clock-jump --out " +
                                dir.string());
  CHECK(flags.status == 0);
  // Shrunk for each of the three kinds the run shows, it is one schedule: one file, named by all three.
  CHECK(flags.output.find("  overlap, stale-write, lost-update: shrunk to 1 fault in ") != std::string::npos);
  CHECK(std::count(flags.output.begin(), flags.output.end(), '\n') == 1);
  const fs::path written = dir / "gc-pause-fenced-overlap-stale-write-lost-update-7505579150628244444.toml";
  REQUIRE(fs::exists(written));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  CHECK(locksim("run " + written.string()).status == 0);  // it shows what its name says
  fs::remove(written);
  // From a result file: its scenario, its options, its first failing runs.
  const std::string result = (dir / "r.json").string();
  REQUIRE(locksim("explore scenarios/kleppmann/gc-pause.toml --runs 200 --faults pause --result " + result).status == 0);
  const Outcome from = locksim("shrink --from " + result + " --out " + dir.string());
  CHECK(from.status == 0);
  CHECK(from.output.find("overlap, stale-write, lost-update: shrunk to") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("explore --boundary prints the value where the verdict flips and writes both sides") {
  const fs::path dir = scratch("boundary");
  const Outcome o = locksim("explore scenarios/kleppmann/gc-pause.toml --boundary fault[1].duration --out " + dir.string());
  CHECK(o.status == 0);
  CHECK(o.output.find("needs a pause of at least 30.") != std::string::npos);
  CHECK(fs::exists(dir / "gc-pause-lower-below.toml"));
  CHECK(locksim("run " + (dir / "gc-pause-lower-above.toml").string()).status == 0);  // it replays as it says
  CHECK(locksim("run " + (dir / "gc-pause-lower-below.toml").string()).status == 0);
  CHECK(fs::exists(dir / "gc-pause-upper-above.toml"));  // a pause past the run's end: client1 never writes
  const Outcome j = locksim("explore scenarios/kleppmann/gc-pause.toml --boundary lock.ttl --format json");
  CHECK(j.status == 0);
  const auto doc = nlohmann::json::parse(j.output);  // one JSON document, both edges in it
  CHECK(doc["lower"]["above"]["value"] == "1ms");
  CHECK(doc["upper"]["below"]["value_ns"].get<std::int64_t>() > 40'000'000'000);
  CHECK(locksim("explore scenarios/kleppmann/gc-pause.toml --boundary lock.algorithm").status == 2);
  fs::remove_all(dir);
}

TEST_CASE("merge combines exhaustive shards and exits 1 when one is missing") {
  const fs::path dir = scratch("merge");
  const std::string search = "explore scenarios/kleppmann/gc-pause-fenced.toml --exhaustive --faults pause --lengths 30.001s --depth 2";
  locksim(search + " --shard 1/2 --result " + (dir / "s1.json").string());
  locksim(search + " --shard 2/2 --result " + (dir / "s2.json").string());
  const Outcome both = locksim("merge " + (dir / "s1.json").string() + " " + (dir / "s2.json").string());
  CHECK(both.output.find("exhaustive search, depth 2") != std::string::npos);
  CHECK(both.status == 1);  // its stale write is not allowed
  const Outcome one = locksim("merge " + (dir / "s1.json").string());
  CHECK(one.output.find("shards missing: 2") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace explore_cli_test
