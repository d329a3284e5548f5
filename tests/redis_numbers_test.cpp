// The Redis server's numbers, pinned to redis 7.0.15 (sim/servers/redis/node.hpp), and
// the scenario keys that set them.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "harness/run.hpp"
#include "sim/servers/redis/node.hpp"
#include "tests/support.hpp"

namespace redis_numbers_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

constexpr Instant at_us(std::int64_t us) { return Instant::zero() + Duration::us(us); }
constexpr Instant at_ms(std::int64_t ms) { return Instant::zero() + Duration::ms(ms); }

std::string one_node(const std::string& node_keys, const std::string& faults = "") {
  return R"(title = "t"
about = "a"
source = "s"
duration = "5s"
[lock]
algorithm = "redis-single"
ttl = "10s"
[[node]]
name = "redis1"
)" + node_keys + R"(
[[client]]
name = "client1"
job = "hold"
hold = "15s"
)" + faults;
}

}  // namespace

TEST_CASE("Redis compares expiry in whole milliseconds: a key set with PX 10 at 0.5 ms still answers at 10.9 ms") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  w.run_until(at_us(500));
  // when = mstime() + 10 = 0 + 10 ms; expired only once now_ms > 10 (db.c:1650).
  redis.execute({.op = redis::Op::Set, .key = "k", .value = "v", .px = Duration::ms(10)}, kNoProc);
  w.run_until(at_us(10'900));
  CHECK(redis.execute({.op = redis::Op::Get, .key = "k"}, kNoProc).str == "v");
  CHECK(redis.execute({.op = redis::Op::Pttl, .key = "k"}, kNoProc).integer == 0);
  w.run_until(at_us(11'000));
  CHECK(redis.execute({.op = redis::Op::Get, .key = "k"}, kNoProc).is_nil());
}

TEST_CASE("active expiry samples again while more than 10 percent of a sample had expired") {
  // 100 keys with a TTL, half of them expired. A 7.0 cycle goes on while a
  // sample of 20 holds 3 or more expired keys (expire.c:307-308), so it stops
  // near 10% stale; the 25% of older documentation would stop near 25%.
  std::size_t left_total = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    World w(seed);
    auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
    for (int i = 0; i < 100; ++i)
      redis.execute({.op = redis::Op::Set, .key = fmt::format("k{}", i), .value = "v",
                     .px = Duration::ms(i < 50 ? 150 : 100'000)}, kNoProc);
    w.run_until(at_ms(250));  // one cycle, at the 200 ms tick
    std::size_t expired_left = 0;
    for (int i = 0; i < 50; ++i) expired_left += redis.keyspace().count(fmt::format("k{}", i));
    left_total += expired_left;
    CHECK(redis.keyspace().size() >= 50);  // nothing live is touched
  }
  // About 6 of 50 left per cycle at 10% (about 15 at 25%).
  CHECK(left_total < 20 * 10);
  CHECK(left_total > 0);
}

TEST_CASE("with appendfsync everysec a process crash loses no acknowledged key") {
  const std::string faults = R"([[fault]]
at = "1s"
kind = "crash"
target = "redis1"
[[fault]]
at = "2s"
kind = "restart"
target = "redis1"
)";
  for (const char* persistence : {"none", "aof-everysec", "aof-always"}) {
    INFO("persistence = " << persistence);
    const Scenario s = parse_scenario(one_node(std::string("persistence = \"") + persistence + "\"\n", faults), "t.toml");
    const RunResult r = run_scenario(s);
    const auto& node = dynamic_cast<const RedisNode&>(r.world->process(*r.world->find("redis1")));
    // client1's lock (10 s) was set at 0 and acknowledged: the AOF write(2)
    // came before the reply (server.c:1664-1669), so SIGKILL cannot lose it.
    CHECK(node.keyspace().count("lock") == (std::string(persistence) == "none" ? 0u : 1u));
  }
  CHECK(parse_scenario(one_node("persistence = \"aof-everysec\"\n"), "t.toml").nodes[0].persistence ==
        Persistence::AofEverysec);
}

TEST_CASE("a wall clock that drifts alone expires a key early while the monotonic clock keeps true time") {
  const Scenario s = parse_scenario(one_node("clock = { wall_drift_ppm = 100000 }\n"), "t.toml");
  REQUIRE(s.nodes[0].clock.wall_drift_ppb == 100'000'000);
  CHECK(s.nodes[0].clock.drift_ppb == 0);
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", s.nodes[0].clock, RedisConfig{});
  redis.execute({.op = redis::Op::Set, .key = "lock", .value = "v", .px = Duration::s(10)}, kNoProc);
  w.run_until(at_ms(9'200));
  // 9.2 s of true time: the monotonic clock reads 9.2 s, the wall clock 10.12 s.
  CHECK(redis.mono_now() == at_ms(9'200));
  CHECK(redis.wall_now() == at_ms(10'120));
  CHECK(redis.keyspace().count("lock") == 0);  // the active cycle at the first tick past 10 s on the wall
  // drift_ppm moves both clocks; the wall clock's own drift stays on top of it.
  World w2(1);
  auto& both = w2.add<RedisNode>("redis1", ClockSpec{Duration::zero(), 50'000'000, 100'000'000}, RedisConfig{});
  w2.run_until(at_ms(1'000));
  CHECK(both.mono_now() == at_ms(1'050));
  CHECK(both.wall_now() == at_ms(1'150));
  w2.set_drift_ppb(both.id(), 0);
  w2.run_until(at_ms(2'000));
  CHECK(both.mono_now() == at_ms(2'050));
  CHECK(both.wall_now() == at_ms(2'250));
}

TEST_CASE("the scenario keys of Sentinel and replicas: sentinels, quorum, failover_timeout, replica_priority") {
  const std::string text = R"(title = "t"
about = "a"
source = "s"
duration = "20s"
[lock]
algorithm = "redis-single"
ttl = "10s"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
replica_of = "redis1"
replica_priority = 10
[sentinel]
sentinels = 3
down_after = "5s"
failover_timeout = "20s"
clock = { wall_drift_ppm = 20 }
[[client]]
name = "client1"
[[fault]]
at = "1s"
kind = "crash"
target = "sentinel3"
)";
  const Scenario s = parse_scenario(text, "t.toml");
  CHECK(s.sentinel.sentinels == 3);
  CHECK(s.sentinel.quorum_or_default() == 2);  // a majority
  CHECK(s.sentinel.process_name(0) == "sentinel1");
  CHECK(s.sentinel.failover_timeout == Duration::s(20));
  CHECK(s.sentinel.clock.wall_drift_ppb == 20'000);
  CHECK(s.nodes[1].replica_priority == 10);
  std::string one = text;
  one.replace(one.find("sentinels = 3"), 13, "quorum = 1");
  one.replace(one.find("target = \"sentinel3\""), 20, "target = \"sentinel\"");
  CHECK(parse_scenario(one, "t.toml").sentinel.quorum_or_default() == 1);
  std::string bad = text;
  bad.replace(bad.find("sentinels = 3"), 13, "sentinels = 3\nquorum = 4");
  CHECK_THROWS_WITH_AS(parse_scenario(bad, "t.toml"), doctest::Contains("'quorum': 4 is out of range (1 to 3)"),
                       ScenarioError);
  std::string clash = text;
  clash.replace(clash.find("name = \"client1\""), 16, "name = \"sentinel2\"");
  CHECK_THROWS_WITH_AS(parse_scenario(clash, "t.toml"), doctest::Contains("\"sentinel2\" is already the name of another process"),
                       ScenarioError);
}

}  // namespace redis_numbers_test
