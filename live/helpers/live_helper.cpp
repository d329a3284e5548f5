// A test helper for the supervisor (tests/live_servers_test.cpp): starts a
// master, its replica and a sentinel, tells its parent who they are, and
// waits to be killed. The tests kill it (SIGKILL, SIGTERM) and then look for
// what it left behind.
//
//   locksim_live_helper [--catch-signals]
//
// Prints "node <name> <pid> <port>" for each node, "root <dir>", then
// "ready", and waits at most 120 s. With --catch-signals, SIGINT and SIGTERM
// end the wait and main returns, so that ~Supervisor cleans up (kills the
// nodes, removes the directory); without it they kill the helper outright.
#include <signal.h>

#include <cstdio>
#include <cstring>
#include <ctime>

#include "live/servers.hpp"

int main(int argc, char** argv) {
  using namespace locksim;
  using namespace locksim::live;
  const bool catch_signals = argc > 1 && std::strcmp(argv[1], "--catch-signals") == 0;
  sigset_t ends;
  sigemptyset(&ends);
  sigaddset(&ends, SIGINT);
  sigaddset(&ends, SIGTERM);
  // Blocked before anything starts, so that none arrives unhandled; taken by sigtimedwait below.
  if (catch_signals) sigprocmask(SIG_BLOCK, &ends, nullptr);
  try {
    Supervisor sup;
    sup.start_server("m");
    sup.start_server("r", {.replica_of = "m"});
    sup.start_sentinel("s", {.master = "m"});
    for (const NodeInfo& n : sup.nodes()) std::printf("node %s %d %d\n", n.name.c_str(), n.pid, n.port);
    std::printf("root %s\nready\n", sup.root().c_str());
    std::fflush(stdout);
    const timespec wait{120, 0};
    if (catch_signals) {
      sigtimedwait(&ends, nullptr, &wait);
    } else {
      timespec left = wait;
      while (nanosleep(&left, &left) != 0) {
      }
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "locksim_live_helper: %s\n", e.what());
    return 1;
  }
}
