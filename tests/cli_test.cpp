// The command line as a user meets it: exit statuses, and one clear message
// naming file, line and key for every class of bad input.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cli_test {

namespace fs = std::filesystem;

namespace {

struct Outcome {
  int status;
  std::string output;  // stdout and stderr together
};

// A shell command line's outcome.
Outcome shell(const std::string& cmd) {
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  const int raw = pclose(pipe);
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, out};
}

Outcome locksim(const std::string& args) { return shell(std::string(LOCKSIM_BINARY) + " " + args + " 2>&1"); }

std::string source(const std::string& relative) { return (fs::path(LOCKSIM_SOURCE_DIR) / relative).string(); }

// A valid scenario with one line replaced: each bad-input test breaks one thing.
const char* kValid = R"(title = "t"
about = "a"
source = "s"
duration = "10s"

[lock]
algorithm = "redis-single"
ttl = "5s"

[[node]]
name = "redis1"

[[client]]
name = "client1"
work = "1s"

[[fault]]
at = "1s"
kind = "pause"
target = "client1"
duration = "2s"
)";

std::string write_variant(const std::string& name, const std::string& from, const std::string& to) {
  std::string text = kValid;
  if (!from.empty()) {
    const auto pos = text.find(from);
    REQUIRE(pos != std::string::npos);
    text.replace(pos, from.size(), to);
  }
  const fs::path path = fs::temp_directory_path() / ("locksim-cli-" + name + ".toml");
  std::ofstream(path) << text;
  return path.string();
}

void expect_bad_input(const std::string& file, const std::string& line, const std::string& needle) {
  const Outcome o = locksim("run " + file);
  INFO(o.output);
  CHECK(o.status == 2);
  CHECK(o.output.find(file + ":" + line + ":") != std::string::npos);
  CHECK(o.output.find(needle) != std::string::npos);
  CHECK(o.output.find("internal error") == std::string::npos);
}

}  // namespace

TEST_CASE("the flagship scenario prints the story, the verdict, the seed, the hash and the replay command") {
  const Outcome o = locksim("run " + source("scenarios/kleppmann/gc-pause.toml"));
  INFO(o.output);
  CHECK(o.status == 0);
  CHECK(o.output.find("client1 is paused for 40s") != std::string::npos);
  CHECK(o.output.find("redis1 expires 'lock'") != std::string::npos);
  CHECK(o.output.find("Verdict: overlap, stale-write, lost-update — as expected") != std::string::npos);
  CHECK(o.output.find("seed 1 · trace ") != std::string::npos);
  CHECK(o.output.find("replay: locksim run ") != std::string::npos);
}

TEST_CASE("the JSON report carries the contract's fields") {
  const Outcome o = locksim("run --format json " + source("scenarios/kleppmann/gc-pause-fenced.toml"));
  CHECK(o.status == 0);
  for (const char* field : {"\"scenario\":", "\"seed\":1", "\"algorithm\":\"redis-single\"", "\"violations\":[{\"kind\":\"overlap\"",
                            "\"at_ns\":", "\"until_ns\":", "\"processes\":[\"client1\",\"client2\"]", "\"expected\":[\"overlap\"]",
                            "\"as_expected\":true", "\"stats\":{\"events\":", "\"trace_hash\":"})
    CHECK_MESSAGE(o.output.find(field) != std::string::npos, field);
}

TEST_CASE("check runs the whole catalogue and exits 0 only when every outcome is as declared") {
  const Outcome ok = locksim("check " + source("scenarios"));
  INFO(ok.output);
  CHECK(ok.status == 0);
  CHECK(ok.output.find("FAIL") == std::string::npos);
  // A scenario whose declared verdict is wrong makes check (and run) exit 1.
  const std::string wrong = write_variant("wrong-expect", "", "");
  std::ofstream(wrong, std::ios::app) << "\n[expect]\nviolations = [\"overlap\"]\n";
  CHECK(locksim("check " + wrong).status == 1);
  CHECK(locksim("run " + wrong).status == 1);
}

TEST_CASE("run --check-determinism confirms two runs give the same trace") {
  const Outcome o = locksim("run --check-determinism " + source("scenarios/kleppmann/gc-pause.toml"));
  CHECK(o.status == 0);
  CHECK(o.output.find("deterministic: a second run gave the same") != std::string::npos);
}

TEST_CASE("a TOML syntax error names the file and line") {
  expect_bad_input(write_variant("syntax", "ttl = \"5s\"", "ttl = \"5s"), "8", "TOML");
}

TEST_CASE("an unknown key is rejected with a suggestion") {
  expect_bad_input(write_variant("unknown-key", "work = \"1s\"", "wrok = \"1s\""), "15", "'wrok'");
}

TEST_CASE("a bad duration names its key") {
  expect_bad_input(write_variant("bad-duration", "ttl = \"5s\"", "ttl = \"5 seconds\""), "8", "'ttl'");
}

TEST_CASE("an unknown process in a fault names its key") {
  expect_bad_input(write_variant("unknown-process", "target = \"client1\"", "target = \"clinet1\""), "20", "clinet1");
}

TEST_CASE("a fault that makes no sense is rejected") {
  expect_bad_input(write_variant("no-duration", "duration = \"2s\"\n", ""), "17", "duration");
  expect_bad_input(write_variant("restart-uncrashed", "kind = \"pause\"\ntarget = \"client1\"\nduration = \"2s\"",
                                 "kind = \"restart\"\ntarget = \"client1\""),
                   "20", "restart of client1, which no earlier fault crashes");
  expect_bad_input(write_variant("key-not-for-kind", "duration = \"2s\"", "by = \"2s\""), "21",
                   "'by': does not apply to a pause fault");
  expect_bad_input(write_variant("at-and-on", "at = \"1s\"", "at = \"1s\"\non = \"client1 acquired\""), "17",
                   "exactly one of at");
}

TEST_CASE("an algorithm that offers no monotonic token refuses fencing = \"token\"") {
  const std::string file =
      write_variant("setnx-token", "algorithm = \"redis-single\"\nttl = \"5s\"", "algorithm = \"setnx\"\nfencing = \"token\"");
  expect_bad_input(file, "8", "fencing");
}

TEST_CASE("a missing file and a bad command line are errors of input, exit 2") {
  CHECK(locksim("run /nonexistent/scenario.toml").status == 2);
  CHECK(locksim("run --format yaml " + source("scenarios/kleppmann/gc-pause.toml")).status == 2);
  CHECK(locksim("frobnicate").status == 2);
}

TEST_CASE("list describes the algorithms, fault kinds and violation kinds") {
  const Outcome o = locksim("list");
  CHECK(o.status == 0);
  for (const char* name : {"redis-single", "setnx", "pause", "clock-jump", "overlap", "stale-write", "stuck"})
    CHECK_MESSAGE(o.output.find(name) != std::string::npos, name);
}

TEST_CASE("run --trace writes every event as it happens, one JSON line each, whatever the report keeps") {
  const fs::path path = fs::temp_directory_path() / "locksim-cli-trace.jsonl";
  for (const char* format : {"text", "json"}) {
    INFO(format);
    fs::remove(path);
    const Outcome o =
        locksim(std::string("run --format ") + format + " --trace " + path.string() + " " + source("scenarios/kleppmann/gc-pause.toml"));
    CHECK(o.status == 0);
    std::ifstream in(path);
    std::string line;
    std::size_t lines = 0, with_detail = 0;
    while (std::getline(in, line)) {
      ++lines;
      CHECK(line.front() == '{');
      with_detail += line.find("\"detail\":") != std::string::npos;
    }
    const Outcome json = locksim("run --format json " + source("scenarios/kleppmann/gc-pause.toml"));
    const auto at = json.output.find("\"events\":");
    REQUIRE(at != std::string::npos);
    CHECK(lines == std::stoull(json.output.substr(at + 9)));
    CHECK(with_detail > 0);  // details are built for the file even when no event is kept
  }
}

TEST_CASE("run --slides writes a picture for a slide, as a PNG through rsvg-convert or as SVG") {
  REQUIRE_MESSAGE(fs::exists("/usr/bin/rsvg-convert"), "rsvg-convert is missing: scripts/install-deps installs librsvg2-bin");
  const fs::path png = fs::temp_directory_path() / "locksim-cli-slide.png", svg = fs::temp_directory_path() / "locksim-cli-slide.svg";
  fs::remove(png);
  fs::remove(svg);
  const Outcome o = locksim("run " + source("scenarios/kleppmann/gc-pause.toml") + " --slides " + svg.string());
  INFO(o.output);
  CHECK(o.status == 0);
  CHECK(fs::exists(svg));
  CHECK(locksim("run " + source("scenarios/kleppmann/gc-pause.toml") + " --slides " + png.string()).status == 0);
  std::ifstream in(png, std::ios::binary);
  std::string magic(8, '\0');
  in.read(magic.data(), 8);
  CHECK(magic == "\x89PNG\r\n\x1a\n");
  CHECK_FALSE(fs::exists(png.string() + ".svg"));  // the temporary SVG is gone
  // Without rsvg-convert a PNG is an error of input that says what to install.
  const Outcome none = shell("env PATH=/nonexistent " + std::string(LOCKSIM_BINARY) + " run " + source("scenarios/kleppmann/gc-pause.toml") +
                             " --slides " + png.string() + " 2>&1");
  CHECK(none.status == 2);
  CHECK(none.output.find("librsvg2-bin") != std::string::npos);
  std::ifstream s(svg);
  const std::string text((std::istreambuf_iterator<char>(s)), std::istreambuf_iterator<char>());
  CHECK(text.find("class=\"locksim-diagram slides\"") != std::string::npos);
  CHECK(text.find("<title>") == std::string::npos);
}

TEST_CASE("a word option (--format, --axis) takes only its words, parsed once: a bad one is refused in one line, exit 2") {
  const std::string gc = source("scenarios/kleppmann/gc-pause.toml");
  for (const std::string& cmd : {"run " + gc, "check " + gc, "explore " + gc, "merge " + gc, "live " + gc, "sweep " + gc + " --set ttl=1s..2s:2"}) {
    INFO(cmd);
    const Outcome bad = locksim(cmd + " --format xml");
    CHECK(bad.status == 2);
    CHECK(bad.output == "--format: xml not in {text,json}\nRun with --help for more information.\n");
  }
  const Outcome axis = locksim("run " + gc + " --axis sideways");
  CHECK(axis.status == 2);
  CHECK(axis.output == "--axis: sideways not in {auto,linear,compressed}\nRun with --help for more information.\n");
  // A good word reaches the command: JSON from run and check, a linear axis when asked.
  CHECK(locksim("run " + gc + " --format json").output.rfind("{\"scenario\":", 0) == 0);
  CHECK(locksim("check " + gc + " --format json").output.rfind("{\"scenario\":", 0) == 0);
  CHECK(locksim("run " + gc + " --format text").output.find("Verdict: ") != std::string::npos);
  const fs::path svg = fs::temp_directory_path() / "locksim-cli-axis-linear.svg";
  REQUIRE(locksim("run " + gc + " --axis linear --svg " + svg.string()).status == 0);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("axis-caption axis-linear") != std::string::npos);
  fs::remove(svg);
}

TEST_CASE("run --axis chooses the diagram's time axis, and --full tells every step") {
  const fs::path svg = fs::temp_directory_path() / "locksim-cli-axis.svg";
  CHECK(locksim("run " + source("scenarios/kleppmann/gc-pause.toml") + " --axis compressed --svg " + svg.string()).status == 0);
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("axis-caption axis-compressed") != std::string::npos);
  CHECK(locksim("run " + source("scenarios/kleppmann/gc-pause.toml") + " --axis sideways").status == 2);
  const Outcome folded = locksim("run " + source("scenarios/redis/redlock-restart-delayed.toml"));
  const Outcome full = locksim("run --full " + source("scenarios/redis/redlock-restart-delayed.toml"));
  CHECK(folded.output.find("client2 tries and fails") != std::string::npos);
  CHECK(full.output.find("client2 tries and fails") == std::string::npos);
  CHECK(full.output.size() > 10 * folded.output.size());
}

namespace {

// A command's exit status and what it said on stderr alone.
Outcome stderr_of(const std::string& args) {
  return shell("cd " + std::string(LOCKSIM_SOURCE_DIR) + " && " + LOCKSIM_BINARY + " " + args + " 2>&1 >/dev/null");
}

}  // namespace

TEST_CASE("every command that exits 1 says why on stderr, in one line") {
  const fs::path dir = fs::temp_directory_path() / "locksim-cli-exit-1";
  fs::create_directories(dir);
  // gc-pause without its [expect]: no violation is expected, and it shows three.
  const std::string no_expect = (dir / "no-expect.toml").string();
  {
    std::ifstream in(source("scenarios/kleppmann/gc-pause.toml"));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(no_expect) << text.substr(0, text.find("[expect]"));
  }
  const std::string shard = (dir / "shard.json").string();
  REQUIRE(stderr_of("explore scenarios/kleppmann/gc-pause.toml --runs 20 --shard 1/2 --result " + shard).status == 0);
  // (command, the start of its one line on stderr)
  const std::pair<std::string, std::string> cases[] = {
      {"run scenarios/kleppmann/gc-pause.toml --predict none",
       "locksim run: the prediction for scenarios/kleppmann/gc-pause.toml was no violation, and the run showed overlap"},
      {"run scenarios/kleppmann/gc-pause.toml --ignore-expect",
       "locksim run: scenarios/kleppmann/gc-pause.toml showed overlap, stale-write, lost-update (--ignore-expect"},
      {"run scenarios/kleppmann/gc-pause.toml " + no_expect,
       "locksim run: NOT as expected: this run showed overlap, stale-write, lost-update, which " + no_expect +
           " does not allow (it has no [expect]: no violation at all)"},
      {"check scenarios/kleppmann/gc-pause.toml " + no_expect, "locksim check: 1 of 2 scenarios NOT as expected: " + no_expect},
      {"explore scenarios/kleppmann/gc-pause-fenced.toml --runs 3000 --faults pause,clock-jump",
       "locksim explore: NOT as expected: runs showed stale-write, lost-update, which scenarios/kleppmann/gc-pause-fenced.toml does not allow in its [expect]"},
      {"explore scenarios/kleppmann/gc-pause-fenced.toml --replay 7505579150628244444 --faults pause,clock-jump",
       "locksim explore: NOT as expected: this run showed stale-write, lost-update, which scenarios/kleppmann/gc-pause-fenced.toml"},
      {"explore scenarios/kleppmann/gc-pause-fenced.toml --exhaustive --depth 1",
       "locksim explore: NOT as expected: runs showed "},
      {"merge " + shard, "locksim merge: shards missing: 2"},
      {"shrink scenarios/kleppmann/gc-pause-fenced.toml --seed 7505579150628244444 --out " + (dir / "found").string(),
       "locksim shrink: nothing was shrunk: no run of scenarios/kleppmann/gc-pause-fenced.toml showed a violation"},
      {"sweep " + no_expect + " --set fault[1].duration=20s,40s",
       "locksim sweep: NOT as expected: runs showed overlap, stale-write, lost-update, which " + no_expect + " does not allow"},
  };
  for (const auto& [args, why] : cases) {
    INFO(args);
    const Outcome o = stderr_of(args);
    INFO(o.output);
    CHECK(o.status == 1);
    CHECK(o.output.rfind(why, 0) == 0);
    CHECK(std::count(o.output.begin(), o.output.end(), '\n') == 1);  // one line
  }
  // The same in the story's language, where the command has one.
  CHECK(stderr_of("run scenarios/kleppmann/gc-pause.toml --ignore-expect --lang zh").output.find("（--ignore-expect：运行出现违规时退出状态为 1）") !=
        std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a TOML syntax error is one line in the loader's words, naming file, line and column") {
  // (what the line becomes, its line and column, what the message says)
  const std::tuple<std::string, std::string, std::string, std::string> cases[] = {
      {"[lock]", "[lock", "6:6", "the table header is not closed: its ']' is missing before the end of the line"},
      {"ttl = \"5s\"", "ttl = 5s", "8:8", "a number is digits only: a duration needs quotes and a unit (\"30s\", \"250ms\")"},
      {"ttl = \"5s\"", "ttl = \"5s", "8:", "the string is not closed: its '\"' is missing before the end of the line"},
      {"name = \"redis1\"", "name = redis1", "11:8", "what follows '=' is not a value: a string or a duration needs quotes"},
      {"work = \"1s\"", "work: \"1s\"", "15:5", "a key and its value are joined by '=': '=' was expected here, not ':'"},
      {"title = \"t\"", "title = \"t\"\ntitle = \"u\"", "2:", "the key 'title' is given twice"},
      {"work = \"1s\"", "work = \"1s\" \"2s\"", "15:", "only a comment (# ...) may follow a value on its line"},
  };
  for (const auto& [from, to, at, words] : cases) {
    const std::string file = write_variant("syntax-words", from, to);
    const Outcome o = locksim("run " + file);
    INFO(to);
    INFO(o.output);
    CHECK(o.status == 2);
    CHECK(o.output.rfind("locksim: " + file + ":" + at, 0) == 0);
    CHECK(o.output.find(": not TOML: " + words) != std::string::npos);
    CHECK(std::count(o.output.begin(), o.output.end(), '\n') == 1);
    CHECK(o.output.find("Error while parsing") == std::string::npos);  // not the parser's own text
  }
}

TEST_CASE("a misspelt algorithm, flavour or event gets a \"did you mean\", and a bad event the list of events") {
  const Outcome algorithm = locksim("run " + write_variant("algo", "redis-single", "redis-singel"));
  CHECK(algorithm.output.find("unknown algorithm \"redis-singel\" (did you mean \"redis-single\"? known: ") != std::string::npos);
  const Outcome far = locksim("run " + write_variant("algo-far", "redis-single", "zzzzzzzz"));
  CHECK(far.output.find("unknown algorithm \"zzzzzzzz\" (known: ") != std::string::npos);  // nothing near: no guess
  const Outcome made = locksim("new redlok");
  CHECK(made.status == 2);
  CHECK(made.output.find("\"redlok\" is not an algorithm (did you mean \"redlock\"? known: ") != std::string::npos);
  const Outcome event = locksim("run " + write_variant("event", "at = \"1s\"", "on = \"client1 aquired\""));
  CHECK(event.status == 2);
  CHECK(event.output.find("\"aquired\" is not an event a fault can wait for (did you mean \"acquired\"? events: started, paused, ") !=
        std::string::npos);
  CHECK(event.output.find("write-skipped") != std::string::npos);  // a client's decision can be waited for
  CHECK(event.output.find("retrying") == std::string::npos);       // a retry loop's waits cannot: too many
  const Outcome matrix = locksim("explore " + source("scenarios/kleppmann/gc-pause.toml") + " --runs 1 --matrix redis-singel");
  CHECK(matrix.output.find("\"redis-singel\" is not an algorithm (did you mean 'redis-single'?)") != std::string::npos);
}

TEST_CASE("README's command list names every subcommand of locksim --help, and no other") {
  const Outcome help = locksim("--help");
  REQUIRE(help.status == 0);
  const auto from = help.output.find("Subcommands:\n");
  REQUIRE(from != std::string::npos);
  std::vector<std::string> commands;
  std::istringstream lines(help.output.substr(from + 13));
  for (std::string line; std::getline(lines, line) && line.rfind("  ", 0) == 0;) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    commands.push_back(name);
  }
  REQUIRE(commands.size() >= 10);
  std::ifstream in(source("README.md"));
  const std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto section = readme.find("## Using it\n");
  REQUIRE(section != std::string::npos);
  const auto open = readme.find("```\n", section);
  const auto close = readme.find("```\n", open + 4);
  REQUIRE(close != std::string::npos);
  std::vector<std::string> listed;
  std::istringstream block(readme.substr(open + 4, close - open - 4));
  for (std::string line; std::getline(block, line);) {
    std::istringstream words(line);
    std::string first, name;
    words >> first >> name;
    if (first == "locksim" && name.rfind("--", 0) != 0) listed.push_back(name);
  }
  for (const std::string& c : commands) {
    INFO("locksim " << c << " is in --help and not in README's \"Using it\"");
    CHECK(std::find(listed.begin(), listed.end(), c) != listed.end());
  }
  for (const std::string& l : listed) {
    INFO("README's \"Using it\" lists locksim " << l << ", which --help does not");
    CHECK(std::find(commands.begin(), commands.end(), l) != commands.end());
  }
}

}  // namespace cli_test
