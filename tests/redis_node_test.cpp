// One Redis node on the kernel: expiry by its own wall clock, lazy and active,
// compare-and-delete, persistence across a crash, an idle node's expiry loop.
#include <doctest/doctest.h>

#include <string>

#include "sim/servers/redis/node.hpp"
#include "tests/kernel_support.hpp"

namespace redis_node_test {

using namespace locksim;
using namespace locksim::testing;

TEST_CASE("Redis expires keys by its own wall clock: a +D jump expires keys with less than D left") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  const auto set = [&](std::string key, std::int64_t ttl_ms) {
    return redis.execute({.op = redis::Op::Set, .key = key, .value = "v", .nx = true, .px = Duration::ms(ttl_ms)},
                         kNoProc);
  };
  CHECK(set("short", 10'000).is_ok());  // 10 s left
  CHECK(set("long", 30'000).is_ok());   // 30 s left
  w.at(at_ms(1), [&] { w.clock_jump(redis.id(), Duration::s(15)); });
  w.run_until(at_ms(2));
  // The next lookup of each key decides: "short" had less than 15 s left.
  CHECK(redis.execute({.op = redis::Op::Get, .key = "short"}, kNoProc).is_nil());
  CHECK(redis.execute({.op = redis::Op::Get, .key = "long"}, kNoProc).str == "v");
}

TEST_CASE("Redis's active expiry removes an expired key nobody reads") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  redis.execute({.op = redis::Op::Set, .key = "lock", .value = "v", .px = Duration::ms(250)}, kNoProc);
  w.run_until(at_ms(240));
  CHECK(redis.keyspace().count("lock") == 1);
  w.run_until(at_ms(400));  // the cycle runs every 100 ms on the node's clock
  CHECK(redis.keyspace().count("lock") == 0);
}

TEST_CASE("a Redis node on a clock at -60% sleeps its idle expiry loop until never, and time only runs forward") {
  // The loop sleeps until never() when no key has a TTL; on a clock this slow
  // that sleep's true instant overflowed int64 and was queued in the past
  // (found by the TOML round-trip property at its 1,000 cases). The key set
  // later is expired by the cycle, on the node's slow clock.
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{Duration::zero(), -600'000'000}, RedisConfig{});
  w.run_until(at_ms(1'000));
  CHECK(w.now() == at_ms(1'000));
  w.at(at_ms(1'000), [&] {
    redis.execute({.op = redis::Op::Set, .key = "lock", .value = "v", .px = Duration::ms(250)}, kNoProc);
  });
  w.run_until(at_ms(1'500));  // the node's clock reads 600 ms, the key is due after 650 ms: not yet
  CHECK(redis.keyspace().count("lock") == 1);
  w.run_until(at_ms(2'000));  // it reads 800 ms: the cycle at 700 ms (true 1.75 s) has run
  CHECK(redis.keyspace().count("lock") == 0);
  CHECK(w.now() == at_ms(2'000));
}

TEST_CASE("a key is still there at exactly its expiry time: Redis expires when now > when") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  redis.execute({.op = redis::Op::Set, .key = "k", .value = "v", .px = Duration::ms(5)}, kNoProc);
  w.run_until(at_ms(5));
  CHECK(redis.execute({.op = redis::Op::Get, .key = "k"}, kNoProc).str == "v");
}

TEST_CASE("compare-and-delete removes only our own value") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  redis.execute({.op = redis::Op::Set, .key = "lock", .value = "mine"}, kNoProc);
  CHECK(redis.execute({.op = redis::Op::CompareAndDelete, .key = "lock", .value = "theirs"}, kNoProc).integer == 0);
  CHECK(redis.keyspace().count("lock") == 1);
  CHECK(redis.execute({.op = redis::Op::CompareAndDelete, .key = "lock", .value = "mine"}, kNoProc).integer == 1);
  CHECK(redis.keyspace().count("lock") == 0);
}

TEST_CASE("a crash loses a Redis node's keys unless it persists them") {
  World w(1);
  auto& volatile_node = w.add<RedisNode>("r1", ClockSpec{}, RedisConfig{});
  RedisConfig aof;
  aof.aof_always = true;
  auto& durable_node = w.add<RedisNode>("r2", ClockSpec{}, aof);
  for (RedisNode* n : {&volatile_node, &durable_node})
    n->execute({.op = redis::Op::Set, .key = "lock", .value = "v"}, kNoProc);
  w.at(at_ms(1), [&] {
    w.crash(volatile_node.id());
    w.crash(durable_node.id());
  });
  w.at(at_ms(2), [&] {
    w.restart(volatile_node.id());
    w.restart(durable_node.id());
  });
  w.run_until(at_ms(3));
  CHECK(volatile_node.keyspace().empty());
  CHECK(durable_node.keyspace().count("lock") == 1);
}

TEST_CASE("an idle Redis node runs no expiry ticks, and a key still expires on the 100 ms grid") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  w.run_until(at_ms(10'000));
  CHECK(w.events_run() <= 2);  // the loop's start, then it sleeps until a key has a TTL
  redis.execute({.op = redis::Op::Set, .key = "lock", .value = "v", .px = Duration::ms(250)}, kNoProc);
  w.run_until(at_ms(10'299));
  CHECK(redis.keyspace().count("lock") == 1);
  w.run_until(at_ms(10'300));  // the first tick of the grid after 10.25 s
  CHECK(redis.keyspace().count("lock") == 0);
  CHECK(w.events_run() <= 6);
}

TEST_CASE("a wall clock jump wakes Redis's active expiry: the key goes at the next tick") {
  World w(1);
  auto& redis = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  redis.execute({.op = redis::Op::Set, .key = "lock", .value = "v", .px = Duration::s(10)}, kNoProc);
  w.at(at_ms(150), [&] { w.clock_jump(redis.id(), Duration::s(20)); });
  w.run_until(at_ms(199));
  CHECK(redis.keyspace().count("lock") == 1);
  w.run_until(at_ms(200));
  CHECK(redis.keyspace().count("lock") == 0);
}

}  // namespace redis_node_test
