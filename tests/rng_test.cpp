// Randomness and determinism: the same seed gives the same trace, forked
// streams are independent, draws cover their bounds.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "sim/rng.hpp"
#include "tests/kernel_support.hpp"

namespace rng_test {

using namespace locksim;
using namespace locksim::testing;

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

TEST_CASE("a stream forked by a name in parts is the stream forked by the whole name") {
  // The kernel forks links' and processes' streams this way (no name built per run).
  Rng root(42);
  Rng whole = root.fork("link/client1->redis1"), parts = root.fork_parts({"link/", "client1", "->", "redis1"});
  CHECK(whole.seed() == parts.seed());
  CHECK(whole.next() == parts.next());
  CHECK(root.fork_parts({"link/", "client1", "->", "redis2"}).seed() != whole.seed());
  CHECK(root.fork_parts({}).seed() == root.fork("").seed());
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

TEST_CASE("a string's last bytes are hashed as the word a memcpy of them would make, for every length") {
  // hash_mix(h, string_view) reads the tail in whole loads (tail_word), not
  // through a variable-length memcpy: the same word, so the same hashes.
  const std::string text = "a-lock-key-of-some-length";
  for (std::size_t start = 0; start < 8; ++start) {
    for (std::size_t n = 0; n < 8; ++n) {
      std::uint64_t want = 0;
      std::memcpy(&want, text.data() + start, n);
      CHECK(tail_word(text.data() + start, n) == want);
    }
  }
  for (std::size_t len = 0; len <= text.size(); ++len) {
    const std::string_view s(text.data(), len);
    std::uint64_t h = 1, word = 0;
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      std::memcpy(&word, s.data() + i, 8);
      h = hash_mix(h, word);
    }
    word = 0;
    std::memcpy(&word, s.data() + i, s.size() - i);
    CHECK(hash_mix(1, s) == hash_mix(h, word ^ (static_cast<std::uint64_t>(s.size()) << 56)));
  }
}

}  // namespace rng_test
