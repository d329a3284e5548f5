// diff-redis: the comparer and the shrinker on synthetic mismatches, the
// model fixes it found (each failed before its fix), and a few hundred
// sequences against a real redis-server (loopback, bounded, nothing left).
#include <doctest/doctest.h>

#include <chrono>
#include <sstream>

#include "live/blocking_client.hpp"
#include "live/diff_redis.hpp"
#include "sim/servers/redis/node.hpp"
#include "tests/kernel_support.hpp"

namespace diff_redis_test {

using namespace locksim;
using namespace locksim::live::diff;
using locksim::live::diff::RunOptions;  // not harness/run.hpp's
using locksim::live::diff::Step;        // not reports/report.hpp's
using redis::Op;
using redis::Reply;

namespace {

Step command(redis::Request req, int node = 0) {
  Step s;
  s.req = std::move(req);
  s.node = node;
  return s;
}
Step sleep_for(Duration d) {
  Step s;
  s.kind = Step::Kind::Sleep;
  s.by = d;
  return s;
}
Step clock_step(Duration d, int node = 0) {
  Step s;
  s.kind = Step::Kind::ClockStep;
  s.by = d;
  s.node = node;
  return s;
}

// A deliberately wrong model: PTTL one millisecond short whenever a key has a TTL.
Replies wrong_model(const Sequence& seq) {
  Replies r = run_model(seq, {});
  std::size_t c = 0;
  for (const Step& s : seq) {
    if (s.kind != Step::Kind::Command) continue;
    if (s.req.op == Op::Pttl && r[c].integer > 0) --r[c].integer;
    ++c;
  }
  return r;
}

bool real_redis_available() { return std::system("redis-server --version >/dev/null 2>&1") == 0; }

}  // namespace

TEST_CASE("diff-redis compares replies by kind and value, and errors by their code") {
  CHECK(same(Reply::of(5), Reply::of(5)));
  CHECK_FALSE(same(Reply::of(5), Reply::of(4)));
  CHECK_FALSE(same(Reply::nil(), Reply::of(0)));
  CHECK_FALSE(same(Reply::of(std::string("a")), Reply::of(std::string("b"))));
  CHECK(same(Reply::error("READONLY You can't write"), Reply::error("READONLY You can't write against a replica")));
  CHECK_FALSE(same(Reply::error("READONLY x"), Reply::error("ERR x")));
  CHECK(first_difference({Reply::ok(), Reply::of(1)}, {Reply::ok(), Reply::of(2)}) == 1u);
  CHECK(first_difference({Reply::ok()}, {Reply::ok(), Reply::of(2)}) == 1u);
  CHECK_FALSE(first_difference({Reply::ok()}, {Reply::ok()}).has_value());
}

TEST_CASE("a deliberately wrong model reply is found, and the sequence shrunk to the two commands that show it") {
  const auto fails = [](const Sequence& s) { return first_difference(run_model(s, {}), wrong_model(s)).has_value(); };
  // Found in generated sequences...
  int found = 0;
  for (std::uint64_t i = 0; i < 200 && found < 3; ++i) {
    const Sequence seq = generate(7, i, {});
    if (!fails(seq)) continue;
    ++found;
    const Sequence small = shrink(seq, fails);
    CHECK(fails(small));
    // ...and shrunk to a SET (or script) that gives a TTL and the PTTL that reads it.
    CHECK(small.size() <= 3);
    CHECK(small.back().req.op == Op::Pttl);
    CHECK(small.size() < seq.size());
  }
  CHECK(found == 3);
}

TEST_CASE("the shrinker keeps exactly the steps a failure needs, in order") {
  Sequence seq;
  for (int i = 0; i < 40; ++i) seq.push_back(sleep_for(Duration::ms(i + 1)));
  seq[7] = command({.op = Op::Set, .key = "x", .value = "1"});
  seq[31] = command({.op = Op::Get, .key = "x"});
  int runs = 0;
  const auto fails = [&](const Sequence& s) {
    ++runs;
    bool set = false;
    for (const Step& st : s) {
      if (st.kind != Step::Kind::Command) continue;
      if (st.req.op == Op::Set) set = true;
      if (st.req.op == Op::Get && set) return true;
    }
    return false;
  };
  const Sequence small = shrink(seq, fails);
  REQUIRE(small.size() == 2);
  CHECK(small[0].req.op == Op::Set);
  CHECK(small[1].req.op == Op::Get);
  CHECK(runs < 200);
}

TEST_CASE("a mismatch is printed as a reproducible case with a redis-cli transcript") {
  const Sequence seq{command({.op = Op::Set, .key = "k1", .value = "a", .px = Duration::ms(1500)}),
                     clock_step(Duration::ms(700)), command({.op = Op::Pttl, .key = "k1"})};
  const Replies model = run_model(seq, {});
  REQUIRE(model.size() == 2);
  CHECK(model[1].integer == 800);
  std::ostringstream out;
  print_case(out, seq, model, wrong_model(seq), {6390});
  const std::string text = out.str();
  CHECK(text.find("<-- differ") != std::string::npos);
  CHECK(text.find("redis-cli -p 6390 SET k1 a PX 1500") != std::string::npos);
  CHECK(text.find("redis-cli -p 6390 PTTL k1") != std::string::npos);
  CHECK(text.find("r1's wall clock +700ms") != std::string::npos);
}

TEST_CASE("the same seed and index give the same sequence") {
  for (std::uint64_t i = 0; i < 20; ++i) {
    const Sequence a = generate(3, i, {.replica = true}), b = generate(3, i, {.replica = true});
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) CHECK(describe(a[k]) == describe(b[k]));
  }
}

TEST_CASE("diff-redis's options without --replica are one node: every step is r1's") {
  for (std::uint64_t i = 0; i < 50; ++i)
    for (const Step& s : generate(3, i, {})) CHECK(s.node == 0);
}

// --- Model fixes diff-redis found -------------------------------------------

TEST_CASE("SET ... PXAT expires the key at that absolute wall-clock millisecond (t_string.c:161-186)") {
  World w(1);
  auto& redis = w.add<RedisNode>("r1", ClockSpec{.offset = Duration::s(1000)}, RedisConfig{});
  // The node's wall clock reads 1000 s; expire at 1000.5 s.
  const Instant at = Instant::from_ns(Duration::ms(1'000'500).count_ns());
  CHECK(redis.execute({.op = Op::Set, .key = "k", .value = "v", .pxat = at}, kNoProc).is_ok());
  CHECK(redis.execute({.op = Op::Pttl, .key = "k"}, kNoProc).integer == 500);
  w.run_until(locksim::testing::at_ms(501));
  CHECK(redis.execute({.op = Op::Get, .key = "k"}, kNoProc).is_nil());
}

TEST_CASE("a script on a replica runs until its first write: only a script that would write gets READONLY") {
  // redis 7.0.15 script.c:134-160 (EVAL without flags runs on a replica) and 349-381 (its write fails).
  const Sequence seq{
      command({.op = Op::Set, .key = "k1", .value = "a", .px = Duration::s(10)}),
      command({.op = Op::Set, .key = "rl", .value = "a", .px = Duration::s(10)}),
      command({.op = Op::CompareAndDelete, .key = "k1", .value = "b"}, 1),             // not ours: 0
      command({.op = Op::CompareAndDelete, .key = "k1", .value = "a"}, 1),             // ours: DEL fails
      command({.op = Op::CompareAndPexpire, .key = "k1", .value = "b", .px = Duration::s(5)}, 1),
      command({.op = Op::RedissonTryLock, .key = "rl", .value = "b", .px = Duration::s(5)}, 1),  // its PTTL
      command({.op = Op::RedissonUnlock, .key = "rl", .value = "b"}, 1),               // not ours: nil
      command({.op = Op::AcquireWithToken, .key = "k2", .value = "a", .px = Duration::s(5), .token_key = "t"}, 1),
      command({.op = Op::Get, .key = "k1"}, 1),
  };
  const Replies r = run_model(seq, {.replica = true});
  REQUIRE(r.size() == 9);
  CHECK(r[2].kind == Reply::Kind::Int);
  CHECK(r[2].integer == 0);
  CHECK(r[3].kind == Reply::Kind::Err);
  CHECK(r[3].str.rfind("READONLY", 0) == 0);
  CHECK(r[4].integer == 0);
  CHECK(r[5].kind == Reply::Kind::Int);
  CHECK(r[5].integer == 10'000);
  CHECK(r[6].is_nil());
  CHECK(r[7].kind == Reply::Kind::Err);
  CHECK(r[8].str == "a");  // nothing was deleted
}

// --- Against a real redis-server --------------------------------------------

TEST_CASE("diff-redis: 300 sequences on one node and 100 with a replica agree with redis-server, and nothing is left") {
  if (!real_redis_available()) {
    MESSAGE("redis-server not installed: skipped");
    return;
  }
  std::uint16_t port = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const bool replica : {false, true}) {
    RunOptions o;
    o.sequences = replica ? 100 : 300;
    o.seed = 11;
    o.options.replica = replica;
    std::ostringstream out;
    const Summary sum = run(o, out);
    INFO(out.str());
    CHECK(sum.sequences == o.sequences);
    CHECK(sum.commands > o.sequences * 5);
    CHECK(sum.mismatches == 0);
  }
  {
    RealRedis real({});
    port = real.port(0);
    const Replies r = real.run({command({.op = Op::Set, .key = "k", .value = "v", .px = Duration::ms(10)}),
                                sleep_for(Duration::ms(11)), command({.op = Op::Get, .key = "k"})});
    REQUIRE(r.size() == 2);
    CHECK(r[0].is_ok());
    CHECK(r[1].is_nil());  // the frozen clock was stepped past the TTL: no real sleep
  }
  CHECK_THROWS_AS(live::BlockingClient(port, Duration::s(1)), live::Error);  // the server is gone
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(120));
}

}  // namespace diff_redis_test
