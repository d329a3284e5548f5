// The RESP codec (live/resp.hpp): every simulator op sent to a real
// redis-server comes back as the reply the simulator's RedisNode gives for
// the same request; and the framing the proxy relies on.
#include <doctest/doctest.h>

#include <cstdlib>

#include "live/blocking_client.hpp"
#include "live/resp.hpp"
#include "live/servers.hpp"
#include "sim/servers/redis/node.hpp"
#include "sim/world.hpp"
#include "tests/live_support.hpp"

namespace live_resp_test {

using namespace locksim;
using namespace locksim::live;
namespace testing = locksim::live::testing;
using redis::Op;
using redis::Reply;
using redis::Request;

namespace {

struct Step {
  Request req;
  bool timed = false;  // the reply is a remaining TTL: the live server's has run down a little
};

Request make(Op op, std::string key = {}, std::string value = {}, Duration px = Duration::zero(),
             std::string token_key = {}, bool nx = false) {
  Request r;
  r.op = op;
  r.key = std::move(key);
  r.value = std::move(value);
  r.px = px;
  r.token_key = std::move(token_key);
  r.nx = nx;
  return r;
}

// The same reply, but for a TTL that has had real time to run down.
void check_same(const Reply& live, const Reply& sim, bool timed) {
  CHECK(live.kind == sim.kind);
  if (timed && sim.integer > 0) {
    CHECK(live.integer <= sim.integer);
    CHECK(live.integer >= sim.integer - 2'000);
  } else if (live.kind == Reply::Kind::Err) {
    CHECK(!live.str.empty());  // the messages differ where the simulator has no such command
  } else {
    CHECK(live.integer == sim.integer);
    CHECK(live.str == sim.str);
  }
}

}  // namespace

TEST_CASE("every redis op gives on a real redis-server the reply the simulator gives") {
  const Duration ttl = Duration::s(30);
  const std::vector<Step> steps = {
      {make(Op::Set, "lock", "v1", ttl, {}, true)},
      {make(Op::Set, "lock", "v2", ttl, {}, true)},
      {make(Op::Get, "lock")},
      {make(Op::Get, "missing")},
      {make(Op::Exists, "lock")},
      {make(Op::Pttl, "lock"), true},
      {make(Op::Pttl, "missing")},
      {make(Op::Set, "plain", "x")},
      {make(Op::Pttl, "plain")},
      {make(Op::SetNx, "sn", "a")},
      {make(Op::SetNx, "sn", "b")},
      {make(Op::Incr, "counter")},
      {make(Op::Incr, "counter")},
      {make(Op::Incr, "plain")},  // not an integer: an error in both
      {make(Op::CompareAndDelete, "lock", "v2")},
      {make(Op::CompareAndPexpire, "lock", "v2", Duration::s(60))},
      {make(Op::CompareAndPexpire, "lock", "v1", Duration::s(60))},
      {make(Op::Pttl, "lock"), true},
      {make(Op::CompareAndDelete, "lock", "v1")},
      {make(Op::Exists, "lock")},
      {make(Op::Del, "lock")},
      {make(Op::Del, "plain")},
      {make(Op::AcquireWithToken, "fenced", "t1", ttl, "tokens")},
      {make(Op::AcquireWithToken, "fenced", "t2", ttl, "tokens")},
      {make(Op::Del, "fenced")},
      {make(Op::AcquireWithToken, "fenced", "t2", ttl, "tokens")},
      {make(Op::RedissonTryLock, "rlock", "c1", ttl)},
      {make(Op::RedissonTryLock, "rlock", "c2", ttl), true},  // held: its PTTL
      {make(Op::RedissonTryLock, "rlock", "c1", ttl)},        // the holder again: renewed
      // The watchdog's renewal of Redisson's hash (it was a GET: WRONGTYPE, live only).
      {make(Op::CompareAndPexpire, "rlock", "c2", Duration::s(60))},
      {make(Op::CompareAndPexpire, "rlock", "c1", Duration::s(60))},
      {make(Op::Pttl, "rlock"), true},
      {make(Op::RedissonUnlock, "rlock", "c2")},
      {make(Op::RedissonUnlock, "rlock", "c1")},
      {make(Op::RedissonUnlock, "rlock", "c1")},
      {make(Op::RedissonTryLockFenced, "flock", "c1", ttl, "ftokens")},
      {make(Op::RedissonTryLockFenced, "flock", "c2", ttl, "ftokens"), true},
      {make(Op::RedissonTryLockFenced, "flock", "c1", ttl, "ftokens")},  // the holder again: same token, 2 holds
      {make(Op::RedissonUnlock, "flock", "c1")},                          // 1 hold left: 0
      {make(Op::RedissonUnlock, "flock", "c1")},                          // the last: deleted, 1
      {make(Op::RedissonTryLockFenced, "flock", "c2", ttl, "ftokens")},
      {make(Op::RedissonTryLock, "nolease", "c1")},  // no lease: no expiry
      {make(Op::Pttl, "nolease")},
      {make(Op::Ping)},
      {make(Op::ReplicaOfNoOne)},
      {make(Op::GetMasterAddr, "mymaster")},  // a server is no sentinel: an error in both
  };
  World w(1);
  auto& sim = w.add<RedisNode>("redis1", ClockSpec{}, RedisConfig{});
  Supervisor sup;
  BlockingClient live(sup.start_server("redis1"), Duration::s(5));
  std::vector<bool> covered(static_cast<std::size_t>(Op::GetMasterAddr) + 1);
  for (const Step& s : steps) {
    const Reply expected = sim.execute(s.req, kNoProc);
    const Reply got = live.request(s.req, Duration::s(5));
    INFO(redis::describe(s.req) << ": simulator " << redis::describe(expected) << ", redis-server "
                                << redis::describe(got));
    check_same(got, expected, s.timed);
    covered[static_cast<std::size_t>(s.req.op)] = true;
  }
  // The two left change the connection or need a second node: each has a test of its own below.
  for (Op op : {Op::Subscribe, Op::ReplicaOf}) covered[static_cast<std::size_t>(op)] = true;
  for (std::size_t i = 0; i < covered.size(); ++i) CHECK_MESSAGE(covered[i], resp::name_of(static_cast<Op>(i)));
}

TEST_CASE("a Redisson unlock publishes unlocked to subscribers of the lock's channel") {
  Supervisor sup;
  const std::uint16_t port = sup.start_server("redis1");
  BlockingClient waiter(port, Duration::s(5));
  BlockingClient holder(port, Duration::s(5));
  const Request subscribe = make(Op::Subscribe, "rlock");
  CHECK(waiter.request(subscribe, Duration::s(5)).is_ok());
  CHECK(holder.request(make(Op::RedissonTryLock, "rlock", "c1", Duration::s(30)), Duration::s(5)).is_nil());
  CHECK(holder.request(make(Op::RedissonUnlock, "rlock", "c1"), Duration::s(5)).integer == 1);
  const std::optional<resp::Value> pushed = waiter.receive(Duration::s(5));
  REQUIRE(pushed);
  const std::optional<Reply> push = resp::push_of(*pushed);
  REQUIRE(push);
  CHECK(push->kind == Reply::Kind::Str);
  CHECK(push->str == "unlocked rlock");  // as the simulator pushes it
  CHECK(!resp::push_of(resp::Value{resp::Value::Type::Status, 0, "OK", {}}));
  // SUBSCRIBE's own answer is a three-element array too, ["subscribe", channel, count]: no push.
  using T = resp::Value::Type;
  CHECK(!resp::push_of(resp::Value{T::Array, 0, {}, {{T::Bulk, 0, "subscribe", {}}, {T::Bulk, 0, "rlock", {}}, {T::Int, 1, {}, {}}}}));
}

TEST_CASE("REPLICAOF by node name makes a replica and REPLICAOF NO ONE promotes it") {
  Supervisor sup;
  const std::uint16_t a = sup.start_server("a");
  const std::uint16_t b = sup.start_server("b");
  const resp::Names names = sup.names();
  BlockingClient to_b(b, Duration::s(5));
  CHECK(call(a, {"SET", "k", "v"}).str == "OK");
  CHECK(to_b.request(make(Op::ReplicaOf, "a"), Duration::s(5), names).is_ok());
  CHECK(testing::eventually([&] { return call(b, {"GET", "k"}).str == "v"; }, Duration::s(10)));
  CHECK(to_b.request(make(Op::Set, "x", "y"), Duration::s(5)).kind == Reply::Kind::Err);  // READONLY
  CHECK(to_b.request(make(Op::ReplicaOfNoOne), Duration::s(5)).is_ok());
  CHECK(to_b.request(make(Op::Set, "x", "y"), Duration::s(5)).is_ok());
  CHECK_THROWS_AS(resp::encode(make(Op::ReplicaOf, "nobody"), names), Error);
}

TEST_CASE("a sentinel names the master it monitors") {
  Supervisor sup;
  sup.start_server("redis1");
  BlockingClient sentinel(sup.start_sentinel("s", {.master = "redis1"}), Duration::s(5));
  const Request ask = make(Op::GetMasterAddr, "mymaster");
  CHECK(sentinel.request(ask, Duration::s(5), sup.names()).str == "redis1");  // as the simulator's sentinel answers
  CHECK(sentinel.request(ask, Duration::s(5)).str == "127.0.0.1:" + std::to_string(sup.port("redis1")));
  CHECK(sentinel.request(make(Op::GetMasterAddr, "nosuchgroup"), Duration::s(5)).is_nil());
}

TEST_CASE("a no_reply request gets no reply and the next reply is the next request's") {
  Supervisor sup;
  BlockingClient c(sup.start_server("redis1"), Duration::s(5));
  Request set = make(Op::Set, "k", "v");
  set.no_reply = true;
  CHECK(resp::replies_expected(set) == 0);
  CHECK(resp::commands_of(set).front() == std::vector<std::string>{"CLIENT", "REPLY", "SKIP"});
  c.request(set, Duration::s(5));
  CHECK(c.request(make(Op::Get, "k"), Duration::s(5)).str == "v");
}

TEST_CASE("frame_length finds where each RESP message ends") {
  using resp::frame_length;
  CHECK(frame_length("+OK\r\n") == 5u);
  CHECK(frame_length("+OK\r\n:1\r\n") == 5u);
  CHECK(frame_length("+OK\r") == std::nullopt);
  CHECK(frame_length("$-1\r\n") == 5u);
  CHECK(frame_length("$3\r\nabc\r\n") == 9u);
  CHECK(frame_length("$3\r\nab") == std::nullopt);
  CHECK(frame_length("$4\r\na\r\nb\r\n") == 10u);  // a bulk string may hold CRLF
  CHECK(frame_length("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n") == 20u);
  CHECK(frame_length("*2\r\n$3\r\nGET\r\n$1\r\n") == std::nullopt);
  CHECK(frame_length("*-1\r\n") == 5u);
  CHECK(frame_length("*1\r\n*1\r\n:5\r\n") == 12u);
  CHECK(frame_length("%1\r\n+a\r\n:1\r\n") == 12u);  // RESP3 map: a key and a value
  CHECK(frame_length("PING\r\n") == 6u);            // inline
  CHECK(frame_length("") == std::nullopt);
  CHECK_THROWS_AS(frame_length("$x\r\n"), Error);
  CHECK_THROWS_AS(frame_length("$3\r\nabcde"), Error);
  // What the encoder makes is one message.
  const std::string bytes = resp::encode(make(Op::AcquireWithToken, "lock", "v", Duration::s(30), "tokens"));
  CHECK(frame_length(bytes) == bytes.size());
}

TEST_CASE("the decoder takes replies split anywhere and several in one read") {
  const std::string stream = "+OK\r\n$5\r\nhello\r\n*2\r\n$7\r\n1.2.3.4\r\n$4\r\n6379\r\n:-2\r\n$-1\r\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    resp::Decoder d;
    std::vector<resp::Value> got;
    d.feed(std::string_view(stream).substr(0, cut));
    while (auto v = d.next()) got.push_back(*v);
    d.feed(std::string_view(stream).substr(cut));
    while (auto v = d.next()) got.push_back(*v);
    REQUIRE(got.size() == 5);
    CHECK(got[0].type == resp::Value::Type::Status);
    CHECK(got[1].str == "hello");
    CHECK(got[2].elements.size() == 2);
    CHECK(got[3].integer == -2);
    CHECK(got[4].type == resp::Value::Type::Nil);
  }
  resp::Decoder bad;
  bad.feed("?what\r\n");
  CHECK_THROWS_AS(bad.next(), Error);
}

TEST_CASE("a reply of a shape the op cannot have is an error not a guess") {
  const resp::Value text{resp::Value::Type::Bulk, 0, "x", {}};
  CHECK_THROWS_AS(resp::decode(make(Op::Incr, "k"), text), Error);
  const resp::Value err{resp::Value::Type::Error, 0, "WRONGTYPE Operation against a key holding the wrong kind of value", {}};
  CHECK(resp::decode(make(Op::Get, "k"), err).kind == Reply::Kind::Err);
}

}  // namespace live_resp_test
