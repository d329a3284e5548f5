// A live run's time scale on the wire (live/client_env.hpp): the times a
// request carries go to Redis in real time, and the remaining times Redis
// answers come back in scenario time.
#include <doctest/doctest.h>

#include "live/client_env.hpp"

namespace live_wire_time_test {

using namespace locksim;
using namespace locksim::live;

TEST_CASE("on the wire a PX is real time at the run's scale, never below 1 ms, and a remaining time comes back scaled") {
  const ScenarioClock clock(RealClock::now(), 10);  // ten scenario seconds per real second
  redis::Request set;
  set.op = redis::Op::Set;
  set.key = "lock";
  set.value = "v";
  set.px = Duration::s(30);
  CHECK(to_real(clock, set).px == Duration::s(3));
  set.px = Duration::ms(5);  // half a millisecond of real time: Redis would refuse PX 0
  CHECK(to_real(clock, set).px == Duration::ms(1));
  redis::Request get;
  get.op = redis::Op::Get;
  get.key = "lock";
  CHECK(to_real(clock, get).px.is_zero());

  redis::Request pttl;
  pttl.op = redis::Op::Pttl;
  pttl.key = "lock";
  CHECK(to_scenario(clock, pttl, redis::Reply::of(std::int64_t{2500})).integer == 25000);
  CHECK(to_scenario(clock, pttl, redis::Reply::of(std::int64_t{-2})).integer == -2);  // no such key: as Redis says
  CHECK(to_scenario(clock, get, redis::Reply::of(std::int64_t{2500})).integer == 2500);  // not a remaining time
}

}  // namespace live_wire_time_test
