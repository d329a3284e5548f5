// A real-time deadline (live/common.hpp) says what is left of it, never less
// than nothing: a wait given an already spent deadline must return at once,
// and poll(2) takes a negative timeout for "wait forever".
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "live/blocking_client.hpp"
#include "live/common.hpp"

namespace live_deadline_test {

using namespace locksim;
using namespace locksim::live;

TEST_CASE("a spent deadline has nothing left, not a negative time") {
  CHECK(Deadline(Duration::ms(-5)).left() == Duration::zero());
  const Deadline soon(Duration::ms(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(soon.passed());
  CHECK(soon.left() == Duration::zero());
  CHECK(Deadline(Duration::s(60)).left() > Duration::s(59));
}

TEST_CASE("a blocking client told to wait a spent time for a silent server gives up at once, never waits forever") {
  // A listener on 127.0.0.1 that never accepts: the kernel completes the
  // connection, and nothing is ever sent on it.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  BlockingClient client(ntohs(addr.sin_port), Duration::s(5));

  std::atomic<bool> returned{false};
  std::optional<bool> got_nothing;
  std::thread waiter([&] {
    try {
      got_nothing = !client.receive(Duration::ms(-5)).has_value();
    } catch (const Error&) {  // the connection reset below: it had not returned
    }
    returned = true;
  });
  for (int i = 0; i < 500 && !returned; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const bool in_time = returned;
  ::close(listener);  // resets the pending connection: a waiter still in poll(2) wakes
  waiter.join();
  CHECK(in_time);
  CHECK(got_nothing == std::optional<bool>(true));
}

}  // namespace live_deadline_test
