// node-redlock as people install it: 4.2.0 (`npm install redlock`) and the
// issue's 5.0.0-beta.2. Each behaviour pinned here has its line of the
// shipped code beside it in lockalgos/redlock.cpp.
#include <doctest/doctest.h>

#include <string>

#include "harness/run.hpp"
#include "tests/support.hpp"

namespace node_redlock_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

std::string node_scenario(const std::string& library, int nodes, const std::string& lock_keys, const std::string& rest,
                          const std::string& duration = "20s") {
  std::string s = "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"" + duration +
                  "\"\n[lock]\nlibrary = \"" + library + "\"\n" + lock_keys + "\n[network]\ndelay = \"1ms\"\n";
  for (int i = 1; i <= nodes; ++i) s += "[[node]]\nname = \"redis" + std::to_string(i) + "\"\n";
  return s + rest;
}

RunResult run_text(const std::string& text) { return run_scenario(parse_scenario(text, "t.toml")); }

Instant at_ms(std::int64_t ms) { return Instant::from_ns(Duration::ms(ms).count_ns()); }

// client1's reply from redis1 held back `by`, once.
std::string delayed_reply(const std::string& by) {
  return "[[client]]\nname = \"client1\"\nwork = \"100ms\"\n"
         "[[fault]]\nat = \"0s\"\nkind = \"delay\"\nfrom = \"redis1\"\nto = \"client1\"\nby = \"" + by + "\"\ncount = 1\n";
}

}  // namespace

TEST_CASE("node-redlock 5.0.0-beta.2: acquire() whose reply came after the TTL returns a lock already expired") {
  // index.js:210-217: expiration = start + duration - drift; nothing compares it with Date.now().
  const RunResult r = run_text(node_scenario("node-redlock@5.0.0-beta.2", 1, "ttl = \"2s\"", delayed_reply("3s")));
  const auto acquired = events_of(r, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  CHECK(acquired[0]->at == at_ms(3002));
  // Valid until 2 s - 22 ms, on its clock: long past when it returns.
  CHECK(acquired[0]->value == Duration::ms(2000 - 22).count_ns());
  CHECK(events_of(r, Ev::AttemptFailed, "client1").empty());
}

TEST_CASE("node-redlock 4.2.0: the same late reply fails the try (validity > 0 is checked), unlocks and retries") {
  // redlock.js:415-428: expiration > Date.now() needed; a failed try unlocks every server, then retries.
  const RunResult r = run_text(node_scenario("node-redlock@4.2.0", 1, "ttl = \"2s\"", delayed_reply("3s")));
  const auto failed = events_of(r, Ev::AttemptFailed, "client1");
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]->at == at_ms(3002));
  const auto acquired = events_of(r, Ev::Acquired, "client1");
  REQUIRE(acquired.size() == 1);
  // The retry comes 100..299 ms after the unlock's reply.
  CHECK(acquired[0]->at >= at_ms(3004 + 100 + 2));
  CHECK(acquired[0]->at <= at_ms(3004 + 299 + 2));
}

TEST_CASE("node-redlock 4.2.0 reads Date.now() at each try, 5.0.0-beta.2 once before them all") {
  // v4 redlock.js:397 (start per attempt); v5 index.js:210 (start before _execute).
  const std::string clients = "[[client]]\nname = \"holder\"\nwork = \"1s\"\n"
                              "[[client]]\nname = \"client1\"\nstart = \"100ms\"\nwork = \"1ms\"\n";
  for (const char* lib : {"node-redlock@4.2.0", "node-redlock@5.0.0-beta.2"}) {
    INFO(lib);
    const RunResult r = run_text(node_scenario(lib, 3, "ttl = \"10s\"", clients));
    REQUIRE(events_of(r, Ev::AttemptFailed, "client1").size() >= 2);
    const auto acquired = events_of(r, Ev::Acquired, "client1");
    REQUIRE(acquired.size() == 1);
    const std::int64_t drift = Duration::ms(102).count_ns();
    if (std::string(lib) == "node-redlock@4.2.0") {
      // From the last try's start: its SETs left at acquired - 2 ms.
      CHECK(acquired[0]->value == (acquired[0]->at - Instant::zero()).count_ns() - Duration::ms(2).count_ns() +
                                      Duration::s(10).count_ns() - drift);
    } else {
      CHECK(acquired[0]->value == Duration::ms(100 + 10000).count_ns() - drift);
    }
  }
}

TEST_CASE("node-redlock 4.2.0 waits for every server's reply, 5.0.0-beta.2 goes on at a quorum") {
  // v4 redlock.js:411 (waiting-- > 1: every callback); v5 index.js:326-332. Neither has a command timeout.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"1ms\"\n"
                           "[[fault]]\nat = \"0s\"\nkind = \"partition\"\ngroups = [[\"client1\"], [\"redis3\"]]\n";
  const RunResult v5 = run_text(node_scenario("node-redlock@5.0.0-beta.2", 3, "ttl = \"10s\"", rest));
  REQUIRE(events_of(v5, Ev::Acquired, "client1").size() == 1);
  CHECK(events_of(v5, Ev::Acquired, "client1")[0]->at == at_ms(2));
  const RunResult v4 = run_text(node_scenario("node-redlock@4.2.0", 3, "ttl = \"10s\"", rest));
  CHECK(events_of(v4, Ev::Acquired, "client1").empty());
  CHECK(events_of(v4, Ev::AttemptFailed, "client1").empty());  // still waiting for redis3
}

TEST_CASE("node-redlock 5.0.0-beta.2 using(): extended 500 ms before the expiration, on the wall clock") {
  // index.js:432-434: setTimeout(extend, lock.expiration - Date.now() - 500); :261-262 the new expiration.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"3s\"\nusing = true\n";
  const RunResult r = run_text(node_scenario("node-redlock@5.0.0-beta.2", 1, "ttl = \"2s\"", rest));
  const auto renewed = events_of(r, Ev::Renewed, "client1");
  REQUIRE(renewed.size() >= 2);
  // Acquired at 2 ms: expiration 0 + 2000 - 22 = 1978 ms; the timer set at 2 ms for 1476 ms.
  CHECK(renewed[0]->at == at_ms(1478 + 2));
  CHECK(events_of(r, Ev::Lost, "client1").empty());
  CHECK(events_of(r, Ev::Wrote, "client1").size() == 1);
}

TEST_CASE("node-redlock 5.0.0-beta.2 using() after a pause: the work timer runs first, the write goes, then the abort") {
  // Both timers were due during the pause; they run in due order on resume
  // (Node 20 lib/internal/timers.js processTimers: lists by expiry). The work
  // timer (due 1.004 s) resolves the routine's await, which reads
  // signal.aborted (false) and writes; then the extension timer (due 1.478 s)
  // finds the expiration passed (index.js:253) and aborts (:448-449).
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"1s\"\nusing = true\n"
                           "[[fault]]\nat = \"500ms\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"3s\"\n";
  const RunResult r = run_text(node_scenario("node-redlock@5.0.0-beta.2", 1, "ttl = \"2s\"", rest));
  const auto writing = events_of(r, Ev::Writing, "client1");
  const auto lost = events_of(r, Ev::Lost, "client1");
  REQUIRE(writing.size() == 1);
  REQUIRE(lost.size() == 1);
  CHECK(writing[0]->at == at_ms(3500));
  CHECK(writing[0]->seq < lost[0]->seq);
  CHECK(events_of(r, Ev::Wrote, "client1").size() == 1);
  // No extension was sent: the expired lock is refused before any command.
  CHECK(events_of(r, Ev::Renewed, "client1").empty());
}

TEST_CASE("node-redlock 5.0.0-beta.2 using(): a lock whose work timer comes after the abort is not written") {
  // The same pause, work 1.6 s: the extension timer (1.478 s) now runs first and aborts.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"1600ms\"\nusing = true\n"
                           "[[fault]]\nat = \"500ms\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"3s\"\n";
  const RunResult r = run_text(node_scenario("node-redlock@5.0.0-beta.2", 1, "ttl = \"2s\"", rest));
  CHECK(events_of(r, Ev::Lost, "client1").size() == 1);
  CHECK(events_of(r, Ev::Writing, "client1").empty());
}

TEST_CASE("node-redlock 4.2.0's extend(): a failed try unlocks the lock it was extending") {
  // redlock.js:302 -> _lock(value, extendScript); :419 expiration > Date.now()
  // needed; :424 lock.unlock() after a failed try. client1 extends 500 ms
  // before expiry (1.478 s); the extension's reply comes back at 3.98 s, past
  // its new expiration (1.478 + 2 - 0.022 s): the try fails and unlocks.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"8s\"\n"
                           "[[fault]]\nat = \"1400ms\"\nkind = \"delay\"\nfrom = \"redis1\"\nto = \"client1\"\nby = \"2500ms\"\ncount = 1\n";
  const RunResult r = run_text(node_scenario("node-redlock@4.2.0", 1, "ttl = \"2s\"\nauto_extend = \"500ms\"", rest));
  const auto releasing = events_of(r, Ev::Releasing, "client1");
  REQUIRE(releasing.size() == 1);
  int unlocks_before_release = 0;
  for (const TraceEvent* e : events_of(r, Ev::Command, "redis1"))
    if (e->detail.find("compare-and-delete") != std::string::npos && e->at < releasing[0]->at) ++unlocks_before_release;
  CHECK(unlocks_before_release >= 1);
  CHECK(events_of(r, Ev::Lost, "client1").size() == 1);  // every try failed: the application's extend() rejects
}

TEST_CASE("node-redlock 5.0.0-beta.2: a lock whose expiration equals Date.now() is not yet expired: it is extended") {
  // index.js:253: existing.expiration < Date.now() throws; equal does not. The
  // expiration is 0 + 2000 - 22 = 1978 ms; the extension timer (due 1.478 s)
  // is held by a pause that ends at exactly 1.978 s; the key itself lives to 2.001 s.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"3s\"\nusing = true\n"
                           "[[fault]]\nat = \"1s\"\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"978ms\"\n";
  const RunResult r = run_text(node_scenario("node-redlock@5.0.0-beta.2", 1, "ttl = \"2s\"", rest));
  CHECK(events_of(r, Ev::Lost, "client1").empty());
  REQUIRE(events_of(r, Ev::Renewed, "client1").size() >= 1);
  CHECK(events_of(r, Ev::Renewed, "client1")[0]->at == at_ms(1978 + 2));
}

TEST_CASE("node-redlock 5.0.0-beta.2: an extension answered after its new expiration is taken all the same") {
  // index.js:256-262: no validity check on extend; 4.2.0 (redlock.js:419) would refuse it.
  const std::string rest = "[[client]]\nname = \"client1\"\nwork = \"5s\"\nusing = true\n"
                           "[[fault]]\nat = \"1400ms\"\nkind = \"delay\"\nfrom = \"redis1\"\nto = \"client1\"\nby = \"2500ms\"\ncount = 1\n";
  const RunResult r = run_text(node_scenario("node-redlock@5.0.0-beta.2", 1, "ttl = \"2s\"", rest));
  REQUIRE(events_of(r, Ev::Renewed, "client1").size() >= 1);
  CHECK(events_of(r, Ev::Renewed, "client1")[0]->at == at_ms(1478 + 1 + 2500 + 1));
}

}  // namespace node_redlock_test
