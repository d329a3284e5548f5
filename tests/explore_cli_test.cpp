// explore, merge and shrink as a user meets them: what they print, what
// they write, and their exit statuses.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

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
  const fs::path dir = fs::temp_directory_path() / ("locksim-explore-cli-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

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
  CHECK(flags.output.find("stale-write: shrunk to") != std::string::npos);
  // From a result file: its scenario, its options, its first failing runs.
  const std::string result = (dir / "r.json").string();
  REQUIRE(locksim("explore scenarios/kleppmann/gc-pause.toml --runs 200 --faults pause --result " + result).status == 0);
  const Outcome from = locksim("shrink --from " + result + " --out " + dir.string());
  CHECK(from.status == 0);
  CHECK(from.output.find("overlap: shrunk to") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("explore --boundary prints the value where the verdict flips and writes both sides") {
  const fs::path dir = scratch("boundary");
  const Outcome o = locksim("explore scenarios/kleppmann/gc-pause.toml --boundary fault[1].duration --out " + dir.string());
  CHECK(o.status == 0);
  CHECK(o.output.find("needs a pause of at least 30.") != std::string::npos);
  CHECK(fs::exists(dir / "gc-pause-boundary-below.toml"));
  CHECK(locksim("run " + (dir / "gc-pause-boundary-above.toml").string()).status == 0);  // it replays as it says
  CHECK(locksim("explore scenarios/kleppmann/gc-pause.toml --boundary lock.ttl").status == 2);
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
