// Explore's harm over many runs (judge/harm.hpp, HarmTally) pools what the
// clients were told, not what the storage took: a write whose reply never
// reached its client (it crashed first, the reply was lost) is accepted but
// no acknowledged increment, so it is in no run's denominator.
#include <doctest/doctest.h>

#include "judge/harm.hpp"

namespace harm_tally_test {

using namespace locksim;

TEST_CASE("harm over runs counts acknowledged increments only: an accepted write never acknowledged is in no denominator") {
  HarmTally tally;
  // Of 5 accepted increments, 2 were acknowledged and 1 of those is lost.
  tally.add(Harm{.accepted = 5, .acknowledged = 2, .lost = 1});
  tally.add(Harm{.accepted = 3, .acknowledged = 2, .lost = 0});
  CHECK(tally.run_count() == 2);
  CHECK(tally.acknowledged() == 4);
  CHECK(tally.lost() == 1);
  CHECK(tally.fraction() == 0.25);
  // Merged shards the same: the pairs are (lost, acknowledged).
  HarmTally other;
  other.add(Harm{.accepted = 9, .acknowledged = 4, .lost = 1});
  tally.merge(other);
  CHECK(tally.acknowledged() == 8);
  CHECK(tally.fraction() == 0.25);
}

}  // namespace harm_tally_test
