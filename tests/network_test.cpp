// The network: partitions, two-way and one-way, and hold rules.
#include <doctest/doctest.h>

#include "tests/kernel_support.hpp"

using namespace locksim;
using namespace locksim::testing;

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

TEST_CASE("a lossy network drops about the share of messages it is configured to, and a lossless one none") {
  // scripts/mutants.txt network-loss-ignored: the [network] loss knob must reach the links.
  auto delivered = [](double loss) {
    World w(7);
    w.network().configure({DurationRange::fixed(Duration::ms(1)), loss, true});
    auto& a = w.add<Probe>("a");
    auto& b = w.add<Probe>("b");
    w.at(at_ms(0), [&] {
      for (int i = 0; i < 1000; ++i) a.send(b.id(), storage::Request{});
    });
    w.run_until(at_ms(100));
    return b.inbox.size();
  };
  CHECK(delivered(0.0) == 1000);
  const std::size_t half = delivered(0.5);
  CHECK(half > 400);
  CHECK(half < 600);
  CHECK(delivered(1.0) == 0);
}
