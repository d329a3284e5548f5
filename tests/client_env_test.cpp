// ClientEnv as the simulator implements it (harness/sim_client.hpp), its
// frame-less awaiters, ClientWakeup, and the fan-outs of lockalgos/when_all.hpp.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "harness/sim_client.hpp"
#include "lockalgos/wakeup.hpp"
#include "lockalgos/when_all.hpp"
#include "sim/world.hpp"

namespace client_env_test {

using namespace locksim;

namespace {

// A client process whose behaviour the test supplies, through its ClientEnv.
struct Probe : Process {
  Probe(World& w, std::string name) : Process(w, std::move(name), ProcessRole::Client, {}) {}
  SimClientEnv env{*this};
};

// Answers a Redis request after `think`: OK, or nil if it says no; a silent one never answers.
struct Node : Process {
  enum class Answer { Ok, Nil, Silent };
  Node(World& w, std::string name, Duration think, Answer answer)
      : Process(w, std::move(name), ProcessRole::LockNode, {}), think(think), answer(answer) {}
  Duration think;
  Answer answer;
  void on_message(Message& m) override {
    if (answer != Answer::Silent) spawn(respond(m));
  }
  Task<void> respond(Message m) {
    co_await sleep(think);
    reply(m, answer == Answer::Ok ? redis::Reply::ok() : redis::Reply::nil());
  }
};

constexpr Instant at_ms(std::int64_t ms) { return Instant::zero() + Duration::ms(ms); }

redis::Request get(std::string key) {
  redis::Request r;
  r.op = redis::Op::Get;
  r.key = std::move(key);
  return r;
}

bool ok(const redis::Reply& r) { return r.is_ok(); }

int events_of_kind(const World& w, Ev kind) {
  int n = 0;
  for (const TraceEvent& e : w.trace().events()) n += e.kind == kind;
  return n;
}

// A world with 1 ms links, a client and nodes answering after the given thinking times.
struct Rig {
  World w{1};
  Probe* client;
  std::vector<ProcId> nodes;
  Rig(std::vector<std::pair<Duration, Node::Answer>> specs) {
    w.network().configure({DurationRange::fixed(Duration::ms(1)), 0.0, true});
    client = &w.add<Probe>("client");
    for (std::size_t i = 0; i < specs.size(); ++i)
      nodes.push_back(w.add<Node>("node" + std::to_string(i + 1), specs[i].first, specs[i].second).id());
  }
  std::vector<Call> calls(Duration timeout = Duration::zero()) const {
    std::vector<Call> out;
    for (ProcId n : nodes) out.emplace_back(n, Payload(get("k")), timeout);
    return out;
  }
};

}  // namespace

TEST_CASE("a call's request leaves when its awaiter suspends, and the reply resumes the caller inside its delivery") {
  Rig rig({{Duration::zero(), Node::Answer::Ok}});
  std::uint64_t sent_before = 99;
  std::optional<redis::Reply> reply;
  std::uint64_t last_event = 0;
  rig.client->spawn([](Rig& rig, std::uint64_t& sent_before, std::optional<redis::Reply>& reply,
                       std::uint64_t& last_event) -> Task<void> {
    auto pending = rig.client->env.call_redis(rig.nodes[0], get("k"), Duration::zero());
    sent_before = rig.w.network().messages_sent();
    reply = co_await pending;
    last_event = rig.w.trace().size();
  }(rig, sent_before, reply, last_event));
  rig.w.run_until(at_ms(10));
  CHECK(sent_before == 0);
  REQUIRE(reply.has_value());
  CHECK(reply->is_ok());
  // Nothing was recorded between the reply's delivery and the caller going on.
  const TraceEvent& delivered = rig.w.trace().events().at(last_event - 1);
  CHECK(delivered.kind == Ev::Delivered);
  CHECK(delivered.process == rig.client->id());
  CHECK(delivered.at == at_ms(2));
}

TEST_CASE("a call times out on the client's monotonic clock, and the reply that comes later resumes nothing") {
  Rig rig({{Duration::ms(100), Node::Answer::Ok}});
  int resumed = 0;
  std::optional<Instant> gave_up;
  rig.client->spawn([](Rig& rig, int& resumed, std::optional<Instant>& gave_up) -> Task<void> {
    const auto reply = co_await rig.client->env.call(rig.nodes[0], Payload(get("k")), Duration::ms(50));
    ++resumed;
    if (!reply) gave_up = rig.client->env.mono_now();
  }(rig, resumed, gave_up));
  rig.w.run_until(at_ms(500));
  CHECK(gave_up == at_ms(50));
  CHECK(resumed == 1);
  CHECK(rig.client->calls_in_flight() == 0);
}

TEST_CASE("destroying a coroutine that awaits a call or a sleep cancels them: nothing of theirs fires afterwards") {
  Rig rig({{Duration::ms(10), Node::Answer::Ok}});
  bool went_on = false;
  auto waiting = [](Rig& rig, bool& went_on) -> Task<void> {
    co_await rig.client->env.call(rig.nodes[0], Payload(get("k")), Duration::s(1));
    went_on = true;
  }(rig, went_on);
  auto sleeping = [](Rig& rig, bool& went_on) -> Task<void> {
    co_await rig.client->env.sleep(Duration::ms(5));
    went_on = true;
  }(rig, went_on);
  waiting.handle().resume();   // runs to its co_await: the request leaves
  sleeping.handle().resume();
  CHECK(rig.client->calls_in_flight() == 1);
  CHECK(rig.client->timers_set() == 2);  // the call's timeout and the sleep
  waiting = {};
  sleeping = {};
  CHECK(rig.client->calls_in_flight() == 0);
  CHECK(rig.client->timers_set() == 0);
  rig.w.run_until(at_ms(2000));  // the reply comes at 12 ms, to nobody
  CHECK_FALSE(went_on);
  CHECK(events_of_kind(rig.w, Ev::Delivered) == 2);
}

TEST_CASE("a call made and dropped without being awaited sends nothing, and gives its staged message slot back") {
  Rig rig({{Duration::zero(), Node::Answer::Ok}});
  // The slot the next staged request takes: the world's free list is last in, first out.
  const std::uint64_t next = rig.w.new_message_slot();
  rig.w.free_message_slot(next);
  {
    auto unawaited = rig.client->env.call_redis(rig.nodes[0], get("k"), Duration::ms(50));
    CHECK(rig.w.new_message_slot() != next);  // `next` is the request's, staged in it
  }
  CHECK(rig.w.new_message_slot() == next);  // given back when the awaiter went
  CHECK(rig.client->calls_in_flight() == 0);
  CHECK(rig.client->timers_set() == 0);
  rig.w.run_until(at_ms(100));
  CHECK(rig.w.network().messages_sent() == 0);
}

TEST_CASE("when_quorum goes on at the quorum, keeps the replies of that instant, and cancels the rest") {
  using A = Node::Answer;
  // Three nodes answer at 2 ms, two at 52 ms and 102 ms.
  Rig rig({{Duration::zero(), A::Ok}, {Duration::ms(50), A::Ok}, {Duration::zero(), A::Ok},
           {Duration::ms(100), A::Ok}, {Duration::zero(), A::Nil}});
  Replies<redis::Reply> replies;
  Instant resolved;
  std::size_t in_flight = 99;
  rig.client->spawn([](Rig& rig, Replies<redis::Reply>& replies, Instant& resolved, std::size_t& in_flight) -> Task<void> {
    const Quorum<redis::Reply> two{.need = 2, .accept = ok};
    replies = co_await when_quorum(rig.client->env, rig.calls(), two);
    resolved = rig.client->env.mono_now();
    in_flight = rig.client->calls_in_flight();
  }(rig, replies, resolved, in_flight));
  rig.w.run_until(at_ms(500));
  CHECK(resolved == at_ms(2));
  CHECK(in_flight == 0);
  REQUIRE(replies.size() == 5);
  CHECK(replies[0]->is_ok());
  CHECK_FALSE(replies[1].has_value());  // cancelled
  CHECK(replies[2]->is_ok());
  CHECK_FALSE(replies[3].has_value());
  CHECK(replies[4]->is_nil());  // came at the same instant as the deciding reply: kept
}

TEST_CASE("when_quorum gives up once enough calls ended against, as node-redlock v5's votesAgainst does") {
  using A = Node::Answer;
  // Three of five needed: the third reply against makes three OKs impossible.
  for (const bool against : {false, true}) {
    Rig rig({{Duration::zero(), A::Nil}, {Duration::zero(), A::Nil}, {Duration::ms(1), A::Nil},
             {Duration::ms(100), A::Ok}, {Duration::ms(100), A::Ok}});
    Instant resolved;
    rig.client->spawn([](Rig& rig, Instant& resolved, bool against) -> Task<void> {
      Quorum<redis::Reply> three{.need = 3, .accept = ok};
      if (against) three.against_need = 3;
      co_await when_quorum(rig.client->env, rig.calls(), three);
      resolved = rig.client->env.mono_now();
    }(rig, resolved, against));
    rig.w.run_until(at_ms(500));
    INFO("against_need = " << (against ? "3" : "none"));
    CHECK(resolved == (against ? at_ms(3) : at_ms(102)));
  }
}

TEST_CASE("when_all waits for every call, a timed-out one included") {
  using A = Node::Answer;
  Rig rig({{Duration::zero(), A::Ok}, {Duration::zero(), A::Silent}, {Duration::ms(20), A::Nil}});
  Replies<Payload> replies;
  Instant resolved;
  rig.client->spawn([](Rig& rig, Replies<Payload>& replies, Instant& resolved) -> Task<void> {
    replies = co_await when_all(rig.client->env, rig.calls(Duration::ms(50)));
    resolved = rig.client->env.mono_now();
  }(rig, replies, resolved));
  rig.w.run_until(at_ms(500));
  CHECK(resolved == at_ms(50));
  REQUIRE(replies.size() == 3);
  CHECK(std::get<redis::Reply>(*replies[0]).is_ok());
  CHECK_FALSE(replies[1].has_value());
  CHECK(std::get<redis::Reply>(*replies[2]).is_nil());
}

TEST_CASE("a ClientWakeup remembers a fire with nobody waiting, and forgets a waiter whose coroutine is destroyed") {
  Rig rig({});
  ClientWakeup wake(rig.client->env);
  wake.fire();
  bool first = false, second = false;
  rig.client->spawn([](ClientWakeup& wake, bool& first) -> Task<void> {
    co_await wake.wait();  // the earlier fire: no suspension
    first = true;
  }(wake, first));
  rig.w.run_until(at_ms(1));
  CHECK(first);
  auto waiter = [](ClientWakeup& wake, bool& second) -> Task<void> {
    co_await wake.wait();
    second = true;
  }(wake, second);
  waiter.handle().resume();
  CHECK(wake.waiting());
  waiter = {};
  CHECK_FALSE(wake.waiting());
  wake.fire();  // resumes nothing
  rig.w.run_until(at_ms(2));
  CHECK_FALSE(second);
}

}  // namespace client_env_test
