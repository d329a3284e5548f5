// Everything live mode starts listens on 127.0.0.1 alone (live/servers.cpp,
// Supervisor::launch): a server that listens anywhere else, here another
// loopback address so that the test itself stays on the loopback interface,
// is refused before anything talks to it.
#include <doctest/doctest.h>

#include <string>

#include "live/servers.hpp"

namespace live_loopback_test {

using namespace locksim;
using namespace locksim::live;

TEST_CASE("a redis-server that listens beyond 127.0.0.1 is refused, named with the address") {
  Supervisor sup;
  std::string said;
  try {
    sup.start_server("m", {.extra_config = {"bind 127.0.0.1 127.0.0.2"}});
  } catch (const Error& e) {
    said = e.what();
  }
  CHECK(said.find("m listens on 127.0.0.2:") != std::string::npos);
  CHECK(said.find("beyond 127.0.0.1; refusing to go on") != std::string::npos);
}

}  // namespace live_loopback_test
