// The kernel: event order, pauses, crashes, clocks, the network, determinism.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/redis.hpp"
#include "sim/world.hpp"

using namespace locksim;

namespace {

// A bare process whose behaviour the test supplies as a coroutine.
struct Probe : Process {
  Probe(World& w, std::string name, ClockSpec clock = {}) : Process(w, std::move(name), ProcessRole::Client, clock) {}
  std::vector<Message> inbox;
  void on_message(Message& m) override { inbox.push_back(m); }
};

// An echo server: answers every Redis request with its own GET reply of the key.
struct Echo : Process {
  Echo(World& w, std::string name) : Process(w, std::move(name), ProcessRole::LockNode, {}) {}
  void on_message(Message& m) override { reply(m, redis::Reply::of(std::get<redis::Request>(m.body).key)); }
};

constexpr Instant at_ms(std::int64_t ms) { return Instant::zero() + Duration::ms(ms); }

}  // namespace

TEST_CASE("events at the same instant run in the order they were scheduled") {
  World w(1);
  std::vector<int> order;
  for (int i = 0; i < 10; ++i) w.at(at_ms(5), [&order, i] { order.push_back(i); });
  w.at(at_ms(1), [&order] { order.push_back(-1); });
  w.run_until(at_ms(10));
  CHECK(order == std::vector<int>{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
}

TEST_CASE("a paused process sees no timer fire until it resumes") {
  World w(1);
  auto& p = w.add<Probe>("p");
  Instant woke;
  p.spawn([](Probe& self, Instant& woke) -> Task<void> {
    co_await self.sleep(Duration::ms(100));
    woke = self.world().now();
  }(p, woke));
  w.at(at_ms(50), [&] { w.pause(p.id(), Duration::ms(1000)); });
  w.run_until(at_ms(500));
  CHECK(woke == Instant::zero());  // due at 100 ms, held by the pause
  w.run_until(at_ms(2000));
  CHECK(woke == at_ms(1050));  // runs the moment the pause ends
}

TEST_CASE("a paused process receives no message until it resumes") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");
  w.network().configure({DurationRange::fixed(Duration::ms(2)), 0.0, true});
  w.at(at_ms(0), [&] { w.pause(b.id(), Duration::ms(30)); });
  w.at(at_ms(1), [&] { a.send(b.id(), storage::Request{}); });
  w.run_until(at_ms(20));
  CHECK(b.inbox.empty());
  w.run_until(at_ms(40));
  REQUIRE(b.inbox.size() == 1);
  // The delivery was recorded when b could handle it, at the end of the pause.
  bool delivered_at_resume = false;
  for (const TraceEvent& e : w.trace().events())
    if (e.kind == Ev::Delivered && e.process == b.id()) delivered_at_resume = e.at == at_ms(30);
  CHECK(delivered_at_resume);
}

TEST_CASE("a crash destroys the process's coroutines and their RAII clean-up runs") {
  World w(1);
  auto& p = w.add<Probe>("p");
  struct Guard {
    int* destroyed;
    ~Guard() { ++*destroyed; }
  };
  int destroyed = 0;
  bool finished = false;
  auto inner = [](Probe& self, int& destroyed) -> Task<void> {
    Guard g{&destroyed};
    co_await self.sleep(Duration::s(10));
  };
  p.spawn([](Probe& self, int& destroyed, bool& finished, auto inner) -> Task<void> {
    Guard g{&destroyed};
    co_await inner(self, destroyed);  // a nested frame, destroyed with its parent
    finished = true;
  }(p, destroyed, finished, inner));
  w.at(at_ms(100), [&] { w.crash(p.id()); });
  w.run_until(at_ms(50));
  CHECK(destroyed == 0);
  w.run_until(at_ms(20'000));
  CHECK(destroyed == 2);
  CHECK_FALSE(finished);  // the timer due at 10 s never resumed a destroyed frame
  CHECK(p.state() == Process::State::Down);
}

TEST_CASE("a crashed process drops messages addressed to it, and a restarted one starts afresh") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");
  w.at(at_ms(0), [&] { w.crash(b.id()); });
  w.at(at_ms(1), [&] { a.send(b.id(), storage::Request{}); });
  w.at(at_ms(10), [&] { w.restart(b.id()); });
  w.at(at_ms(11), [&] { a.send(b.id(), storage::Request{}); });
  w.run_until(at_ms(100));
  CHECK(b.inbox.size() == 1);
  int dropped = 0;
  for (const TraceEvent& e : w.trace().events()) dropped += e.kind == Ev::Dropped && e.detail == "destination down";
  CHECK(dropped == 1);
}

TEST_CASE("a call times out on the caller's clock when no reply comes") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");  // never replies
  std::optional<bool> answered;
  a.spawn([](Probe& self, ProcId to, std::optional<bool>& answered) -> Task<void> {
    storage::Request req;
    auto r = co_await self.call(to, std::move(req), Duration::ms(50));
    answered = r.has_value();
  }(a, b.id(), answered));
  w.run_until(at_ms(49));
  CHECK_FALSE(answered.has_value());
  w.run_until(at_ms(51));
  REQUIRE(answered.has_value());
  CHECK_FALSE(*answered);
}

TEST_CASE("a clock reads offset plus drift times elapsed true time") {
  LocalClock c(Duration::s(5), 10'000'000);  // +5 s, 1% fast (10,000 ppm)
  CHECK(c.read(Instant::zero()) == Instant::zero() + Duration::s(5));
  CHECK(c.read(at_ms(1000)) == Instant::zero() + Duration::ms(6010));
  // When will it read 6.010 s? At true 1 s.
  CHECK(c.when_reads(Instant::zero() + Duration::ms(6010), Instant::zero()) == at_ms(1000));
}

TEST_CASE("a clock jump moves the reading at once, and later readings keep the jump") {
  LocalClock c(Duration::zero(), 0);
  c.jump(at_ms(1000), Duration::s(15));
  CHECK(c.read(at_ms(1000)) == Instant::zero() + Duration::ms(16'000));
  CHECK(c.read(at_ms(2000)) == Instant::zero() + Duration::ms(17'000));
  c.jump(at_ms(2000), -Duration::s(20));
  CHECK(c.read(at_ms(2000)) == Instant::zero() - Duration::ms(3'000));
}

TEST_CASE("a drift change keeps the reading continuous and changes only the rate") {
  LocalClock c(Duration::zero(), 0);
  c.set_drift_ppb(at_ms(1000), 50'000'000);  // 5% fast from 1 s on
  CHECK(c.read(at_ms(1000)) == at_ms(1000));
  CHECK(c.read(at_ms(3000)) == at_ms(3100));
}

TEST_CASE("a process's monotonic clock never jumps when its wall clock does") {
  World w(1);
  auto& p = w.add<Probe>("p");
  w.at(at_ms(100), [&] { w.clock_jump(p.id(), Duration::s(60)); });
  w.run_until(at_ms(200));
  CHECK(p.wall_now() == at_ms(60'200));
  CHECK(p.mono_now() == at_ms(200));
}

TEST_CASE("a sleep measured on a fast clock ends early in true time") {
  World w(1);
  auto& p = w.add<Probe>("p", ClockSpec{Duration::zero(), 100'000'000});  // 10% fast
  Instant woke;
  p.spawn([](Probe& self, Instant& woke) -> Task<void> {
    co_await self.sleep(Duration::ms(1100));
    woke = self.world().now();
  }(p, woke));
  w.run_until(at_ms(5000));
  CHECK(woke == at_ms(1000));
}

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

TEST_CASE("a partition drops messages between its groups until it heals") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");
  auto& c = w.add<Probe>("c");
  std::uint64_t id = 0;
  w.at(at_ms(0), [&] { id = w.network().partition({{a.id()}, {b.id()}}, false, "test"); });
  w.at(at_ms(1), [&] {
    a.send(b.id(), storage::Request{});
    b.send(a.id(), storage::Request{});
    a.send(c.id(), storage::Request{});  // c is in no group: unaffected
  });
  w.at(at_ms(10), [&] { w.network().heal(id); });
  w.at(at_ms(11), [&] { a.send(b.id(), storage::Request{}); });
  w.run_until(at_ms(100));
  CHECK(b.inbox.size() == 1);  // only the one sent after the heal
  CHECK(a.inbox.empty());
  CHECK(c.inbox.size() == 1);
}

TEST_CASE("a one-way partition cuts only messages from the first group") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");
  w.at(at_ms(0), [&] { w.network().partition({{a.id()}, {b.id()}}, true, "test"); });
  w.at(at_ms(1), [&] {
    a.send(b.id(), storage::Request{});
    b.send(a.id(), storage::Request{});
  });
  w.run_until(at_ms(100));
  CHECK(b.inbox.empty());
  CHECK(a.inbox.size() == 1);
}

TEST_CASE("a hold rule keeps a link's messages back until its window ends") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");
  w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
  LinkRule r;
  r.kind = LinkRule::Kind::Hold;
  r.from = a.id();
  r.to = b.id();
  r.until = at_ms(40'000);
  w.network().add_rule(r);
  w.at(at_ms(1000), [&] { a.send(b.id(), storage::Request{}); });
  w.run_until(at_ms(39'999));
  CHECK(b.inbox.empty());
  w.run_until(at_ms(40'001));
  CHECK(b.inbox.size() == 1);
}

namespace {
std::string run_random_traffic(std::uint64_t seed) {
  World w(seed);
  w.network().configure({DurationRange{Duration::ms(1), Duration::ms(20)}, 0.1, false});
  auto& client = w.add<Probe>("client");
  auto& server = w.add<Echo>("server");
  client.spawn([](Probe& self, ProcId to) -> Task<void> {
    for (int i = 0; i < 200; ++i) {
      redis::Request req;
      req.key = std::to_string(i);
      co_await self.call(to, std::move(req), Duration::ms(30));
      co_await self.sleep(self.rng().between(Duration::ms(0), Duration::ms(5)));
    }
  }(client, server.id()));
  w.run_until(at_ms(60'000));
  return w.trace().hash_hex();
}
}  // namespace

TEST_CASE("the same seed gives the same trace hash, another seed with random delays does not") {
  CHECK(run_random_traffic(7) == run_random_traffic(7));
  CHECK(run_random_traffic(7) != run_random_traffic(8));
}

TEST_CASE("forked random streams do not depend on their siblings or on draw order") {
  Rng root(42);
  Rng a1 = root.fork("client1");
  Rng b = root.fork("client2");
  for (int i = 0; i < 100; ++i) b.next();
  Rng a2 = root.fork("client1");
  CHECK(a1.next() == a2.next());
  CHECK(root.fork("client1").next() != root.fork("client2").next());
}

TEST_CASE("draws stay in their bounds and cover them") {
  Rng r(3);
  std::int64_t lo = 100, hi = -1;
  for (int i = 0; i < 10'000; ++i) {
    const std::int64_t x = r.between(std::int64_t{0}, std::int64_t{99});
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  CHECK(lo == 0);
  CHECK(hi == 99);
  int heads = 0;
  for (int i = 0; i < 10'000; ++i) heads += r.chance(0.25);
  CHECK(heads > 2300);
  CHECK(heads < 2700);
}

TEST_CASE("durations parse from strings with units, exactly") {
  CHECK(parse_duration("250ms") == Duration::ms(250));
  CHECK(parse_duration("1.5s") == Duration::ms(1500));
  CHECK(parse_duration("2m") == Duration::s(120));
  CHECK(parse_duration("+20s") == Duration::s(20));
  CHECK(parse_duration("-3s") == -Duration::s(3));
  CHECK(parse_duration("10us") == Duration::us(10));
  CHECK_FALSE(parse_duration("10").has_value());
  CHECK_FALSE(parse_duration("10 s").has_value());
  CHECK_FALSE(parse_duration("s").has_value());
  CHECK(format_instant(at_ms(31'002)) == "31.002s");
  CHECK(format_duration(Duration::ms(1500)) == "1.5s");
}

TEST_CASE("a call to a crashed process is refused one network delay later, not left hanging") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");
  w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
  std::optional<Instant> failed_at;
  w.at(at_ms(0), [&] { w.crash(b.id()); });
  a.spawn([](Probe& self, ProcId to, std::optional<Instant>& failed_at) -> Task<void> {
    co_await self.sleep(Duration::ms(10));
    storage::Request req;
    auto r = co_await self.call(to, std::move(req), Duration::zero());  // no timeout at all
    if (!r) failed_at = self.world().now();
  }(a, b.id(), failed_at));
  w.run_until(at_ms(1000));
  REQUIRE(failed_at.has_value());
  CHECK(*failed_at == at_ms(12));  // sent at 10, dropped at 11, refused at 12
}

TEST_CASE("a wakeup fired by one coroutine resumes another of the same process, and a pause holds it") {
  World w(1);
  auto& p = w.add<Probe>("p");
  Wakeup wake(p);
  Instant woke;
  p.spawn([](Probe& self, Wakeup& wake, Instant& woke) -> Task<void> {
    co_await wake.wait();
    woke = self.world().now();
  }(p, wake, woke));
  p.spawn([](Probe& self, Wakeup& wake) -> Task<void> {
    co_await self.sleep(Duration::ms(5));
    wake.fire();
    co_await self.sleep(Duration::ms(1));
  }(p, wake));
  w.at(at_ms(5), [&] { w.pause(p.id(), Duration::ms(20)); });
  w.run_until(at_ms(100));
  CHECK(woke == at_ms(25));
}

TEST_CASE("call timeouts cancelled by their replies leave nothing in the queue") {
  World w(1);
  auto& a = w.add<Probe>("a");
  auto& echo = w.add<Echo>("echo");
  int answered = 0;
  a.spawn([](Probe& self, ProcId to, int& answered) -> Task<void> {
    for (int i = 0; i < 1000; ++i) {
      redis::Request req;
      req.key = "k";
      auto r = co_await self.call(to, std::move(req), Duration::s(10));
      answered += r.has_value();
    }
  }(a, echo.id(), answered));
  w.run_until(at_ms(5'000));  // 1000 round trips of 2 ms: all answered, every timeout still in the future
  CHECK(answered == 1000);
  // One queued event stands for all of a's timers, however many were cancelled.
  CHECK(w.pending_events() <= 2);
}

TEST_CASE("timers due at the same instant all fire, in the order they were set") {
  World w(1);
  auto& p = w.add<Probe>("p");
  std::vector<int> order;
  for (int i = 0; i < 4; ++i)
    p.spawn([](Probe& self, std::vector<int>& order, int i) -> Task<void> {
      co_await self.sleep(Duration::ms(10));
      order.push_back(i);
    }(p, order, i));
  w.run_until(at_ms(10));
  CHECK(order == std::vector<int>{0, 1, 2, 3});
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

TEST_CASE("processes resuming each other forever at one instant end the run as a spent budget") {
  World w(1);
  auto& p = w.add<Probe>("p");
  p.spawn([](Probe& self) -> Task<void> {
    for (;;) co_await self.yield();
  }(p));
  CHECK_FALSE(w.run_until(at_ms(10)));
  CHECK(w.now() == Instant::zero());
}
