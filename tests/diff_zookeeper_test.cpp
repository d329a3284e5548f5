// `locksim diff-zookeeper` (live/zookeeper/diff.hpp): its sequences, its
// model runner at the real run's times, when a real run's timing is too close
// to a tick to compare, how outcomes are compared, and a short run against a
// real ZooKeeper that finds nothing.
#include <doctest/doctest.h>

#include <sstream>

#include "live/zookeeper/diff.hpp"

namespace diff_zookeeper_test {

using namespace locksim;
using namespace locksim::live::zkdiff;
using locksim::live::zkdiff::RunOptions;  // not harness/run.hpp's
using locksim::live::zkdiff::Step;        // not reports/report.hpp's
using coord::Op;

namespace {

Step op(int slot, Op o) {
  Step s;
  s.slot = slot;
  s.op = o;
  return s;
}

Step connect(int slot, Duration ttl) {
  Step s = op(slot, Op::Connect);
  s.ttl = ttl;
  return s;
}

// A real run's timing for a sequence of Op steps: op i sent at sent[i], answered 2 ms later.
Outcome timed(std::vector<Duration> sent, Duration end) {
  Outcome o;
  for (Duration d : sent) {
    o.sent.push_back(d);
    o.answered.push_back(d + Duration::ms(2));
  }
  o.end = end;
  return o;
}

coord::Reply reply(bool ok, std::string error = {}) {
  coord::Reply r;
  r.ok = ok;
  r.error = std::move(error);
  return r;
}

}  // namespace

TEST_CASE("diff-zookeeper's sequences are the same for a seed, start with a session, and draw timeouts clear of the ticks") {
  CHECK(describe(generate(1, 7).at(3)) == describe(generate(1, 7).at(3)));
  std::size_t connects = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const Sequence seq = generate(1, i);
    REQUIRE(seq.size() >= 5);
    CHECK(seq.front().op == Op::Connect);
    CHECK(seq.front().slot == 0);
    for (const Step& s : seq) {
      if (s.kind != Step::Kind::Op || s.op != Op::Connect) continue;
      ++connects;
      // The negotiated timeout's remainder in the 100 ms tick: an op heard
      // 50 to 95 ms into a tick sets a deadline that is not within reach of a boundary.
      const Duration negotiated = std::clamp(s.ttl, kTick * 2, kTick * 20);
      const std::int64_t rest_ms = negotiated.whole_ms() % 100;
      CHECK((rest_ms < 5 || rest_ms >= 55));
    }
  }
  CHECK(connects > 300);
}

TEST_CASE("the model runs each op at the instant the real run sent it: a silent session expires at the tick after its deadline") {
  // Connect 250 ms at 50 ms: deadline 300 ms, expired at the 400 ms tick.
  const Sequence seq{connect(0, Duration::ms(250)), op(0, Op::Create), op(0, Op::Ping), op(0, Op::Ping)};
  const Outcome model = run_model(seq, "/p", 40,
                                  timed({Duration::ms(50), Duration::ms(60), Duration::ms(350), Duration::ms(750)},
                                        Duration::ms(800)));
  REQUIRE(model.replies.size() == 4);
  CHECK(canonical(*model.replies[0], Op::Connect, {model.replies[0]->id}) == "session #1, timeout 250ms");
  CHECK(canonical(*model.replies[1], Op::Create, {}) == "/p/n0-0000000000 czxid 41");  // 40: its createSession
  CHECK(model.replies[2]->ok);  // 350 ms: alive (its deadline was 310 ms: expires at the 400 ms tick)
  // The ping at 350 ms moved the deadline to 600 ms: expired at the 700 ms tick, before 750 ms.
  CHECK(model.replies[3]->error == "SESSION_EXPIRED");
}

TEST_CASE("a real run is not compared when an expiry falls inside an op's window, or a deadline could round either way") {
  // An op's window: sent - 1 ms to answered + 1 ms (the server's clock reads whole milliseconds).
  const Sequence seq{connect(0, Duration::ms(260)), op(1, Op::Ping)};
  Outcome model;
  coord::Reply hello = reply(true);
  hello.id = 1;
  hello.ttl = Duration::ms(260);
  model.replies = {hello, reply(false, "SESSION_EXPIRED")};
  // Connected at 50 ms (heard 49 to 53 ms): its deadline 309 to 313 ms, expired at the 400 ms tick.
  CHECK_FALSE(ambiguous(seq, model, timed({Duration::ms(50), Duration::ms(250)}, Duration::ms(480))));
  CHECK(ambiguous(seq, model, timed({Duration::ms(50), Duration::ms(399)}, Duration::ms(480))));  // 398..402 holds 400
  CHECK(ambiguous(seq, model, timed({Duration::ms(50), Duration::ms(250)}, Duration::ms(402))));  // the run ends at it
  // Heard 139 to 143 ms: its deadline 399 to 403 ms, the 400 or the 500 ms tick.
  CHECK(ambiguous(seq, model, timed({Duration::ms(140), Duration::ms(250)}, Duration::ms(580))));
  // A session closed before its tick expires at none.
  const Sequence closed{connect(0, Duration::ms(260)), op(0, Op::CloseSession), op(1, Op::Ping)};
  model.replies = {hello, reply(true), reply(false, "SESSION_EXPIRED")};
  CHECK_FALSE(ambiguous(closed, model, timed({Duration::ms(50), Duration::ms(60), Duration::ms(399)}, Duration::ms(480))));
}

TEST_CASE("outcomes compare sessions by the order they were opened and everything else as it is") {
  const Sequence seq{connect(0, Duration::s(1)), connect(1, Duration::s(1)), op(0, Op::Create)};
  Outcome model, real;
  coord::Reply a = reply(true), b = reply(true), made = reply(true);
  a.ttl = b.ttl = Duration::s(1);
  a.id = 1;
  b.id = 2;
  made.path = "/p/n0-0000000000";
  made.id = 12;
  model.replies = {a, b, made};
  a.id = 0x100000a;  // the server's own numbers, in the same order
  b.id = 0x100000b;
  real.replies = {a, b, made};
  CHECK_FALSE(first_difference(seq, model, real));
  real.replies[2]->id = 13;
  const auto d = first_difference(seq, model, real);
  REQUIRE(d);
  CHECK(d->find("op 3") != std::string::npos);
  CHECK(d->find("czxid 12 | /p/n0-0000000000 czxid 13") != std::string::npos);
  real.replies[2]->id = 12;
  const std::int64_t second = real.replies[1]->id;
  real.replies[1]->id = real.replies[0]->id;  // the same session twice: "#1" where the model says "#2"
  CHECK(first_difference(seq, model, real));
  real.replies[1]->id = second;
  real.notified[1].push_back({"/p/n0-0000000000", "deleted", 3});
  const auto n = first_difference(seq, model, real);
  REQUIRE(n);
  CHECK(n->find("client1's notifications") != std::string::npos);
}

TEST_CASE("diff-zookeeper against a real ZooKeeper: a few sequences, no mismatch") {
  RunOptions o;
  o.sequences = 4;
  o.seed = 3;
  std::ostringstream out;
  const Summary sum = run(o, out);
  INFO(out.str());
  CHECK(sum.mismatches == 0);
  CHECK(sum.sequences + sum.skipped == 4);
  CHECK(sum.sequences >= 2);
  CHECK(sum.ops > 20);
}

TEST_CASE("what an expired session's own connection heard after its expiry is a race, and is not compared") {
  // client0 opens a session (260 ms: expired at the 400 ms tick) at 50 ms,
  // client1 one at 60 ms; client0 opens another at 650 ms.
  const Sequence seq{connect(0, Duration::ms(260)), connect(1, Duration::s(2)), connect(0, Duration::s(2))};
  Outcome model;
  coord::Reply a = reply(true), b = reply(true), c = reply(true);
  a.id = 1;
  a.ttl = Duration::ms(260);
  b.id = 2;
  b.ttl = c.ttl = Duration::s(2);
  c.id = 3;
  model.replies = {a, b, c};
  const Outcome real = timed({Duration::ms(50), Duration::ms(60), Duration::ms(650)}, Duration::ms(700));
  Outcome heard = real;
  heard.notified[0] = {{"/p/n0-0000000000", "deleted", 4}, {"/p/n1-0000000001", "deleted", 5}};
  heard.notified_at[0] = {Duration::ms(403), Duration::ms(660)};  // after its expiry; on its new session
  heard.notified[1] = {{"/p/n0-0000000000", "deleted", 2}};
  heard.notified_at[1] = {Duration::ms(402)};  // another client's: compared
  const Outcome kept = without_expiry_races(seq, model, real, heard);
  REQUIRE(kept.notified[0].size() == 1);
  CHECK(kept.notified[0][0].path == "/p/n1-0000000001");
  CHECK(kept.notified[1].size() == 1);
}

TEST_CASE("a watch fired just before its client connects again is a race, and is not compared") {
  // seed 7, sequence 324, cut down: client0 watches the children (session 1),
  // client1 creates a child at 59 ms, client0 opens another session at 62 ms.
  // The model tells client0 at 59 ms; the real client read it first in 4
  // runs of 5, and in the fifth its old connection closed before.
  const Sequence seq{connect(0, Duration::s(2)), op(0, Op::GetChildren), connect(1, Duration::s(2)), op(1, Op::Create),
                     connect(0, Duration::s(2)), op(1, Op::Create)};
  Outcome model;
  coord::Reply a = reply(true), b = reply(true), c = reply(true);
  a.id = 1;
  b.id = 2;
  c.id = 3;
  a.ttl = b.ttl = c.ttl = Duration::s(2);
  model.replies = {a, reply(true), b, reply(true), c, reply(true)};
  const Outcome real = timed({Duration::ms(50), Duration::ms(53), Duration::ms(55), Duration::ms(59), Duration::ms(62),
                              Duration::ms(150)}, Duration::ms(200));
  model.notified[0] = {{"/p", "children-changed", 4}, {"/p", "children-changed", 6}};
  model.notified_at[0] = {Duration::ms(59), Duration::ms(150)};  // the second, on a watch of the new session: compared
  Outcome lost = real, heard = real;
  lost.replies = heard.replies = model.replies;
  lost.notified[0] = {{"/p", "children-changed", 6}};
  lost.notified_at[0] = {Duration::ms(151)};
  heard.notified[0] = {{"/p", "children-changed", 4}, {"/p", "children-changed", 6}};
  heard.notified_at[0] = {Duration::ms(62) + Duration::us(500), Duration::ms(151)};  // read as the connect left
  const Outcome m = without_replacement_races(seq, model, real, model), l = without_replacement_races(seq, model, real, lost),
                h = without_replacement_races(seq, model, real, heard);
  CHECK(m.notified[0].size() == 1);
  CHECK(l.notified[0].size() == 1);
  CHECK(h.notified[0].size() == 1);
  CHECK_FALSE(first_difference(seq, m, l));
  CHECK_FALSE(first_difference(seq, m, h));
  // 0.8 ms before the connect left: after `replaced` (sent less 1 ms), still the old connection's race.
  Outcome close = model;
  close.notified_at[0] = {Duration::ms(61) + Duration::us(200), Duration::ms(150)};
  CHECK(without_replacement_races(seq, close, real, close).notified[0].size() == 1);
  // 0.5 ms after the connect left: the new session's (its watch set after the connect's answer), compared.
  Outcome after = model;
  after.notified_at[0] = {Duration::ms(62) + Duration::us(500), Duration::ms(150)};
  CHECK(without_replacement_races(seq, after, real, after).notified[0].size() == 2);
  // 30 ms before the reconnect is no race: a notification lost there is a mismatch.
  Outcome early = model;
  early.notified_at[0] = {Duration::ms(31), Duration::ms(150)};
  const Outcome e = without_replacement_races(seq, early, real, early), el = without_replacement_races(seq, early, real, lost);
  CHECK(e.notified[0].size() == 2);
  CHECK(first_difference(seq, e, el));
}

}  // namespace diff_zookeeper_test
