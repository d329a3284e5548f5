// The supervisor (live/servers.hpp): real redis-server and redis-sentinel
// processes, their faults, and the promise that none outlives locksim, not
// even a SIGKILLed one.
#include <doctest/doctest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "live/blocking_client.hpp"
#include "live/servers.hpp"
#include "tests/live_support.hpp"

namespace live_servers_test {

using namespace locksim;
using namespace locksim::live;
using locksim::live::Persistence;  // not the scenario's (sim/node_config.hpp)
using locksim::live::testing::Child;
using locksim::live::testing::eventually;
using locksim::live::testing::TempDir;

namespace fs = std::filesystem;

namespace {

// Whether anything accepts connections on 127.0.0.1:port.
bool accepting(std::uint16_t port) {
  try {
    BlockingClient c(port, Duration::ms(500));
    return true;
  } catch (const Error&) {
    return false;
  }
}

// "master", "slave", "sentinel"; empty when the node does not answer (a node
// that is demoted drops its clients' connections).
std::string role(std::uint16_t port) {
  try {
    return call(port, {"ROLE"}).elements.at(0).str;
  } catch (const std::exception&) {
    return {};
  }
}

bool gone(pid_t pid, std::uint16_t port) { return !process_alive(pid) && !accepting(port); }

struct Started {
  std::string name;
  pid_t pid = 0;
  std::uint16_t port = 0;
};

std::string value_of(std::uint16_t port, const std::string& key) {
  const resp::Value v = call(port, {"GET", key});
  return v.type == resp::Value::Type::Bulk ? v.str : "(nil)";
}

// What locksim_live_helper printed before "ready".
struct HelperRun {
  std::vector<Started> nodes;
  fs::path root;
};

HelperRun read_helper(Child& helper) {
  HelperRun run;
  for (;;) {
    const std::string line = helper.read_line(Duration::s(30));
    REQUIRE_MESSAGE(!line.empty(), "the helper did not report ready");
    if (line == "ready") break;
    std::istringstream in(line);
    std::string word;
    in >> word;
    if (word == "node") {
      Started s;
      in >> s.name >> s.pid >> s.port;
      run.nodes.push_back(s);
    } else if (word == "root") {
      in >> run.root;
    }
  }
  REQUIRE(run.nodes.size() == 3);
  return run;
}

}  // namespace

TEST_CASE("starting and stopping servers and a sentinel leaves no process and no port and no directory") {
  std::vector<Started> started;
  fs::path root;
  {
    Supervisor sup;
    root = sup.root();
    sup.start_server("m", {.persistence = Persistence::AofAlways});
    sup.start_server("r", {.replica_of = "m"});
    sup.start_sentinel("s", {.master = "m"});
    for (const NodeInfo& n : sup.nodes()) {
      started.push_back({n.name, n.pid, n.port});
      CHECK(process_alive(n.pid));
      CHECK(sup.name_at(n.port) == n.name);
      CHECK(fs::exists(n.dir / (n.kind == NodeKind::Server ? "redis.conf" : "sentinel.conf")));
    }
    CHECK(fs::is_directory(root));
  }
  for (const Started& s : started) {
    INFO(s.name);
    CHECK(!process_alive(s.pid));
    CHECK(!accepting(s.port));
  }
  CHECK(!fs::exists(root));
}

TEST_CASE("a root whose owner is gone is removed by the next supervisor, while a living owner's and another name's are kept") {
  TempDir tmp;
  const auto root = [&](const std::string& name, const std::string& owner) {
    const fs::path p = tmp.path() / name;
    fs::create_directories(p / "redis1");
    std::ofstream(p / "redis1" / "redis.log") << "left behind\n";
    if (!owner.empty()) std::ofstream(p / "owner") << owner << "\n";
    return p;
  };
  const std::optional<std::string> me = process_identity(::getpid());
  REQUIRE(me);
  const std::string my_pid = std::to_string(::getpid());
  const fs::path dead = root("locksim-live-dead01", "999999999 12345");          // no such process
  const fs::path reused = root("locksim-live-reuse1", my_pid + " 1");            // our pid, another start time
  const fs::path alive = root("locksim-live-alive1", *me);                       // this very process
  const fs::path fresh = root("locksim-live-fresh1", "");                        // being made this instant
  const fs::path old = root("locksim-live-old001", "");                          // before roots named owners
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::hours(2));
  const fs::path test_dir = root("locksim-live-test-abcdef", "999999999 1");     // not a supervisor's name
  const fs::path other = root("redis-dead01", "999999999 1");
  std::ofstream(tmp.path() / "locksim-live-file01") << "999999999 1\n";         // a file, not a root

  CHECK(remove_abandoned_roots(tmp.path()) == 3);
  CHECK(!fs::exists(dead));
  CHECK(!fs::exists(reused));
  CHECK(!fs::exists(old));
  for (const fs::path& kept : {alive, fresh, test_dir, other, tmp.path() / "locksim-live-file01"}) {
    INFO(kept.string());
    CHECK(fs::exists(kept));
  }
  CHECK(remove_abandoned_roots(tmp.path()) == 0);
}

TEST_CASE("a supervisor killed with SIGKILL leaves its root, which the next supervisor removes") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    Supervisor sup;
    const std::string path = sup.root().string() + "\n";
    if (::write(fds[1], path.data(), path.size()) < 0) ::_exit(1);
    for (;;) ::pause();  // until SIGKILL: no destructor runs
  }
  ::close(fds[1]);
  std::string path;
  char c;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') path += c;
  ::close(fds[0]);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  REQUIRE(!path.empty());
  CHECK(fs::is_directory(path));
  {
    Supervisor next;
    CHECK(next.root() != fs::path(path));
    CHECK(!fs::exists(path));
  }
}

TEST_CASE("every node listens on 127.0.0.1 and nowhere else") {
  Supervisor sup;
  sup.start_server("m");
  sup.start_server("r", {.replica_of = "m"});
  sup.start_sentinel("s", {.master = "m"});
  for (const NodeInfo& n : sup.nodes()) {
    const std::vector<Endpoint> listening = listening_addresses(n.pid);
    INFO(n.name);
    REQUIRE(!listening.empty());
    for (const Endpoint& e : listening) CHECK(e == Endpoint{"127.0.0.1", n.port});
  }
}

TEST_CASE("a paused redis-server answers nothing until SIGCONT") {
  Supervisor sup;
  const std::uint16_t port = sup.start_server("redis1");
  BlockingClient c(port, Duration::s(2));
  sup.pause("redis1");
  CHECK(sup.paused("redis1"));
  c.send(resp::encode({"PING"}));
  CHECK(!c.receive(Duration::ms(500)));
  sup.resume("redis1");
  const std::optional<resp::Value> pong = c.receive(Duration::s(5));
  REQUIRE(pong);
  CHECK(pong->str == "PONG");
}

TEST_CASE("after a crash and restart a key survives with aof-always and is lost with no persistence") {
  Supervisor sup;
  const std::uint16_t durable = sup.start_server("durable", {.persistence = Persistence::AofAlways});
  const std::uint16_t volatile_port = sup.start_server("volatile", {.persistence = Persistence::None});
  const std::uint16_t everysec = sup.start_server("everysec", {.persistence = Persistence::AofEverysec});
  CHECK(call(everysec, {"CONFIG", "GET", "appendfsync"}).elements.at(1).str == "everysec");
  for (std::uint16_t port : {durable, volatile_port}) CHECK(call(port, {"SET", "lock", "v"}).str == "OK");
  const pid_t old_pid = sup.pid("durable");
  for (const char* name : {"durable", "volatile"}) {
    sup.crash(name);
    CHECK(!sup.running(name));
  }
  CHECK(!process_alive(old_pid));
  CHECK(!accepting(durable));
  for (const char* name : {"durable", "volatile"}) sup.restart(name);
  CHECK(sup.port("durable") == durable);  // a node keeps its address
  CHECK(sup.pid("durable") != old_pid);
  CHECK(value_of(durable, "lock") == "v");
  CHECK(value_of(volatile_port, "lock") == "(nil)");
}

TEST_CASE("a replica receives its master's keys") {
  Supervisor sup;
  const std::uint16_t master = sup.start_server("m");
  const std::uint16_t replica = sup.start_server("r", {.replica_of = "m"});
  CHECK(call(master, {"SET", "lock", "v"}).str == "OK");
  CHECK(eventually([&] { return value_of(replica, "lock") == "v"; }, Duration::s(5)));
  CHECK(call(replica, {"SET", "x", "y"}).str.rfind("READONLY", 0) == 0);
}

TEST_CASE("a Sentinel failover promotes the replica") {
  Supervisor sup;
  const std::uint16_t master = sup.start_server("m");
  const std::uint16_t replica = sup.start_server("r", {.replica_of = "m"});
  sup.start_sentinel("s", {.master = "m", .down_after = Duration::ms(500), .failover_timeout = Duration::s(5)});
  CHECK(sup.master_address("s", "mymaster") == Endpoint{"127.0.0.1", master});
  CHECK(call(master, {"SET", "lock", "v"}).str == "OK");
  CHECK(eventually([&] { return value_of(replica, "lock") == "v"; }, Duration::s(5)));

  CHECK(sup.failover("s", "mymaster", Duration::s(30)) == "r");
  CHECK(sup.master_address("s", "mymaster") == Endpoint{"127.0.0.1", replica});
  CHECK(eventually([&] { return role(replica) == "master"; }, Duration::s(10)));
  CHECK(call(replica, {"SET", "after", "failover"}).str == "OK");
  CHECK(value_of(replica, "lock") == "v");
  // The old master follows the new one once Sentinel has reconfigured it.
  CHECK(eventually([&] { return role(master) == "slave"; }, Duration::s(15)));
}

TEST_CASE("a SIGKILLed locksim leaves no redis-server or redis-sentinel behind") {
  HelperRun run;
  {
    Child helper(LOCKSIM_LIVE_HELPER, {});
    run = read_helper(helper);
    for (const Started& s : run.nodes) REQUIRE(process_alive(s.pid));
    helper.kill(SIGKILL);
    const int status = helper.wait();
    CHECK((WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
  }
  for (const Started& s : run.nodes) {
    INFO(s.name << " pid " << s.pid << " port " << s.port);
    CHECK(eventually([&] { return gone(s.pid, s.port); }, Duration::s(10)));
    if (process_alive(s.pid)) ::kill(s.pid, SIGKILL);  // not ours to leave behind, even when the test fails
  }
  // A SIGKILLed process cannot remove its directory: the one thing left,
  // which the next supervisor's sweep removes.
  REQUIRE(fs::exists(run.root));
  CHECK(remove_abandoned_roots(run.root.parent_path()) >= 1);
  CHECK(!fs::exists(run.root));
  fs::remove_all(run.root);
}

TEST_CASE("a locksim that dies of SIGTERM takes its servers with it") {
  Child helper(LOCKSIM_LIVE_HELPER, {});
  const HelperRun run = read_helper(helper);
  // What it takes with it is the helper's whole topology: r replicates m.
  const auto r = std::find_if(run.nodes.begin(), run.nodes.end(), [](const Started& s) { return s.name == "r"; });
  REQUIRE(r != run.nodes.end());
  CHECK(eventually([&] { return role(r->port) == "slave"; }, Duration::s(5)));
  helper.kill(SIGTERM);
  helper.wait();
  for (const Started& s : run.nodes) {
    INFO(s.name);
    CHECK(eventually([&] { return gone(s.pid, s.port); }, Duration::s(10)));
    if (process_alive(s.pid)) ::kill(s.pid, SIGKILL);
  }
  fs::remove_all(run.root);
}

TEST_CASE("a locksim that catches SIGINT unwinds and removes its servers and its directory") {
  Child helper(LOCKSIM_LIVE_HELPER, {"--catch-signals"});
  const HelperRun run = read_helper(helper);
  helper.kill(SIGINT);
  const int status = helper.wait();
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  for (const Started& s : run.nodes) {
    INFO(s.name);
    CHECK(gone(s.pid, s.port));  // at once: ~Supervisor reaped them before the helper exited
    if (process_alive(s.pid)) ::kill(s.pid, SIGKILL);
  }
  CHECK(!fs::exists(run.root));
  fs::remove_all(run.root);
}

TEST_CASE("with --keep the nodes' configs and logs stay in the directory given") {
  TempDir keep;
  {
    Supervisor sup({.keep = keep.path()});
    sup.start_server("redis1", {.persistence = Persistence::AofAlways});
    sup.start_sentinel("s1", {.master = "redis1"});
  }
  for (const char* file : {"redis1/redis.conf", "redis1/redis.log", "s1/sentinel.conf", "s1/sentinel.log"})
    CHECK_MESSAGE(fs::exists(keep.path() / file), file);
  std::ifstream conf(keep.path() / "redis1/redis.conf");
  const std::string text((std::istreambuf_iterator<char>(conf)), std::istreambuf_iterator<char>());
  CHECK(text.find("bind 127.0.0.1") != std::string::npos);
  CHECK(text.find("appendfsync always") != std::string::npos);
}

TEST_CASE("a server that cannot start is reported with its log") {
  Supervisor sup;
  try {
    sup.start_server("bad", {.extra_config = {"no-such-directive yes"}});
    FAIL("it started");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("no-such-directive") != std::string::npos);
  }
  CHECK(sup.nodes().empty());
}

TEST_CASE("a process that has exited but is not reaped yet (a zombie) is not alive, and a running one is") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  // Until it is reaped, /proc still lists it, in state Z.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (process_alive(child) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK_FALSE(process_alive(child));
  CHECK(::kill(child, 0) == 0);  // the zombie is there: only its state says it is gone
  int status = 0;
  CHECK(::waitpid(child, &status, 0) == child);
  CHECK(process_alive(::getpid()));
}

TEST_CASE("a server that closes the connection is an error to a waiting client, not a silence") {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(listener >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  REQUIRE(::listen(listener, 1) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  BlockingClient client(ntohs(addr.sin_port), Duration::s(5));
  const int accepted = ::accept(listener, nullptr, nullptr);
  REQUIRE(accepted >= 0);
  ::close(accepted);
  CHECK_THROWS_AS(client.receive(Duration::s(5)), Error);
  ::close(listener);
}

}  // namespace live_servers_test
