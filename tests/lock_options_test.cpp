// Each algorithm parses its own [lock] options into typed values; the
// scenario keeps the table's text, which set_lock_option edits and parses again.
#include <doctest/doctest.h>

#include <string>

#include "harness/explore.hpp"
#include "harness/run.hpp"
#include "harness/scenario.hpp"
#include "harness/scenario_writer.hpp"
#include "lockalgos/etcd.hpp"
#include "lockalgos/redis_common.hpp"
#include "lockalgos/redisson.hpp"
#include "lockalgos/redlock.hpp"
#include "lockalgos/zookeeper.hpp"
#include "tests/support.hpp"

namespace lock_options_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// [lock] is on line 6; its keys follow, one a line.
Scenario with_lock(const std::string& lock_keys, const std::string& nodes = "[[node]]\nname = \"n1\"\n") {
  return parse_scenario("title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"10s\"\n\n[lock]\n" + lock_keys +
                            "\n" + nodes + "[[client]]\nname = \"client1\"\n",
                        "scenarios/x.toml");
}

std::string rejection(Scenario& s, const std::string& key, std::optional<std::string> text) {
  try {
    set_lock_option(s, key, std::move(text));
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("each algorithm reads its own keys into typed options, enums for the named choices") {
  const Scenario single = with_lock("algorithm = \"redis-single\"\nttl = \"10s\"\nrelease = \"get-then-del\"\nretry_count = 3");
  const auto& rs = single.lock.options_as<RedisSingleOptions>();
  CHECK(rs.release == Release::GetThenDel);
  CHECK(rs.retry_count == 3);
  CHECK(rs.request_timeout == Duration::s(2));  // Jedis's default

  const Scenario redlock = with_lock(
      "algorithm = \"redlock\"\nflavour = \"redsync\"\nttl = \"10s\"\nfanout = \"parallel\"\ncollect = \"all\"\n"
      "unlock = \"no-wait\"");
  const auto& rl = redlock.lock.options_as<RedlockOptions>();
  CHECK(rl.fanout == Fanout::Parallel);
  CHECK(rl.collect == Collect::All);
  CHECK(rl.unlock == Unlock::NoWait);
  CHECK_FALSE(rl.retry_count.has_value());  // the flavour's

  const Scenario zk = with_lock("algorithm = \"zookeeper\"\non_suspended = \"stop\"\nwatch = \"parent\"\ntick_time = \"3s\"",
                                "[[node]]\nname = \"zk\"\n");
  const auto& z = zk.lock.options_as<ZooKeeperOptions>();
  CHECK(z.on_suspended == OnSuspended::Stop);
  CHECK(z.watch == Watch::Parent);
  CHECK(z.server().tick_time == Duration::s(3));

  const Scenario etcd = with_lock("algorithm = \"etcd\"\nversion = \"3.4\"\nfirst_token = 40", "[[node]]\nname = \"etcd\"\n");
  CHECK(etcd.lock.options_as<EtcdOptions>().version == EtcdVersion::V3_4);
  CHECK(etcd.lock.options->server().first_token == 40);
}

TEST_CASE("every algorithm's options say what lease explore measures against") {
  CHECK(with_lock("algorithm = \"redis-single\"\nttl = \"7s\"").lock.options->lease() == Duration::s(7));
  CHECK(with_lock("algorithm = \"redlock\"\nttl = \"9s\"").lock.options->lease() == Duration::s(9));
  CHECK(with_lock("algorithm = \"watchdog\"\nwatchdog_timeout = \"12s\"").lock.options->lease() == Duration::s(12));
  CHECK(with_lock("algorithm = \"multilock\"").lock.options->lease() == Duration::s(30));
  CHECK(with_lock("algorithm = \"setnx\"").lock.options->lease() == Duration::s(30));
  CHECK(with_lock("algorithm = \"zookeeper\"\nsession_timeout = \"6s\"").lock.options->lease() == Duration::s(6));
  CHECK(with_lock("algorithm = \"etcd\"\nlease_ttl = \"4s\"").lock.options->lease() == Duration::s(4));
  // api/lock.go:19 DefaultLockSessionTTL = "15s".
  CHECK(with_lock("algorithm = \"consul\"").lock.options->lease() == Duration::s(15));
}

TEST_CASE("set_lock_option changes the typed options and the text the writer writes") {
  Scenario s = with_lock("algorithm = \"redis-single\"\nttl = \"10s\"  # the lease\nretry_delay = \"10ms..20ms\"");
  set_lock_option(s, "ttl", "\"45s\"");
  CHECK(s.lock.ttl == Duration::s(45));
  CHECK(s.lock.options->lease() == Duration::s(45));
  set_lock_option(s, "release", "\"del\"");  // a key the file does not have
  CHECK(s.lock.options_as<RedisSingleOptions>().release == Release::Del);
  set_lock_option(s, "retry_delay", std::nullopt);
  CHECK(s.lock.options_as<RedisSingleOptions>().retry_delay.is_fixed());
  const std::string text = to_toml(s);
  CHECK(text.find("[lock]\nalgorithm = \"redis-single\"\nttl = \"45s\"\nrelease = \"del\"\n") != std::string::npos);
  CHECK(text.find("retry_delay") == std::string::npos);
  CHECK(parse_scenario(text, "again.toml").lock.options_as<RedisSingleOptions>().release == Release::Del);
}

TEST_CASE("the writer writes the lock table's values as the file wrote them, in its order") {
  const Scenario s = with_lock("ttl = \"10s\"\nalgorithm = \"redlock\"\ndrift_factor = 0.010\nretry_count = \"forever\"");
  const std::string text = to_toml(s);
  CHECK(text.find("[lock]\nttl = \"10s\"\nalgorithm = \"redlock\"\ndrift_factor = 0.010\nretry_count = \"forever\"\n") !=
        std::string::npos);
}

TEST_CASE("a value set_lock_option rejects is named at the key's line in the file, and the scenario stays as it was") {
  Scenario s = with_lock("algorithm = \"redis-single\"\nttl = \"10s\"\nretry_count = 3");
  std::string message = rejection(s, "ttl", "\"10 s\"");
  CHECK(message.rfind("scenarios/x.toml:8: [lock] 'ttl': \"10 s\" is not a duration", 0) == 0);
  CHECK(s.lock.ttl == Duration::s(10));
  CHECK(to_toml(s).find("ttl = \"10s\"") != std::string::npos);
  // A key the file does not have is named at [lock]'s line, with the loader's suggestion.
  message = rejection(s, "retry_dealy", "\"1s\"");
  CHECK(message.rfind("scenarios/x.toml:6: [lock] 'retry_dealy'", 0) == 0);
  CHECK(message.find("did you mean 'retry_delay'?") != std::string::npos);
  message = rejection(s, "release", "\"drop\"");
  CHECK(message.rfind("scenarios/x.toml:6: [lock] 'release': \"drop\" is not one of", 0) == 0);
  // Text that is not a TOML value: a duration without its quotes.
  message = rejection(s, "retry_count", "1s");
  CHECK(message.rfind("scenarios/x.toml:9: [lock] 'retry_count': 1s is not a TOML value", 0) == 0);
  CHECK(s.lock.options_as<RedisSingleOptions>().retry_count == 3);
}

TEST_CASE("set_lock_option keeps the rules that tie options together") {
  Scenario s = with_lock("algorithm = \"redlock\"\nttl = \"10s\"\nflavour = \"redsync\"\ncollect = \"all\"");
  // Without redsync's parallel fan-out, collect means nothing.
  CHECK(rejection(s, "flavour", "\"redlock-py\"").find("[lock] 'collect': applies to a parallel fan-out") !=
        std::string::npos);
  CHECK(s.lock.flavour == "redsync");
  set_lock_option(s, "fanout", "\"parallel\"");
  set_lock_option(s, "flavour", "\"redlock-py\"");
  CHECK(s.lock.flavour == "redlock-py");
  CHECK(s.lock.options_as<RedlockOptions>().collect == Collect::All);
}

TEST_CASE("the matrix leaves out the keys another algorithm does not take") {
  const Scenario base = catalogue("scenarios/redis/del-without-owner-check.toml");  // redis-single, release = "del"
  ExploreOptions o;
  o.runs = 5;
  const auto rows = explore_matrix(base, o, {"redlock:redsync", "setnx"});
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].summary.runs == 5);
  CHECK(rows[1].summary.runs == 5);
}

TEST_CASE("retry_count = N is N tries after the first: the single-node locks try N + 1 times, then give up") {
  // The lock is held for the whole run: client2 tries, retries twice, and fails.
  for (const std::string algorithm : {"setnx", "getset", "setnx-timestamp", "redis-single"}) {
    INFO(algorithm);
    const std::string ttl = algorithm == "setnx" || algorithm == "getset" ? "" : "ttl = \"30s\"\n";
    const RunResult r = run_scenario(parse_scenario(
        "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"10s\"\n\n[lock]\nalgorithm = \"" + algorithm +
            "\"\n" + ttl + "retry_count = 2\nretry_delay = \"100ms\"\n[[node]]\nname = \"redis1\"\n"
            "[[client]]\nname = \"client1\"\njob = \"hold\"\nhold = \"9s\"\n"
            "[[client]]\nname = \"client2\"\nstart = \"500ms\"\n",
        "scenarios/x.toml"));
    CHECK(events_of(r, Ev::Retrying, "client2").size() == 2);
    CHECK(events_of(r, Ev::AcquireFailed, "client2").size() == 1);
    CHECK(events_of(r, Ev::Acquired, "client2").empty());
  }
}

namespace {

RunResult single_node(const std::string& algorithm, const std::string& rest) {
  return run_scenario(parse_scenario("title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"10s\"\n\n[lock]\nalgorithm = \"" +
                                         algorithm + "\"\n[[node]]\nname = \"redis1\"\n"
                                         "[[client]]\nname = \"client1\"\njob = \"hold\"\nhold = \"3s\"\n" + rest,
                                     "scenarios/x.toml"));
}

}  // namespace

TEST_CASE("the naive locks' release by DEL is confirmed only when DEL removed the key") {
  // DEL answers how many keys it removed: after a restart without
  // persistence the key is gone, and the release removes nothing.
  for (const std::string algorithm : {"setnx", "getset"}) {
    INFO(algorithm);
    const RunResult lost = single_node(algorithm, "[[fault]]\nat = \"1s\"\nkind = \"crash\"\ntarget = \"redis1\"\n"
                                                  "[[fault]]\nat = \"1500ms\"\nkind = \"restart\"\ntarget = \"redis1\"\n");
    CHECK(events_of(lost, Ev::ReleaseFailed, "client1").size() == 1);
    CHECK(events_of(lost, Ev::Released, "client1").empty());
    const RunResult kept = single_node(algorithm, "");
    CHECK(events_of(kept, Ev::Released, "client1").size() == 1);
  }
}

TEST_CASE("getset takes the lock only when its GET found no value: a later client waits for the release") {
  // GET, then SET if it was nil: the race it is known for needs two GETs
  // between one holder's GET and SET; here client2 asks at 500 ms, long after.
  const RunResult r = single_node("getset", "[[client]]\nname = \"client2\"\nstart = \"500ms\"\n");
  const auto released = events_of(r, Ev::Released, "client1");
  const auto taken = events_of(r, Ev::Acquired, "client2");
  REQUIRE(released.size() == 1);
  REQUIRE(taken.size() == 1);
  CHECK(taken[0]->at > released[0]->at);
  CHECK(r.verdict.empty());
}

TEST_CASE("setnx-timestamp sends no DEL for a lock whose timestamp has passed: the release is not confirmed") {
  // The SETNX page's pattern: a holder past its expiry timestamp must not DEL
  // the key, which another client may have taken over by GETSET since.
  const RunResult r = run_scenario(parse_scenario(
      "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"10s\"\n\n[lock]\nalgorithm = \"setnx-timestamp\"\nttl = \"1s\"\n"
      "[[node]]\nname = \"redis1\"\n[[client]]\nname = \"client1\"\njob = \"hold\"\nhold = \"2s\"\n",
      "scenarios/x.toml"));
  CHECK(events_of(r, Ev::ReleaseFailed, "client1").size() == 1);
  for (const TraceEvent* e : events_of(r, Ev::Command, "redis1")) CHECK(e->detail.rfind("DEL", 0) != 0);
}

}  // namespace lock_options_test
