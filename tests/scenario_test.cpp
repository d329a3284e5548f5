// The scenario loader: a full file parses into the right values, and every
// class of bad input is one message naming the file, the line and the key.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "harness/scenario.hpp"
#include "lockalgos/redis_common.hpp"

namespace scenario_test {

using namespace locksim;

namespace {

const char* kFull = R"(title = "t"
about = "a"
source = "s"
seed = 7
duration = "90s"

[lock]
algorithm = "redis-single"
ttl = "10s"
fencing = "token"
retry_delay = "10ms..20ms"
retry_count = "forever"

[network]
delay = "1ms..3ms"
loss = 0.01

[[node]]
name = "redis1"
clock = { offset = "-2s", drift_ppm = 1.5 }
persistence = "aof-always"

[[client]]
name = "client1"
repeat = 3
think = "5ms"
check_before_write = true

[[client]]
name = "client2"
job = "hold"
hold = "1ms..2ms"

[[fault]]
on = "client1 acquired#2"
after = "5ms"
kind = "pause"
target = "client1"
duration = "15s"

[[fault]]
at = "1s"
kind = "partition"
groups = [["client1"], ["redis1", "storage"]]
one_way = true

[[fault]]
at = "2s"
kind = "delay"
from = "client2"
to = "storage"
duration = "40s"

[expect]
violations = ["overlap", "stuck"]
liveness_window = "20s"
)";

// kFull with `from` replaced by `to`, parsed; the message it is rejected with.
std::string error_of(const std::string& from, const std::string& to) {
  std::string text = kFull;
  const auto pos = text.find(from);
  REQUIRE_MESSAGE(pos != std::string::npos, from);
  text.replace(pos, from.size(), to);
  try {
    parse_scenario(text, "x.toml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("a full scenario parses into the values it says") {
  const Scenario s = parse_scenario(kFull, "x.toml");
  CHECK(s.seed == 7);
  CHECK(s.duration == Duration::s(90));
  CHECK(s.lock.ttl == Duration::s(10));
  CHECK(s.lock.fencing == Fencing::Token);
  const auto& single = s.lock.options_as<RedisSingleOptions>();
  CHECK(single.retry_delay.lo == Duration::ms(10));
  CHECK(single.retry_delay.hi == Duration::ms(20));
  CHECK(single.retry_count == kForever);
  CHECK(s.network.delay.hi == Duration::ms(3));
  CHECK(s.network.loss == doctest::Approx(0.01));
  CHECK(s.nodes[0].clock.offset == -Duration::s(2));
  CHECK(s.nodes[0].clock.drift_ppb == 1500);
  CHECK(s.nodes[0].persistence == Persistence::AofAlways);
  CHECK(s.clients[0].repeat == 3);
  CHECK(s.clients[0].check_before_write);
  CHECK(s.clients[1].job == JobKind::Hold);
  CHECK(s.clients[1].hold.hi == Duration::ms(2));
  REQUIRE(s.faults.size() == 3);
  CHECK(s.faults[0].on_process == "client1");
  CHECK(s.faults[0].on_event == "acquired");
  CHECK(s.faults[0].on_occurrence == 2);
  CHECK(s.faults[0].after == Duration::ms(5));
  CHECK(s.faults[1].groups.size() == 2);
  CHECK(s.faults[1].one_way);
  CHECK(s.faults[2].from == "client2");
  CHECK(s.expect.present);
  CHECK(s.expect.violations == std::set{ViolationKind::Overlap, ViolationKind::Stuck});
  CHECK(s.expect.liveness_window == Duration::s(20));
}

TEST_CASE("every value of the full scenario lands in its field, with the line it came from") {
  const Scenario s = parse_scenario(kFull, "x.toml");
  CHECK(s.path == "x.toml");
  CHECK(s.title == "t");
  CHECK(s.about == "a");
  CHECK(s.source == "s");
  CHECK(s.lock.algorithm == "redis-single");
  CHECK(s.lock.flavour.empty());
  CHECK(s.lock.line == 7);
  CHECK(s.network.delay.lo == Duration::ms(1));
  CHECK_FALSE(s.network.delay.is_fixed());
  REQUIRE(s.nodes.size() == 1);
  CHECK(s.nodes[0].name == "redis1");
  CHECK(s.nodes[0].line == 18);
  CHECK(s.storage.name == "storage");
  REQUIRE(s.clients.size() == 2);
  CHECK(s.clients[0].name == "client1");
  CHECK(s.clients[0].line == 23);
  CHECK(s.clients[0].job == JobKind::ReadModifyWrite);
  CHECK(s.clients[0].think.is_fixed());
  CHECK(s.clients[0].think.lo == Duration::ms(5));
  CHECK(s.clients[1].name == "client2");
  CHECK(s.clients[1].line == 29);
  CHECK(s.clients[1].hold.lo == Duration::ms(1));
  CHECK(s.clients[1].repeat == 1);
  CHECK_FALSE(s.clients[1].check_before_write);
  REQUIRE(s.faults.size() == 3);
  // on = "client1 acquired#2", after = "5ms": a pause of client1 for 15 s.
  CHECK(s.faults[0].kind == FaultKind::Pause);
  CHECK(s.faults[0].line == 34);
  CHECK_FALSE(s.faults[0].at.has_value());
  CHECK(s.faults[0].target == "client1");
  CHECK(s.faults[0].duration == Duration::s(15));
  // at = "1s": a one-way partition.
  CHECK(s.faults[1].kind == FaultKind::Partition);
  CHECK(s.faults[1].line == 41);
  CHECK(s.faults[1].at == Duration::s(1));
  CHECK(s.faults[1].on_process.empty());
  CHECK(s.faults[1].after == Duration::zero());
  CHECK(s.faults[1].groups == std::vector<std::vector<std::string>>{{"client1"}, {"redis1", "storage"}});
  CHECK_FALSE(s.faults[1].duration.has_value());
  // at = "2s": messages from client2 to storage held for 40 s.
  CHECK(s.faults[2].kind == FaultKind::Delay);
  CHECK(s.faults[2].line == 47);
  CHECK(s.faults[2].at == Duration::s(2));
  CHECK(s.faults[2].to == "storage");
  CHECK(s.faults[2].duration == Duration::s(40));
  CHECK(s.faults[2].by == Duration::zero());
  CHECK(s.faults[2].count == kForever);
}

TEST_CASE("a fractional drift and an occurrence-less trigger take their defaults") {
  std::string text = kFull;
  text.replace(text.find("drift_ppm = 1.5"), 15, "drift_ppm = -0.25");
  text.replace(text.find("client1 acquired#2"), 18, "client1 acquired");
  const Scenario s = parse_scenario(text, "x.toml");
  CHECK(s.nodes[0].clock.drift_ppb == -250);
  CHECK(s.faults[0].on_occurrence == 1);
  CHECK(s.faults[0].on_event == "acquired");
}

TEST_CASE("every class of bad input names the file, the line and the key") {
  struct Case {
    const char* what;
    std::string from, to, needle;
  };
  const Case cases[] = {
      {"syntax error", "seed = 7", "seed = = 7", "x.toml:4:"},
      {"unknown top-level key", "seed = 7", "seeed = 7", "x.toml:4: top level 'seeed': unknown key (did you mean 'seed'?)"},
      {"unknown client key", "check_before_write = true", "check_befor_write = true", "x.toml:27: [[client]] 'check_befor_write'"},
      {"number for a duration", "duration = \"90s\"", "duration = 90", "x.toml:5: top level 'duration': expected a duration string"},
      {"bad duration", "think = \"5ms\"", "think = \"5 ms\"", "x.toml:26: [[client]] 'think'"},
      {"range that ends before it starts", "\"10ms..20ms\"", "\"20ms..10ms\"", "x.toml:11: [lock] 'retry_delay'"},
      {"unknown algorithm", "algorithm = \"redis-single\"", "algorithm = \"redis-singel\"", "x.toml:8: [lock] 'algorithm': unknown algorithm"},
      {"option of another algorithm", "retry_count = \"forever\"", "drift_factor = 0.01", "x.toml:12: [lock] 'drift_factor': not an option of redis-single"},
      {"ttl for an algorithm without one", "algorithm = \"redis-single\"\nttl = \"10s\"\nfencing = \"token\"",
       "algorithm = \"setnx\"\nttl = \"10s\"", "x.toml:9: [lock] 'ttl'"},
      {"missing ttl", "ttl = \"10s\"\n", "", "[lock] 'ttl': missing"},
      {"token fencing without tokens", "algorithm = \"redis-single\"\nttl = \"10s\"", "algorithm = \"redlock\"\nttl = \"10s\"",
       "x.toml:10: [lock] 'fencing': redlock offers no monotonic fencing token"},
      {"unknown flavour", "fencing = \"token\"", "fencing = \"token\"\nflavour = \"x\"", "[lock] 'flavour': \"x\" is not a flavour of redis-single (flavours: redis.io, redis-py)"},
      {"duplicate names", "name = \"client2\"", "name = \"client1\"", "x.toml:30: [[client]] 'name': \"client1\" is already the name"},
      {"unknown target", "target = \"client1\"", "target = \"clinet1\"", "x.toml:38: [[fault]] pause 'target': no process named \"clinet1\""},
      {"unknown process in on", "on = \"client1 acquired#2\"", "on = \"client9 acquired\"", "x.toml:35: [[fault]] pause 'on': no process named"},
      {"unknown event in on", "on = \"client1 acquired#2\"", "on = \"client1 aquired\"", "x.toml:35: [[fault]] pause 'on': \"aquired\" is not an event"},
      {"both at and on", "after = \"5ms\"", "at = \"1s\"", "[[fault]] pause 'on': a fault needs exactly one of"},
      {"after with at", "at = \"2s\"", "at = \"2s\"\nafter = \"1s\"", "[[fault]] delay 'after': goes with on"},
      {"pause without duration", "duration = \"15s\"\n", "", "x.toml:34: [[fault]] pause 'duration': missing"},
      {"key not for the kind", "one_way = true", "one_way = true\ntarget = \"client1\"", "[[fault]] partition 'target': does not apply to a partition fault"},
      {"partition of one group", "groups = [[\"client1\"], [\"redis1\", \"storage\"]]", "groups = [[\"client1\"]]", "[[fault]] partition 'groups': expected at least two groups"},
      {"a name in two groups", "[\"redis1\", \"storage\"]", "[\"redis1\", \"client1\"]", "[[fault]] partition 'groups': \"client1\" is in two groups"},
      {"delay with neither duration nor by", "to = \"storage\"\nduration = \"40s\"", "to = \"storage\"", "[[fault]] delay 'duration': a delay needs"},
      {"unknown fault kind", "kind = \"pause\"", "kind = \"freeze\"", "x.toml:37: [[fault]] 'kind': \"freeze\" is not a fault kind"},
      {"failover without a sentinel", "kind = \"pause\"\ntarget = \"client1\"\nduration = \"15s\"",
       "kind = \"failover\"\ntarget = \"redis1\"", "[[fault]] failover 'target': a failover needs a [sentinel]"},
      {"unknown violation", "\"stuck\"]", "\"stuk\"]", "[expect] 'violations': \"stuk\" is not a violation kind"},
      {"duplicate violation", "\"stuck\"]", "\"overlap\"]", "[expect] 'violations': \"overlap\" is listed twice"},
      {"missing title", "title = \"t\"\n", "", "top level 'title': missing"},
      {"missing lock table", "[lock]", "[lok]", "top level 'lok': unknown key (did you mean 'lock'?)"},
      {"wrong type", "repeat = 3", "repeat = \"three\"", "x.toml:25: [[client]] 'repeat': expected a whole number or \"forever\""},
      {"a clock that runs backwards", "drift_ppm = 1.5", "drift_ppm = -2000000", "[[node]] clock 'drift_ppm'"},
      {"hold on a read-modify-write client", "think = \"5ms\"", "think = \"5ms\"\nhold = \"1s\"", "[[client]] 'hold': applies to job = \"hold\""},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.from, c.to);
    INFO(std::string(c.what) << ": " << message);
    CHECK(message.find(c.needle) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);  // one line
  }
}

TEST_CASE("a directory given as a scenario file is an error saying so") {
  CHECK_THROWS_WITH_AS(load_scenario(LOCKSIM_SOURCE_DIR), doctest::Contains("is a directory"), ScenarioError);
}

TEST_CASE("a missing file is an error naming it") {
  CHECK_THROWS_WITH_AS(load_scenario("/nonexistent/x.toml"), doctest::Contains("/nonexistent/x.toml"), ScenarioError);
}

// One test per class of bad input, each on a small file whose lines are known:
// the message must begin with "<file>:<line>: <where> '<key>'" and be one line.
namespace {

// Lines:              1            2            3             4
const char* kSmall = "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"60s\"\n"
                     // 5   6         7                           8
                     "\n[lock]\nalgorithm = \"redis-single\"\nttl = \"10s\"\n"
                     // 9   10         11
                     "\n[[node]]\nname = \"redis1\"\n"
                     // 12  13          14                15  16          17
                     "\n[[client]]\nname = \"client1\"\n\n[[client]]\nname = \"client2\"\n";
// Faults appended to kSmall begin at line 18.

// kSmall with `from` replaced by `to` (when `from` is not empty) and `tail` appended.
std::string small(const std::string& from, const std::string& to, const std::string& tail = "") {
  std::string text = kSmall;
  if (!from.empty()) {
    const auto pos = text.find(from);
    REQUIRE_MESSAGE(pos != std::string::npos, from);
    text.replace(pos, from.size(), to);
  }
  return text + tail;
}

std::string rejection(const std::string& text) {
  try {
    parse_scenario(text, "scenarios/x.toml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

// `located` is the start of the message: file, line, where and key; `what` is in the rest.
void check_rejected(const std::string& text, const std::string& located, const std::string& what) {
  const std::string message = rejection(text);
  INFO(message);
  CHECK(message.rfind(located, 0) == 0);
  CHECK(message.find(what, located.size()) != std::string::npos);
  CHECK(message.find('\n') == std::string::npos);
}

}  // namespace

TEST_CASE("the small scenario the following tests edit is itself valid") {
  const Scenario s = parse_scenario(small("", ""), "scenarios/x.toml");
  CHECK(s.lock.line == 6);
  CHECK(s.nodes.at(0).line == 10);
  CHECK(s.clients.at(1).line == 16);
  CHECK(s.storage.name == "storage");
  CHECK(s.seed == 1);
  CHECK_FALSE(s.expect.present);
}

TEST_CASE("a TOML syntax error is reported with its line and column") {
  const std::string message = rejection(small("ttl = \"10s\"", "ttl = \"10s"));
  INFO(message);
  CHECK(message.rfind("scenarios/x.toml:8:", 0) == 0);
  const std::string rest = message.substr(std::string("scenarios/x.toml:8:").size());
  CHECK(rest.find_first_not_of("0123456789") > 0);  // the column
  CHECK(rest.find(": not TOML: the string is not closed") != std::string::npos);
}

TEST_CASE("a misspelled client key is rejected with its line and a suggestion") {
  check_rejected(small("name = \"client2\"", "name = \"client2\"\nstrat = \"1s\""),
                 "scenarios/x.toml:18: [[client]] 'strat'", "unknown key (did you mean 'start'?)");
}

TEST_CASE("a duration without a unit is rejected with an example of one") {
  check_rejected(small("duration = \"60s\"", "duration = \"60\""), "scenarios/x.toml:4: top level 'duration'",
                 "\"60\" is not a duration (write e.g. \"250ms\"");
}

TEST_CASE("a duration too long to simulate says what the longest one is, in plain words") {
  check_rejected(small("duration = \"60s\"", "duration = \"3000000h\""), "scenarios/x.toml:4: top level 'duration'",
                 "\"3000000h\" is too long: the longest duration locksim can simulate is about 73 years");
  check_rejected(small("name = \"client2\"", "name = \"client2\"\nstart = \"1s..99999999999999999999s\""),
                 "scenarios/x.toml:18: [[client]] 'start'", "\"99999999999999999999s\" is too long: the longest duration");
  const std::string message = rejection(small("duration = \"60s\"", "duration = \"99999999999999999999999h\""));
  CHECK(message.find("2562047") == std::string::npos);
  CHECK(message.find("is not a duration") == std::string::npos);
  CHECK(duration_too_long("640512h"));
  CHECK_FALSE(duration_too_long("640511h"));
  CHECK_FALSE(duration_too_long("60x"));
}

TEST_CASE("a bare number for the ttl is rejected as the wrong type") {
  check_rejected(small("ttl = \"10s\"", "ttl = 10"), "scenarios/x.toml:8: [lock] 'ttl'",
                 "expected a duration string, found an integer");
}

TEST_CASE("a negative seed is out of range") {
  check_rejected(small("duration = \"60s\"", "duration = \"60s\"\nseed = -1"), "scenarios/x.toml:5: top level 'seed'",
                 "-1 is out of range");
}

TEST_CASE("an unknown algorithm is rejected with the list of known ones, and the one it most likely meant") {
  check_rejected(small("\"redis-single\"", "\"redis-singel\""), "scenarios/x.toml:7: [lock] 'algorithm'",
                 "unknown algorithm \"redis-singel\" (did you mean \"redis-single\"? known: ");
  CHECK(rejection(small("\"redis-single\"", "\"redis-singel\"")).find("setnx") != std::string::npos);
}

TEST_CASE("token fencing on an algorithm whose values are random is rejected") {
  check_rejected(small("\"redis-single\"\nttl = \"10s\"", "\"setnx\"\nfencing = \"token\""),
                 "scenarios/x.toml:8: [lock] 'fencing'", "setnx offers no monotonic fencing token");
}

TEST_CASE("a scenario without a duration is rejected at the top of the file") {
  check_rejected(small("duration = \"60s\"\n", ""), "scenarios/x.toml:1: top level 'duration'", "missing");
}

TEST_CASE("a scenario without a title is rejected at the top of the file") {
  check_rejected(small("title = \"t\"\n", ""), "scenarios/x.toml:1: top level 'title'", "missing");
}

TEST_CASE("a scenario without a lock table is rejected") {
  check_rejected(small("[lock]\nalgorithm = \"redis-single\"\nttl = \"10s\"\n", ""),
                 "scenarios/x.toml:1: top level '[lock]'", "missing");
}

TEST_CASE("a lock table without an algorithm is rejected at the table's line") {
  check_rejected(small("algorithm = \"redis-single\"\n", ""), "scenarios/x.toml:6: [lock] 'algorithm'", "missing");
}

TEST_CASE("a client named like a node is rejected at the client's name") {
  check_rejected(small("name = \"client2\"", "name = \"redis1\""), "scenarios/x.toml:17: [[client]] 'name'",
                 "\"redis1\" is already the name of another process");
}

TEST_CASE("a fault on an unknown target lists the processes there are") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"clinet1\"\n"),
                 "scenarios/x.toml:22: [[fault]] crash 'target'",
                 "no process named \"clinet1\" (processes: redis1, storage, client1, client2)");
}

TEST_CASE("a fault on an event of an unknown process is rejected") {
  check_rejected(small("", "", "\n[[fault]]\non = \"clinet1 acquired\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:20: [[fault]] crash 'on'", "no process named \"clinet1\"");
}

TEST_CASE("a fault with neither at nor on is rejected at its table's line") {
  check_rejected(small("", "", "\n[[fault]]\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:19: [[fault]] crash 'at'", "exactly one of at");
}

TEST_CASE("a fault with both at and on is rejected") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\non = \"client1 acquired\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:19: [[fault]] crash 'on'", "exactly one of at");
}

TEST_CASE("a key that does not apply to the fault's kind is rejected naming the kind") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"redis1\"\nduration = \"1s\"\n"),
                 "scenarios/x.toml:23: [[fault]] crash 'duration'", "does not apply to a crash fault");
}

TEST_CASE("a pause without a duration is rejected at its table's line") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"client1\"\n"),
                 "scenarios/x.toml:19: [[fault]] pause 'duration'", "missing");
}

TEST_CASE("a restart of a process no fault crashes is rejected") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"restart\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:22: [[fault]] restart 'target'", "restart of redis1, which no");
}

TEST_CASE("a restart listed before the crash it undoes is rejected") {
  const std::string restart = "\n[[fault]]\nat = \"5s\"\nkind = \"restart\"\ntarget = \"redis1\"\n";
  const std::string crash = "\n[[fault]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"redis1\"\n";
  check_rejected(small("", "", restart + crash), "scenarios/x.toml:22: [[fault]] restart 'target'", "restart of redis1");
  const Scenario s = parse_scenario(small("", "", crash + restart), "scenarios/x.toml");
  REQUIRE(s.faults.size() == 2);
  CHECK(s.faults[1].kind == FaultKind::Restart);
  CHECK(s.faults[1].line == 24);
}

TEST_CASE("a partition naming an unknown process is rejected") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"redis\"]]\n"),
                 "scenarios/x.toml:22: [[fault]] partition 'groups'", "no process named \"redis\"");
}

TEST_CASE("a drop that never drops is rejected") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"drop\"\nto = \"redis1\"\nprobability = 0.0\n"),
                 "scenarios/x.toml:23: [[fault]] drop 'probability'", "more than 0");
}

TEST_CASE("an unknown violation name is rejected with the known ones") {
  check_rejected(small("", "", "\n[expect]\nviolations = [\"overlap\", \"stale_write\"]\n"),
                 "scenarios/x.toml:20: [expect] 'violations'",
                 "\"stale_write\" is not a violation kind (overlap, stale-write, lost-update, foreign-release, stuck)");
}

TEST_CASE("a scenario file is read from disk and its errors name its path") {
  const auto dir = std::filesystem::temp_directory_path() / "locksim-scenario-test";
  std::filesystem::create_directories(dir);
  const std::string good = (dir / "good.toml").string(), bad = (dir / "bad.toml").string();
  std::ofstream(good) << small("", "");
  std::ofstream(bad) << small("ttl = \"10s\"", "ttl = \"10 s\"");
  const Scenario s = load_scenario(good);
  CHECK(s.path == good);
  CHECK(s.lock.ttl == Duration::s(10));
  std::string message = "(accepted)";
  try {
    load_scenario(bad);
  } catch (const ScenarioError& e) {
    message = e.what();
  }
  CHECK(message.rfind(bad + ":8: [lock] 'ttl': \"10 s\" is not a duration", 0) == 0);
  std::filesystem::remove_all(dir);
}

// ---- more classes of bad input, each at its exact line ----------------------------

TEST_CASE("a syntax error is a ScenarioError naming the file and the line") {
  CHECK_THROWS_WITH_AS(parse_scenario(small("duration = \"60s\"", "duration = = \"60s\""), "path.toml"),
                       doctest::Contains("path.toml:4:"), ScenarioError);
  CHECK_THROWS_WITH_AS(parse_scenario(small("[lock]", "[lock"), "path.toml"), doctest::Contains("path.toml:6:"),
                       ScenarioError);
}

TEST_CASE("an unknown top-level key is rejected at its line with a suggestion") {
  check_rejected(small("duration = \"60s\"", "duration = \"60s\"\ntitel = \"u\""), "scenarios/x.toml:5: top level 'titel'",
                 "unknown key (did you mean 'title'?)");
  check_rejected(small("duration = \"60s\"", "duration = \"60s\"\nzzzzzz = 1"), "scenarios/x.toml:5: top level 'zzzzzz'",
                 "unknown key");
}

TEST_CASE("a number where a duration string belongs is rejected at its line") {
  check_rejected(small("name = \"client2\"", "name = \"client2\"\nstart = 5"), "scenarios/x.toml:18: [[client]] 'start'",
                 "expected a duration or a range like \"1ms..3ms\", found an integer");
  check_rejected(small("name = \"client2\"", "name = \"client2\"\nthink = 1.5"), "scenarios/x.toml:18: [[client]] 'think'",
                 "found a number");
}

TEST_CASE("a range that ends before it starts is rejected at its line") {
  check_rejected(small("name = \"client2\"", "name = \"client2\"\nthink = \"5ms..1ms\""),
                 "scenarios/x.toml:18: [[client]] 'think'", "\"5ms..1ms\": the range ends before it starts");
  check_rejected(small("name = \"client2\"", "name = \"client2\"\nthink = \"5ms..\""),
                 "scenarios/x.toml:18: [[client]] 'think'", "\"5ms..\" is not a range");
  const Scenario s = parse_scenario(small("name = \"client2\"", "name = \"client2\"\nthink = \"1ms..1ms\""), "x.toml");
  CHECK(s.clients[1].think.is_fixed());
}

TEST_CASE("a lock key that is not an option of the algorithm lists the algorithm's options") {
  check_rejected(small("\"redis-single\"\nttl = \"10s\"", "\"setnx\"\nrelease = \"del\""),
                 "scenarios/x.toml:8: [lock] 'release'",
                 "not an option of setnx (its options: key, retry_delay, retry_count, request_timeout)");
  // The same key is an option of redis-single.
  const Scenario s = parse_scenario(small("ttl = \"10s\"", "ttl = \"10s\"\nrelease = \"del\""), "x.toml");
  CHECK(s.lock.options_as<RedisSingleOptions>().release == Release::Del);
}

TEST_CASE("a ttl for an algorithm that sets no expiry is rejected at the ttl") {
  check_rejected(small("\"redis-single\"", "\"setnx\""), "scenarios/x.toml:8: [lock] 'ttl'",
                 "setnx sets no expiry on its lock, so it takes no ttl");
  const Scenario s = parse_scenario(small("\"redis-single\"\nttl = \"10s\"", "\"setnx\""), "x.toml");
  CHECK_FALSE(s.lock.ttl.has_value());
}

TEST_CASE("redis-single without a ttl is rejected at the lock table's line") {
  check_rejected(small("ttl = \"10s\"\n", ""), "scenarios/x.toml:6: [lock] 'ttl'", "missing (it is required)");
}

TEST_CASE("token fencing for setnx is rejected at the fencing key, pointing at the alternatives") {
  check_rejected(small("\"redis-single\"\nttl = \"10s\"", "\"setnx\"\n\n\nfencing = \"token\""),
                 "scenarios/x.toml:10: [lock] 'fencing'", "fencing = \"lock-value\"");
  const Scenario s = parse_scenario(small("\"redis-single\"\nttl = \"10s\"", "\"setnx\"\nfencing = \"lock-value\""), "x.toml");
  CHECK(s.lock.fencing == Fencing::LockValue);
}

TEST_CASE("an unknown flavour is rejected with the algorithm's flavours, and none for one without") {
  check_rejected(small("\"redis-single\"", "\"redlock\"\nflavour = \"redlock-go\""), "scenarios/x.toml:8: [lock] 'flavour'",
                 "\"redlock-go\" is not a flavour of redlock (did you mean 'redlock-rb'?) (flavours: redlock-rb, redlock-rb-2014, "
                 "redlock-py, redlock-py-1.0.2, redsync, node-redlock-v5, redisson, node-redlock-v4)");
  check_rejected(small("\"redis-single\"\nttl = \"10s\"", "\"setnx\"\nflavour = \"redsync\""), "scenarios/x.toml:8: [lock] 'flavour'",
                 "setnx has no flavours");
  const Scenario s = parse_scenario(small("\"redis-single\"", "\"redlock\"\nflavour = \"redsync\""), "x.toml");
  CHECK(s.lock.flavour == "redsync");
}

TEST_CASE("two nodes, or a node and a client, with one name are rejected at the second name") {
  check_rejected(small("name = \"client1\"", "name = \"redis1\""), "scenarios/x.toml:14: [[client]] 'name'",
                 "\"redis1\" is already the name of another process");
  check_rejected(small("name = \"redis1\"\n", "name = \"redis1\"\n[[node]]\nname = \"redis1\"\n"),
                 "scenarios/x.toml:13: [[node]] 'name'", "\"redis1\" is already the name");
  check_rejected(small("name = \"client2\"", "name = \"client1\""), "scenarios/x.toml:17: [[client]] 'name'",
                 "\"client1\" is already the name");
}

TEST_CASE("a fault waiting for an unknown event lists nothing it does not know") {
  check_rejected(small("", "", "\n[[fault]]\non = \"client1 aquired\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:20: [[fault]] crash 'on'", "\"aquired\" is not an event a fault can wait for");
  // Network events are too frequent to wait for.
  check_rejected(small("", "", "\n[[fault]]\non = \"client1 sent\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:20: [[fault]] crash 'on'", "\"sent\" is not an event a fault can wait for");
  check_rejected(small("", "", "\n[[fault]]\non = \"client1\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:20: [[fault]] crash 'on'", "write on = \"<process> <event>\"");
  check_rejected(small("", "", "\n[[fault]]\non = \"client1 acquired#0\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:20: [[fault]] crash 'on'", "the occurrence must be a whole number from 1");
}

TEST_CASE("after goes with on, not with at") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nafter = \"1s\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:21: [[fault]] crash 'after'", "goes with on = \"...\", not with at");
  const Scenario s = parse_scenario(
      small("", "", "\n[[fault]]\non = \"client2 released#3\"\nafter = \"250ms\"\nkind = \"crash\"\ntarget = \"redis1\"\n"),
      "x.toml");
  REQUIRE(s.faults.size() == 1);
  CHECK(s.faults[0].on_process == "client2");
  CHECK(s.faults[0].on_event == "released");
  CHECK(s.faults[0].on_occurrence == 3);
  CHECK(s.faults[0].after == Duration::ms(250));
}

TEST_CASE("a key meant for another fault kind is rejected naming this kind") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"1s\"\nby = \"1s\"\n"),
                 "scenarios/x.toml:24: [[fault]] pause 'by'", "does not apply to a pause fault");
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"heal\"\ntarget = \"client1\"\n"),
                 "scenarios/x.toml:22: [[fault]] heal 'target'", "does not apply to a heal fault");
}

TEST_CASE("a pause of zero length is rejected") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"0s\"\n"),
                 "scenarios/x.toml:23: [[fault]] pause 'duration'", "must be more than zero");
}

TEST_CASE("a restart after an earlier crash of another process is still rejected") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"client1\"\n"
                               "\n[[fault]]\nat = \"2s\"\nkind = \"restart\"\ntarget = \"redis1\"\n"),
                 "scenarios/x.toml:27: [[fault]] restart 'target'", "restart of redis1, which no earlier fault crashes");
}

TEST_CASE("a partition needs two groups and no process in both") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"partition\"\ngroups = [[\"client1\", \"redis1\"]]\n"),
                 "scenarios/x.toml:22: [[fault]] partition 'groups'", "expected at least two groups");
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"redis1\", \"client1\"]]\n"),
                 "scenarios/x.toml:22: [[fault]] partition 'groups'", "\"client1\" is in two groups");
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"partition\"\ngroups = [[\"client1\"], []]\n"),
                 "scenarios/x.toml:22: [[fault]] partition 'groups'", "non-empty array");
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"partition\"\n"),
                 "scenarios/x.toml:19: [[fault]] partition 'groups'", "missing");
}

TEST_CASE("a delay with neither duration nor by is rejected at its table's line") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"delay\"\nto = \"redis1\"\n"),
                 "scenarios/x.toml:19: [[fault]] delay 'duration'", "a delay needs duration");
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"delay\"\nby = \"1s\"\n"),
                 "scenarios/x.toml:19: [[fault]] delay 'from'", "name the link");
  const Scenario s = parse_scenario(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"delay\"\nto = \"redis1\"\nby = \"300ms\"\n"),
                                    "x.toml");
  CHECK(s.faults.at(0).by == Duration::ms(300));
  CHECK_FALSE(s.faults.at(0).duration.has_value());
}

TEST_CASE("a drop probability outside from 0 (excluded) to 1 is rejected") {
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"drop\"\nto = \"redis1\"\nprobability = 0\n"),
                 "scenarios/x.toml:23: [[fault]] drop 'probability'", "must be more than 0 and at most 1");
  check_rejected(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"drop\"\nto = \"redis1\"\nprobability = 1.5\n"),
                 "scenarios/x.toml:23: [[fault]] drop 'probability'", "must be more than 0 and at most 1");
  const Scenario s = parse_scenario(small("", "", "\n[[fault]]\nat = \"1s\"\nkind = \"drop\"\nfrom = \"client1\"\nprobability = 0.5\n"),
                                    "x.toml");
  CHECK(s.faults.at(0).probability == doctest::Approx(0.5));
  CHECK(s.faults.at(0).from == "client1");
}

TEST_CASE("a violation listed twice in the expect table is rejected") {
  check_rejected(small("", "", "\n[expect]\nviolations = [\"stuck\", \"overlap\", \"stuck\"]\n"),
                 "scenarios/x.toml:20: [expect] 'violations'", "\"stuck\" is listed twice");
  check_rejected(small("", "", "\n[expect]\nliveness_window = \"1s\"\n"), "scenarios/x.toml:19: [expect] 'violations'",
                 "missing");
  const Scenario s = parse_scenario(small("", "", "\n[expect]\nviolations = []\n"), "x.toml");
  CHECK(s.expect.present);
  CHECK(s.expect.violations.empty());
}

TEST_CASE("a scenario without a node or a client is rejected") {
  check_rejected(small("\n[[node]]\nname = \"redis1\"\n", ""), "scenarios/x.toml:1: top level '[[node]]'",
                 "missing: the lock service needs at least one node");
  check_rejected(small("\n[[client]]\nname = \"client1\"\n\n[[client]]\nname = \"client2\"\n", ""),
                 "scenarios/x.toml:1: top level '[[client]]'", "missing: a scenario needs at least one client");
}

TEST_CASE("a scenario without about or source is rejected") {
  check_rejected(small("about = \"a\"\n", ""), "scenarios/x.toml:1: top level 'about'", "missing");
  check_rejected(small("source = \"s\"\n", ""), "scenarios/x.toml:1: top level 'source'", "missing");
}

TEST_CASE("a failover needs a sentinel and a replica of its target, with them it parses") {
  const std::string failover = "\n[[fault]]\nat = \"1s\"\nkind = \"failover\"\ntarget = \"redis1\"\n";
  check_rejected(small("", "", failover), "scenarios/x.toml:22: [[fault]] failover 'target'",
                 "a failover needs a [sentinel] and a master with a replica; redis1 has no replica");
  const std::string replicated = "name = \"redis1\"\n\n[[node]]\nname = \"redis2\"\nreplica_of = \"redis1\"\n";
  check_rejected(small("name = \"redis1\"\n", replicated, failover), "scenarios/x.toml:26: [[fault]] failover 'target'",
                 "redis1 has no [sentinel] watching it");
  const Scenario s = parse_scenario(small("name = \"redis1\"\n", replicated + "\n[sentinel]\n", failover), "x.toml");
  CHECK(s.sentinel.present);
  CHECK(s.sentinel.name == "sentinel");
  CHECK(s.nodes.at(1).replica_of == "redis1");
  REQUIRE(s.faults.size() == 1);
  CHECK(s.faults[0].kind == FaultKind::Failover);
  CHECK(s.faults[0].target == "redis1");
}

// Naming clashes with the processes a scenario names implicitly (storage, sentinel).

TEST_CASE("clients made with count obey the same naming rules as any process") {
  // name() rejects spaces, '#' and empty names, but the count = N path builds
  // "<name>1".."<name>N" without that check, so `on = "my client1 acquired"`
  // could never name them.
  check_rejected(small("name = \"client2\"", "name = \"my client\"\ncount = 2"), "scenarios/x.toml:17: [[client]] 'name'",
                 "a name needs at least one character and no spaces or '#'");
  check_rejected(small("name = \"client2\"", "name = \"\"\ncount = 2"), "scenarios/x.toml:17: [[client]] 'name'",
                 "a name needs at least one character");
}

TEST_CASE("a node that takes the storage's default name is rejected at the node's name") {
  // Not at line 1 under a [storage] table the file does not have.
  check_rejected(small("name = \"redis1\"", "name = \"storage\""), "scenarios/x.toml:11: [[node]] 'name'",
                 "\"storage\" is the storage's name (by default");
}

TEST_CASE("a client that takes the name given to the storage is rejected at the client's name") {
  check_rejected(small("", "", "\n[storage]\nname = \"client1\"\n"), "scenarios/x.toml:14: [[client]] 'name'",
                 "\"client1\" is already the name of another process");
}

TEST_CASE("a node that takes the sentinel's default name is rejected at the node's name") {
  const std::string sentinel_node =
      "name = \"sentinel\"\n\n[[node]]\nname = \"redis2\"\nreplica_of = \"sentinel\"\n\n[sentinel]\n";
  check_rejected(small("name = \"redis1\"\n", sentinel_node), "scenarios/x.toml:11: [[node]] 'name'", "sentinel");
}

TEST_CASE("a fault or a client start after the end of the run is an impossible input, named where it is") {
  const char* base = R"(title = "t"
about = "a"
source = "s"
duration = "60s"
[lock]
algorithm = "redis-single"
ttl = "10s"
[[node]]
name = "redis1"
[[client]]
name = "client1"
start = "START"
[[fault]]
at = "AT"
kind = "crash"
target = "redis1"
)";
  auto with = [&](const std::string& start, const std::string& at) {
    std::string text = base;
    text.replace(text.find("START"), 5, start);
    text.replace(text.find("AT"), 2, at);
    try {
      parse_scenario(text, "x.toml");
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  CHECK(with("0s", "59s") == "(accepted)");
  CHECK(with("0s", "100s").find("x.toml:14: [[fault]] crash 'at': 100s is not within the run (duration = 60s)") == 0);
  CHECK(with("60s", "1s").find("x.toml:12: [[client]] 'start': 60s is not within the run") == 0);
  CHECK(with("0s", "1s").find("accepted") != std::string::npos);
}

TEST_CASE("a range written with three dots is named as such") {
  const std::string text = R"(title = "t"
about = "a"
source = "s"
duration = "60s"
[lock]
algorithm = "redis-single"
ttl = "10s"
[network]
delay = "1ms...3ms"
[[node]]
name = "redis1"
[[client]]
name = "client1"
)";
  CHECK_THROWS_WITH_AS(parse_scenario(text, "x.toml"), doctest::Contains("x.toml:9: [network] 'delay': \"1ms...3ms\": a range has two dots"),
                       ScenarioError);
}

TEST_CASE("replica_of naming no node declared before it is refused at its line") {
  // So no build looks up a master that is not there (ServiceBuild::index_of).
  const std::string later = "name = \"redis1\"\nreplica_of = \"redis2\"\n\n[[node]]\nname = \"redis2\"\n";
  check_rejected(small("name = \"redis1\"\n", later), "scenarios/x.toml:12: [[node]] 'replica_of'",
                 "no node named \"redis2\" is declared before this one");
  check_rejected(small("name = \"redis1\"\n", "name = \"redis1\"\nreplica_of = \"redis9\"\n"),
                 "scenarios/x.toml:12: [[node]] 'replica_of'", "no node named \"redis9\"");
}

TEST_CASE("replica_of is refused for a model that does not replicate, named where it is") {
  // Only Redis replicates (sim/servers/table.hpp ServerModel::replicates):
  // ZooKeeper's ensemble is one service, not masters with replicas.
  std::string zk = small("algorithm = \"redis-single\"\nttl = \"10s\"\n", "algorithm = \"zookeeper\"\n");
  zk.replace(zk.find("name = \"redis1\"\n"), 16, "name = \"zk1\"\n\n[[node]]\nname = \"zk2\"\nreplica_of = \"zk1\"\n");
  check_rejected(zk, "scenarios/x.toml:12: [[node]] 'replica_of'", "only Redis nodes replicate");
}

}  // namespace scenario_test
