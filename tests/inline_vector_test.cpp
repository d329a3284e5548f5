// InlineVector (sim/inline_vector.hpp): a process's calls and timers.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/inline_vector.hpp"

namespace inline_vector_test {

using locksim::InlineVector;

namespace {

struct Item {
  std::uint64_t id = 7;  // a default member initializer emplace_back must honour
  std::uint64_t payload = 0;
};

std::vector<std::uint64_t> ids(const InlineVector<Item, 3>& v) {
  std::vector<std::uint64_t> out;
  for (const Item& x : v) out.push_back(x.id);
  return out;
}

}  // namespace

TEST_CASE("an InlineVector keeps its elements, in order, across the move from inside to the heap") {
  InlineVector<Item, 3> v;
  const Item* inside = v.begin();
  for (std::uint64_t i = 1; i <= 3; ++i) v.push_back({i, 10 * i});
  CHECK(v.begin() == inside);  // three fit inside: no allocation yet
  for (std::uint64_t i = 4; i <= 10; ++i) v.push_back({i, 10 * i});
  CHECK(v.begin() != inside);
  CHECK(ids(v) == std::vector<std::uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(v[9].payload == 100);
  CHECK(v.back().id == 10);
}

TEST_CASE("an InlineVector's emplace_back value-initializes, and erase_if keeps the others' order") {
  InlineVector<Item, 3> v;
  for (int i = 0; i < 5; ++i) {
    Item& x = v.emplace_back();
    CHECK(x.id == 7);
    CHECK(x.payload == 0);
    x.id = static_cast<std::uint64_t>(i);
  }
  v.erase_if([](const Item& x) { return x.id % 2 == 1; });
  CHECK(ids(v) == std::vector<std::uint64_t>{0, 2, 4});
  v.pop_back();
  CHECK(ids(v) == std::vector<std::uint64_t>{0, 2});
  v.clear();
  CHECK(v.empty());
  v.push_back({42, 0});
  CHECK(ids(v) == std::vector<std::uint64_t>{42});
}

}  // namespace inline_vector_test
