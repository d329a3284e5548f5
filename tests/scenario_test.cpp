// The scenario loader: a full file parses into the right values, and every
// class of bad input is one message naming the file, the line and the key.
#include <doctest/doctest.h>

#include "harness/scenario.hpp"

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
  CHECK(s.lock.retry_delay->lo == Duration::ms(10));
  CHECK(s.lock.retry_delay->hi == Duration::ms(20));
  CHECK(s.lock.retry_count == kForever);
  CHECK(s.network.delay.hi == Duration::ms(3));
  CHECK(s.network.loss == doctest::Approx(0.01));
  CHECK(s.nodes[0].clock.offset == -Duration::s(2));
  CHECK(s.nodes[0].clock.drift_ppb == 1500);
  CHECK(s.nodes[0].persistence == Persistence::AofAlways);
  CHECK(s.clients[0].repeat == 3);
  CHECK(s.clients[0].check_before_write);
  CHECK(s.clients[1].job == "hold");
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
      {"unknown flavour", "fencing = \"token\"", "fencing = \"token\"\nflavour = \"x\"", "[lock] 'flavour': redis-single has no flavours"},
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
      {"failover is not supported yet", "kind = \"pause\"", "kind = \"failover\"", "not supported yet"},
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

TEST_CASE("a missing file is an error naming it") {
  CHECK_THROWS_WITH_AS(load_scenario("/nonexistent/x.toml"), doctest::Contains("/nonexistent/x.toml"), ScenarioError);
}
