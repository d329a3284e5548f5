// Sentinel and the returning old master, pinned to redis 7.0.15's
// sentinel.c and replication.c (sim/servers/redis/sentinel.hpp, sim/servers/redis/node.hpp).
#include <doctest/doctest.h>

#include "harness/run.hpp"
#include "sim/servers/redis/node.hpp"
#include "sim/servers/redis/sentinel.hpp"
#include "tests/support.hpp"

namespace sentinel_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

constexpr Instant at_ms(std::int64_t ms) { return Instant::zero() + Duration::ms(ms); }

// One master, one replica, a lock holder and a late second client; the
// [sentinel] table, extra nodes and the faults are the test's.
std::string scenario(const std::string& sentinel, const std::string& faults, const std::string& duration = "60s",
                     const std::string& more_nodes = "") {
  return R"(title = "t"
about = "a"
source = "s"
duration = ")" + duration + R"("
[lock]
algorithm = "redis-single"
ttl = "60s"
[network]
delay = "1ms"
[[node]]
name = "redis1"
[[node]]
name = "redis2"
replica_of = "redis1"
replication_lag = "10ms"
)" + more_nodes + "[sentinel]\n" + sentinel + R"(
[[client]]
name = "client1"
work = "30s"
[[client]]
name = "client2"
start = "7s"
work = "1s"
)" + faults;
}

const char* kCrashAt5ms = R"([[fault]]
at = "5ms"
kind = "crash"
target = "redis1"
)";

RunResult run_text(const std::string& text) { return run_scenario(parse_scenario(text, "t.toml")); }

void replace_first(std::string& text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
}

std::vector<const TraceEvent*> notes(const RunResult& r, const std::string& process, const std::string& what) {
  std::vector<const TraceEvent*> out;
  for (const TraceEvent* e : events_of(r, Ev::Fault, process))
    if (e->detail.find(what) != std::string::npos) out.push_back(e);
  return out;
}

double seconds(Instant t) { return static_cast<double>(t.ns()) / 1e9; }

// Asks a sentinel for a group's master every 10 ms and remembers when the
// answer first names `wanted`.
class Asker : public Process {
 public:
  Asker(World& w, ProcId sentinel, std::string group, std::string wanted)
      : Process(w, "asker", ProcessRole::Client, ClockSpec{}),
        sentinel_(sentinel), group_(std::move(group)), wanted_(std::move(wanted)) {
    spawn(loop());
  }
  std::optional<Instant> seen;

 private:
  Task<void> loop() {
    for (;;) {
      redis::Request ask;
      ask.op = redis::Op::GetMasterAddr;
      ask.key = group_;
      const auto answer = co_await call(sentinel_, std::move(ask), Duration::s(1));
      const auto* r = answer ? std::get_if<redis::Reply>(&*answer) : nullptr;
      if (!seen && r && r->str == wanted_) seen = world().now();
      co_await sleep(Duration::ms(10));
    }
  }
  ProcId sentinel_;
  std::string group_, wanted_;
};

}  // namespace

TEST_CASE("three sentinels with quorum 2 agree that a crashed master is down and fail over about 6 s later") {
  const RunResult r = run_text(scenario("sentinels = 3\nquorum = 2\ndown_after = \"5s\"\n", kCrashAt5ms));
  const auto promoted = events_of(r, Ev::Promoted, "redis2");
  REQUIRE(promoted.size() == 1);
  // SDOWN: the first PING after the crash (within a tick) plus 5 s; then
  // ODOWN, a vote, REPLICAOF NO ONE a tick or two later.
  CHECK(seconds(promoted[0]->at) > 5.0);
  CHECK(seconds(promoted[0]->at) < 5.6);
  for (const char* s : {"sentinel1", "sentinel2", "sentinel3"}) CHECK(notes(r, s, "+sdown master redis1").size() == 1);
  std::size_t leaders = 0;
  for (const char* s : {"sentinel1", "sentinel2", "sentinel3"}) leaders += notes(r, s, "+elected-leader").size();
  CHECK(leaders == 1);
  // The leader names the new master after the replica's next INFO: within a second.
  std::size_t confirmed = 0;
  for (const char* s : {"sentinel1", "sentinel2", "sentinel3"})
    for (const TraceEvent* e : notes(r, s, "+promoted-slave redis2")) {
      ++confirmed;
      CHECK(e->at > promoted[0]->at);
      CHECK(e->at - promoted[0]->at < Duration::ms(1'100));
    }
  CHECK(confirmed == 1);
  // The others learn the new master from the leader's hello.
  std::size_t switched = 0;
  for (const char* s : {"sentinel1", "sentinel2", "sentinel3"}) switched += notes(r, s, "+switch-master").size();
  CHECK(switched == 3);
  CHECK(r.verdict.count(ViolationKind::Overlap) == 1);  // R6's story, with three sentinels
}

TEST_CASE("a sentinel gives one vote per epoch, to the first that asks: a second candidate hears the first's name") {
  // sentinelVoteLeader (sentinel.c:4635-4663): the vote changes only for a
  // later epoch than the one it was given in.
  struct Voter : Process {
    Voter(World& w, ProcId sentinel) : Process(w, "voter", ProcessRole::Client, ClockSpec{}), sentinel_(sentinel) {
      spawn(ask_all());
    }
    std::vector<std::string> answers;
    Task<void> ask_all() {
      for (const char* ask : {"5 candidate-a", "5 candidate-b", "6 candidate-b"}) {
        redis::Request r;
        r.op = redis::Op::SentinelIsMasterDown;
        r.key = "redis1";
        r.value = ask;
        const auto answer = co_await call(sentinel_, std::move(r), Duration::s(1));
        const auto* reply = answer ? std::get_if<redis::Reply>(&*answer) : nullptr;
        answers.push_back(reply ? reply->str : "(none)");
      }
    }
    ProcId sentinel_;
  };
  World w(1);
  auto& redis1 = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  auto& redis2 = w.add<RedisNode>("redis2", ClockSpec{}, RedisConfig{});
  redis1.add_replica(redis2.id(), DurationRange::fixed(Duration::ms(10)), true);
  redis2.replicate_from(redis1.id());
  auto& sentinel = w.add<Sentinel>("sentinel", ClockSpec{}, SentinelSettings{});
  sentinel.monitor({"redis1", redis1.id(), {redis2.id()}}, {sentinel.id()});
  auto& voter = w.add<Voter>(sentinel.id());
  w.run_until(at_ms(1'000));
  REQUIRE(voter.answers.size() == 3);
  CHECK(voter.answers[0] == "0 candidate-a 5");
  CHECK(voter.answers[1] == "0 candidate-a 5");  // the epoch's vote is taken
  CHECK(voter.answers[2] == "0 candidate-b 6");  // a later epoch, a new vote
}

TEST_CASE("a sentinel names the promoted replica only once the replica's INFO reports role master") {
  World w(1);
  auto& redis1 = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  auto& redis2 = w.add<RedisNode>("redis2", ClockSpec{}, RedisConfig{});
  redis1.add_replica(redis2.id(), DurationRange::fixed(Duration::ms(10)), true);
  redis2.replicate_from(redis1.id());
  SentinelSettings settings;
  settings.down_after = Duration::s(5);
  auto& sentinel = w.add<Sentinel>("sentinel", ClockSpec{}, settings);
  sentinel.monitor({"redis1", redis1.id(), {redis2.id()}}, {sentinel.id()});
  auto& asker = w.add<Asker>(sentinel.id(), "redis1", "redis2");
  w.at(at_ms(5), [&] { w.crash(redis1.id()); });
  w.run_until(at_ms(10'000));
  Instant promoted = Instant::never();
  for (const TraceEvent& e : w.trace().events())
    if (e.kind == Ev::Promoted && e.process == redis2.id()) promoted = e.at;
  REQUIRE(promoted != Instant::never());
  REQUIRE(asker.seen);
  CHECK(*asker.seen > promoted);
  CHECK(*asker.seen - promoted < Duration::ms(1'100));  // the next INFO: every second during a failover
}

TEST_CASE("a leader needs a majority of the sentinels: one left alone with quorum 1 never fails over") {
  const std::string faults = std::string(kCrashAt5ms) + R"([[fault]]
at = "0s"
kind = "crash"
target = "sentinel2"
[[fault]]
at = "0s"
kind = "crash"
target = "sentinel3"
)";
  const RunResult r = run_text(scenario("sentinels = 3\nquorum = 1\ndown_after = \"5s\"\n", faults, "40s"));
  CHECK(notes(r, "sentinel1", "+odown master redis1").size() == 1);  // the quorum is met
  CHECK(notes(r, "sentinel1", "-failover-abort-not-elected").size() >= 1);  // 1 vote of 3 is no majority
  CHECK(events_of(r, Ev::Promoted).empty());
  // And it does not try again before 2 x failover_timeout (360 s).
  CHECK(notes(r, "sentinel1", "-failover-abort-not-elected").size() == 1);
}

TEST_CASE("a sentinel that was not elected tries again only 2 x failover_timeout after its last try") {
  // sentinelStartFailoverIfNeeded (sentinel.c:4858-4886): with failover_timeout
  // 10 s, the tries, and so their aborts, are 20 s (+ up to 1 s of desync)
  // apart, not 10 s.
  const std::string faults = std::string(kCrashAt5ms) + R"([[fault]]
at = "0s"
kind = "crash"
target = "sentinel2"
[[fault]]
at = "0s"
kind = "crash"
target = "sentinel3"
)";
  const RunResult r =
      run_text(scenario("sentinels = 3\nquorum = 1\ndown_after = \"5s\"\nfailover_timeout = \"10s\"\n", faults, "60s"));
  const auto tries = notes(r, "sentinel1", "-failover-abort-not-elected");
  REQUIRE(tries.size() >= 2);
  for (std::size_t i = 1; i < tries.size(); ++i) {
    CHECK(tries[i]->at - tries[i - 1]->at >= Duration::s(20));
    CHECK(tries[i]->at - tries[i - 1]->at < Duration::s(22));
  }
}

namespace {

// The sentinel's wall clock steps by `by` at 1 s; redis1 crashes at 2 s.
std::string step_then_crash(const std::string& by) {
  return "[[fault]]\nat = \"1s\"\nkind = \"clock-jump\"\ntarget = \"sentinel\"\nby = \"" + by +
         "\"\n[[fault]]\nat = \"2s\"\nkind = \"crash\"\ntarget = \"redis1\"\n";
}

}  // namespace

TEST_CASE("a sentinel whose wall clock steps enters TILT and takes no action for 30 s") {
  const RunResult r = run_text(scenario("down_after = \"5s\"\n", step_then_crash("10s")));
  CHECK(notes(r, "sentinel", "+tilt").size() == 1);
  const auto promoted = events_of(r, Ev::Promoted, "redis2");
  REQUIRE(promoted.size() == 1);
  // Without TILT it would fail over at about 7 s; in TILT it only watches until about 31 s.
  CHECK(seconds(promoted[0]->at) > 31.0);
  CHECK(seconds(promoted[0]->at) < 32.0);
}

TEST_CASE("a sentinel whose wall clock steps back by any amount enters TILT too") {
  // sentinel.c sentinelCheckTiltCondition: delta < 0 || delta > the trigger;
  // a step back of 1 s, under the 2 s trigger, is one.
  const RunResult r = run_text(scenario("down_after = \"5s\"\n", step_then_crash("-1s")));
  CHECK(notes(r, "sentinel", "+tilt").size() == 1);
  const auto promoted = events_of(r, Ev::Promoted, "redis2");
  REQUIRE(promoted.size() == 1);
  CHECK(seconds(promoted[0]->at) > 31.0);
}

TEST_CASE("the sentinel promotes the replica with the lowest priority, then the one that has more of the stream") {
  const std::string redis3 = R"([[node]]
name = "redis3"
replica_of = "redis1"
)";
  // redis2 is listed first, but behind: its lag keeps client1's lock from it.
  // client1's SET reaches redis3 in 1 ms; redis1 crashes at 50 ms.
  std::string text = scenario("down_after = \"5s\"\n", kCrashAt5ms, "60s", redis3);
  replace_first(text, "replication_lag = \"10ms\"", "replication_lag = \"10s\"");
  replace_first(text, "at = \"5ms\"", "at = \"50ms\"");
  RunResult r = run_text(text);
  CHECK(events_of(r, Ev::Promoted, "redis3").size() == 1);
  CHECK(events_of(r, Ev::Promoted, "redis2").empty());
  CHECK(r.verdict.empty());  // redis3 had the lock: client2 waits for it
  // A lower replica_priority wins over a larger offset; priority 0 is never promoted.
  std::string by_priority = text;
  replace_first(by_priority, "replication_lag = \"10s\"", "replication_lag = \"10s\"\nreplica_priority = 50");
  r = run_text(by_priority);
  CHECK(events_of(r, Ev::Promoted, "redis2").size() == 1);
  std::string never = text;
  replace_first(never, "name = \"redis3\"", "name = \"redis3\"\nreplica_priority = 0");
  r = run_text(never);
  CHECK(events_of(r, Ev::Promoted, "redis2").size() == 1);
}

TEST_CASE("a promoted replica kills its client connections: a request on its way then is refused") {
  World w(1);
  NetworkConfig slow;
  slow.delay = DurationRange::fixed(Duration::ms(10));
  w.network().configure(slow);
  auto& master = w.add<RedisNode>("m", ClockSpec{}, RedisConfig{});
  auto& replica = w.add<RedisNode>("r", ClockSpec{}, RedisConfig{});
  master.add_replica(replica.id(), DurationRange::fixed(Duration::ms(1)), true);
  replica.replicate_from(master.id());
  struct Reader : Process {
    explicit Reader(World& w) : Process(w, "reader", ProcessRole::Client, ClockSpec{}) {}
    std::vector<std::optional<Payload>> answers;
    Task<void> get(ProcId node, Duration after) {
      co_await sleep(after);
      redis::Request get = request;
      answers.push_back(co_await call(node, std::move(get), Duration::s(1)));
    }
    const redis::Request request{.op = redis::Op::Get, .key = "k"};
  };
  auto& reader = w.add<Reader>();
  reader.spawn(reader.get(replica.id(), Duration::zero()));   // arrives at 10 ms, after the kill
  reader.spawn(reader.get(replica.id(), Duration::ms(6)));     // sent after the kill: a new connection
  w.at(at_ms(5), [&] { replica.execute({.op = redis::Op::ReplicaOfNoOne}, kNoProc); });
  w.run_until(at_ms(100));
  REQUIRE(reader.answers.size() == 2);
  CHECK_FALSE(reader.answers[0].has_value());  // reset: the caller sees the connection close
  CHECK(reader.answers[1].has_value());
}

TEST_CASE("a returning old master takes writes for about 10 s, then the sentinel makes it a replica") {
  const std::string faults = std::string(kCrashAt5ms) + R"([[fault]]
at = "12s"
kind = "restart"
target = "redis1"
)";
  const RunResult r = run_text(scenario("down_after = \"5s\"\n", faults));
  const auto converted = notes(r, "sentinel", "+convert-to-slave redis1");
  REQUIRE(converted.size() == 1);
  // It reconnects within a second and reports role:master; the 8 s rules
  // pass at its next INFO, 10 s later (sentinel.c:2704-2719, :84).
  CHECK(seconds(converted[0]->at) > 12.0 + 10.0);
  CHECK(seconds(converted[0]->at) < 12.0 + 11.2);
  bool demoted = false, answered_as_replica = false;
  for (const TraceEvent* e : events_of(r, Ev::Command, "redis1")) {
    demoted |= e->detail.find("demoted: now a replica of redis2") != std::string::npos;
    // client1's release at 30 s: the replica runs the script, finds no such
    // value (it synced redis2's empty keyspace) and answers 0 without writing
    // (redis 7.0.15 script.c:134-160, 349-381); only a write would be READONLY.
    answered_as_replica |= e->at > converted[0]->at && e->detail.find("compare-and-delete") != std::string::npos &&
                           e->detail.find("-> (integer) 0") != std::string::npos;
  }
  CHECK(demoted);
  CHECK(answered_as_replica);
}

TEST_CASE("a demoted old master is a replica: when the new master crashes it is promoted in turn") {
  const std::string faults = std::string(kCrashAt5ms) + R"([[fault]]
at = "12s"
kind = "restart"
target = "redis1"
[[fault]]
at = "40s"
kind = "crash"
target = "redis2"
)";
  const RunResult r = run_text(scenario("down_after = \"5s\"\n", faults, "80s"));
  const auto first = events_of(r, Ev::Promoted, "redis2");
  const auto second = events_of(r, Ev::Promoted, "redis1");
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 1);
  CHECK(seconds(second[0]->at) > 45.0);
  CHECK(seconds(second[0]->at) < 46.0);
}

TEST_CASE("a demoted old master resyncs in full only if it took writes its successor never saw") {
  // redis1 is cut off from the sentinel and its replica from 1 s to 20 s;
  // the clients still reach it. The sentinel fails over to redis2, which
  // already had client1's lock; redis1 is converted about 10 s after the heal.
  const std::string faults = R"([[fault]]
at = "1s"
kind = "partition"
groups = [["redis1", "client1", "client2", "storage"], ["redis2", "sentinel"]]
duration = "19s"
)";
  auto resync = [](const RunResult& r) {
    std::string how;
    for (const TraceEvent* e : events_of(r, Ev::Command, "redis1"))
      if (e->detail.find("resync") != std::string::npos) how = e->detail;
    return how;
  };
  auto keys_of_redis1 = [](const RunResult& r) {
    return dynamic_cast<const RedisNode&>(r.world->process(*r.world->find("redis1"))).keyspace();
  };
  // Nothing written on redis1 after 1 s (client1 releases at 35 s, after
  // the conversion; client2 comes at 39 s): its history is a prefix of
  // redis2's, so a partial resync, and it keeps client1's lock.
  std::string text = scenario("down_after = \"5s\"\n", faults, "40s");
  replace_first(text, "work = \"30s\"", "work = \"35s\"");
  replace_first(text, "start = \"7s\"", "start = \"39s\"");
  RunResult r = run_text(text);
  CHECK(resync(r).rfind("partial resync from redis2", 0) == 0);
  CHECK(keys_of_redis1(r).count("lock") == 1);
  // client1 releases at 3 s, on redis1 alone: a write redis2 never saw. A
  // full resync: redis1 flushes and loads redis2's data, where the released
  // lock is still held.
  replace_first(text, "work = \"35s\"", "work = \"3s\"");
  r = run_text(text);
  CHECK(resync(r).rfind("full resync from redis2: flushing", 0) == 0);
  CHECK(keys_of_redis1(r).count("lock") == 1);
}

TEST_CASE("one sentinel that alone sees the master down is no quorum of 2: no ODOWN, no failover") {
  // sentinel1 is cut off from redis1 only; sentinel2 and sentinel3 still
  // reach it and answer is-master-down-by-addr with "not down". ODOWN needs
  // quorum sentinels (this one included) to say down (sentinel.c
  // sentinelCheckObjectivelyDown, :4497-4530): 1 of 2 is not enough.
  const std::string faults = R"([[fault]]
at = "1s"
kind = "partition"
groups = [["sentinel1"], ["redis1"]]
duration = "30s"
)";
  const RunResult r = run_text(scenario("sentinels = 3\nquorum = 2\ndown_after = \"5s\"\n", faults, "40s"));
  CHECK(notes(r, "sentinel1", "+sdown master redis1").size() == 1);  // it does see the master down
  for (const char* s : {"sentinel1", "sentinel2", "sentinel3"}) {
    CHECK(notes(r, s, "+odown").empty());
    CHECK(notes(r, s, "+try-failover").empty());
  }
  CHECK(events_of(r, Ev::Promoted).empty());
}

}  // namespace sentinel_test
