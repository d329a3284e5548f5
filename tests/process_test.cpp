// A process's life: a pause holds its timers and messages, a crash destroys its
// coroutines and refuses what is sent to it, a restart starts it afresh.
#include <doctest/doctest.h>

#include <optional>

#include "tests/kernel_support.hpp"

namespace process_test {

using namespace locksim;
using namespace locksim::testing;

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

TEST_CASE("a message sent to a crashed process that arrives after its restart is not delivered to the new incarnation") {
  // Sent while b is down, on the way for 20 ms; b restarts at 5 ms: the new
  // incarnation never had a connection that message travelled on
  // (sim/process.cpp, Process::restart's epoch; scripts/mutants.txt crash-keeps-old-messages).
  World w(1);
  w.network().configure({DurationRange::fixed(Duration::ms(20)), 0.0, true});
  auto& a = w.add<Probe>("a");
  auto& b = w.add<Probe>("b");
  w.at(at_ms(0), [&] { w.crash(b.id()); });
  w.at(at_ms(1), [&] { a.send(b.id(), storage::Request{}); });
  w.at(at_ms(5), [&] { w.restart(b.id()); });
  w.at(at_ms(30), [&] { a.send(b.id(), storage::Request{}); });  // to the new incarnation: delivered
  w.run_until(at_ms(100));
  CHECK(b.inbox.size() == 1);
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

}  // namespace process_test
