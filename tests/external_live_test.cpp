// Real libraries as external clients, end to end (live/external/): one
// Python (redis-py) and one Node (node-redlock) client under a pause past
// their TTL against a real redis-server on loopback, judged from what the
// node and the storage saw; each way an adapter can fail ends the run with
// one line and exit 2; and a SIGKILLed locksim leaves no adapter behind.
// Each run takes a few seconds of real time: a library keeps real time.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness/run.hpp"
#include "live/external/external_clients.hpp"
#include "live/live_run.hpp"
#include "live/servers.hpp"
#include "tests/command_support.hpp"
#include "tests/live_support.hpp"

namespace external_live_test {

using namespace locksim;
using namespace locksim::live;
using locksim::live::testing::Child;
using locksim::live::testing::eventually;
using locksim::live::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// client1 takes the lock, reads, and is paused 2 s at its read (the adapter
// stops itself there); its 1 s key expires; client2 takes the lock at 1.2 s,
// reads, writes; client1 wakes and writes what it read + 1.
std::string paused_past_ttl(const std::string& library, const std::string& pause = "2s") {
  return R"(title = "a real library paused past its TTL"
source = "tests/external_live_test.cpp"
about = "client1 pauses at its read past the key's TTL; client2 takes the lock; client1 wakes and writes."
seed = 1
duration = "20s"

[lock]
library = ")" + library + R"("
ttl = "1s"

[[node]]
name = "redis1"

[[client]]
name = "client1"
work = "200ms"

[[client]]
name = "client2"
start = "1200ms"
work = "200ms"

[[fault]]
on = "client1 read"
kind = "pause"
target = "client1"
duration = ")" + pause + R"("

[expect]
violations = ["overlap", "stale-write", "lost-update"]
)";
}

const std::set<ViolationKind> kAll{ViolationKind::Overlap, ViolationKind::StaleWrite, ViolationKind::LostUpdate};

std::vector<const TraceEvent*> of(const RunResult& r, Ev kind, const std::string& process) {
  std::vector<const TraceEvent*> out;
  const ProcId p = *r.world->trace().find(process);
  for (const TraceEvent& e : r.world->trace().events())
    if (e.kind == kind && e.process == p) out.push_back(&e);
  return out;
}

// What each external run shows, whatever the library: the pause fell at
// client1's read, the node's own commands name who held the key, and the
// storage accepted both writes of 1.
void check_paused_run(const RunResult& r) {
  CHECK(r.verdict == kAll);
  const Trace& t = r.world->trace();
  const ProcId client1 = *t.find("client1"), client2 = *t.find("client2");
  const auto reads = of(r, Ev::Read, "client1");
  const auto paused = of(r, Ev::Paused, "client1");
  REQUIRE(reads.size() == 1);
  REQUIRE(paused.size() == 1);
  // Nothing of client1's between its read and its pause: it stopped itself there.
  for (const TraceEvent& e : t.events())
    if (e.process == client1 && e.seq > reads[0]->seq && e.seq < paused[0]->seq) FAIL_CHECK("between: " << event_name(e.kind));
  CHECK(paused[0]->value == Duration::s(2).count_ns());
  CHECK(of(r, Ev::Resumed, "client1").size() == 1);
  bool client1_held = false, client2_held = false;
  for (const TraceEvent* e : of(r, Ev::Command, "redis1")) {
    client1_held |= e->owner == client1;
    client2_held |= e->owner == client2;
  }
  CHECK(client1_held);
  CHECK(client2_held);
  const auto expired = of(r, Ev::Expired, "redis1");
  REQUIRE(!expired.empty());
  CHECK(expired[0]->owner == client1);
  // Each message to and from the node has one id on both sides: the client's
  // (the proxy's tap) and the node's (the observer), as the simulator's.
  std::map<std::int64_t, const TraceEvent*> sent;
  const ProcId node = *t.find("redis1");
  for (const TraceEvent& e : t.events())
    if (e.kind == Ev::Sent) sent[e.value] = &e;
  int paired = 0;
  for (const TraceEvent& e : t.events()) {
    const bool client_hears_node = e.kind == Ev::Delivered && e.peer == node;
    const bool node_hears_client = e.kind == Ev::Delivered && e.process == node;
    if (!client_hears_node && !node_hears_client) continue;
    REQUIRE(sent.count(e.value));
    CHECK(sent[e.value]->process == e.peer);
    CHECK(sent[e.value]->peer == e.process);
    ++paired;
  }
  CHECK(paired >= 8);  // two acquires, two releases, each way
  const auto writes = of(r, Ev::StorageWrite, "storage");
  REQUIRE(writes.size() == 2);
  CHECK(writes[0]->peer == client2);
  CHECK(writes[1]->peer == client1);
  CHECK(writes[1]->value == 1);  // what client1 read before its pause, + 1
}

RunResult run_text(const std::string& text) {
  const Scenario s = parse_scenario(text, "external.toml");
  LiveOptions o;
  o.details = true;
  return run_live(s, o);
}

// `locksim live` on `text`, with extra environment; its exit status and stderr.
struct LiveOutcome {
  int status;
  std::string err;
};
LiveOutcome locksim_live(const TempDir& dir, const std::string& text, const std::string& env = "") {
  const fs::path file = dir.path() / "scenario.toml";
  std::ofstream(file) << text;
  const auto r = locksim::testing::run_command(env + " " + LOCKSIM_BINARY + " live " + file.string() + " 2>" +
                                               (dir.path() / "stderr").string() + " >/dev/null");
  std::ifstream in(dir.path() / "stderr");
  return {r.status, std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>())};
}

// An adapters folder whose redis-py adapter is `program` (Python, with the real common module).
void fake_python_adapter(const TempDir& dir, const std::string& program) {
  fs::create_directories(dir.path() / "adapters" / "redis-py");
  fs::copy(fs::path(LOCKSIM_SOURCE_DIR) / "adapters" / "common", dir.path() / "adapters" / "common");
  std::ofstream(dir.path() / "adapters" / "redis-py" / "adapter.py") << program;
}

// No process is left whose command line names `needle`.
bool none_running(const std::string& needle) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmd.find(needle) != std::string::npos && std::stoi(pid) != ::getpid() && process_alive(std::stoi(pid))) return false;
  }
  return true;
}

// Whether `pid` descends from this test process: a test that ran an adapter
// in this process asks only about its own, since another test running beside
// it (ctest -j2) may run the same adapter at the same moment.
bool descends_from_us(int pid) {
  for (int p = pid, hops = 0; p > 1 && hops < 64; ++hops) {
    std::ifstream in("/proc/" + std::to_string(p) + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto name_end = stat.rfind(')');  // the command name may hold spaces and parentheses
    if (name_end == std::string::npos) return false;
    std::istringstream rest(stat.substr(name_end + 1));
    char state = 0;
    int parent = 0;
    rest >> state >> parent;
    if (parent == ::getpid()) return true;
    p = parent;
  }
  return false;
}

// No process of this test's own whose command line holds `needle` is left.
bool none_of_ours_running(const std::string& needle) {
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string pid = e.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const int p = std::stoi(pid);
    if (cmd.find(needle) != std::string::npos && p != ::getpid() && process_alive(p) && descends_from_us(p)) return false;
  }
  return true;
}

// `err` names a client and says `rest` of it: both clients run the same
// broken adapter, and whichever breaks first is the one named.
bool names_a_client(const std::string& err, const std::string& rest) {
  return err.find("client1: " + rest) != std::string::npos || err.find("client2: " + rest) != std::string::npos;
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

}  // namespace

TEST_CASE("redis-py, a real Python client, paused past its TTL at its read overlaps and loses an update") {
  const auto began = std::chrono::steady_clock::now();
  const RunResult r = run_text(paused_past_ttl("redis-py@4.3.4"));
  // It ended once both jobs were done (about 2.5 s in), not at its 20 s.
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(15));
  check_paused_run(r);
  // Its release found the key another's: LockNotOwnedError.
  const auto failed = of(r, Ev::ReleaseFailed, "client1");
  REQUIRE(failed.size() == 1);
  CHECK(failed[0]->detail.find("LockNotOwnedError") != std::string::npos);
}

// The scenario file's text (scenarios/matrix/<library>/<attack>.toml).
std::string matrix_cell(const std::string& library, const std::string& attack) {
  std::ifstream in(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios" / "matrix" / library / (attack + ".toml"));
  REQUIRE(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_CASE("kazoo, a real Python client of a real ZooKeeper, paused past its session writes before LOST: overlap, stale write, lost update") {
  const auto began = std::chrono::steady_clock::now();
  const RunResult r = run_text(matrix_cell("kazoo@2.8.0", "pause-no-check"));
  // It ended once both jobs were done (about 10.5 s in), not at its 20 s.
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(60));
  CHECK(r.verdict == kAll);
  const Trace& t = r.world->trace();
  const ProcId client1 = *t.find("client1"), client2 = *t.find("client2");
  // The server's side, from the run's watcher and the proxies' packets: who
  // held (client1's node, then client2's once client1's session expired at a
  // tick past its 4 s), and why each node went.
  const auto holders = of(r, Ev::Holder, "zk1");
  REQUIRE(holders.size() >= 2);
  CHECK(holders[0]->owner == client1);
  CHECK(holders[1]->owner == client2);
  const auto expired = of(r, Ev::Expired, "zk1");
  REQUIRE(expired.size() == 1);
  CHECK(expired[0]->owner == client1);
  CHECK(expired[0]->at >= Instant::zero() + Duration::s(4));
  CHECK(expired[0]->at < holders[1]->at + Duration::ms(1));
  const auto deleted = of(r, Ev::KeyDeleted, "zk1");
  REQUIRE(deleted.size() == 1);  // client2's release; client1's delete found NONODE
  CHECK(deleted[0]->owner == client2);
  CHECK(deleted[0]->peer == client2);
  bool created[2] = {false, false};
  for (const TraceEvent* e : of(r, Ev::Command, "zk1"))
    if (e->detail.rfind("create /locks/lock/", 0) == 0 && e->detail.find("__lock__ EPHEMERAL_SEQUENTIAL -> zxid") != std::string::npos)
      created[e->peer == client1 ? 0 : 1] = true;
  CHECK(created[0]);
  CHECK(created[1]);
  // Each packet between a client and zk1 is a message with one id at both
  // ends (its proxy's tap), as the simulator's network tells them.
  std::map<std::int64_t, const TraceEvent*> sent;
  const ProcId zk1 = *t.find("zk1");
  for (const TraceEvent& e : t.events())
    if (e.kind == Ev::Sent) sent[e.value] = &e;
  int to_zk1 = 0, from_zk1 = 0;
  for (const TraceEvent& e : t.events()) {
    if (e.kind != Ev::Delivered || (e.process != zk1 && e.peer != zk1)) continue;
    REQUIRE(sent.count(e.value));
    CHECK(sent[e.value]->process == e.peer);
    CHECK(sent[e.value]->peer == e.process);
    CHECK(sent[e.value]->detail == e.detail);
    ++(e.process == zk1 ? to_zk1 : from_zk1);
  }
  CHECK(to_zk1 >= 10);  // each client's exists, create, getChildren, ...
  CHECK(from_zk1 >= 10);
  // kazoo's own: client1 writes after its pause, before LOST tells it the
  // session is gone (the reconnect is refused only after a retry's sleep).
  const auto writes = of(r, Ev::StorageWrite, "storage");
  REQUIRE(writes.size() == 2);
  CHECK(writes[0]->peer == client2);
  CHECK(writes[1]->peer == client1);
  const TraceEvent* lost = nullptr;
  for (const TraceEvent* e : of(r, Ev::Notified, "client1"))
    if (e->value == static_cast<std::int64_t>(LibrarySignal::SessionLost)) lost = e;
  REQUIRE(lost != nullptr);
  CHECK(writes[1]->at < lost->at);
  CHECK(of(r, Ev::Acquired, "client1")[0]->detail == "zk1");
  CHECK(none_of_ours_running("adapters/kazoo"));
}

TEST_CASE("python-etcd3, a real Python client of a real etcd, paused past its lease: its key expires, client2's is held, client1 writes late") {
  const auto began = std::chrono::steady_clock::now();
  const RunResult r = run_text(matrix_cell("python-etcd3@0.12.0", "pause-no-check"));
  // It ended once both jobs were done (about 4.2 s in), not at its 20 s.
  CHECK(std::chrono::steady_clock::now() - began < std::chrono::seconds(30));
  CHECK(r.verdict == kAll);
  const Trace& t = r.world->trace();
  const ProcId client1 = *t.find("client1"), client2 = *t.find("client2");
  // The server's side, from the run's watch and the proxies' gRPC bytes:
  // client1's key held (its lease, named by its own Txn), expired with its
  // 2 s lease, client2's held then; client2's release a client's delete.
  std::vector<const TraceEvent*> holders;
  for (const TraceEvent* e : of(r, Ev::Holder, "etcd1"))
    if (e->owner != kNoProc) holders.push_back(e);
  REQUIRE(holders.size() == 2);
  CHECK(holders[0]->owner == client1);
  CHECK(holders[1]->owner == client2);
  const auto expired = of(r, Ev::Expired, "etcd1");
  REQUIRE(expired.size() == 1);
  CHECK(expired[0]->owner == client1);
  CHECK(expired[0]->key == "/locks/lock");
  CHECK(expired[0]->at >= Instant::zero() + Duration::s(2));
  CHECK(expired[0]->at < holders[1]->at);
  const auto deleted = of(r, Ev::KeyDeleted, "etcd1");
  REQUIRE(deleted.size() == 1);  // client2's release; client1's found the key gone
  CHECK(deleted[0]->owner == client2);
  CHECK(deleted[0]->peer == client2);
  // The Txns as etcd1 answered them: client2's puts failed while client1's
  // key stood, client1's late delete failed.
  int client2_refused = 0;
  bool client1_delete_failed = false;
  for (const TraceEvent* e : of(r, Ev::Command, "etcd1")) {
    if (e->peer == client2 && e->detail.rfind("txn: put /locks/lock lease ", 0) == 0 && e->detail.ends_with("-> failed")) {
      CHECK(e->at < expired[0]->at + Duration::ms(200));
      ++client2_refused;
    }
    if (e->peer == client1 && e->detail == "txn: delete /locks/lock -> failed") client1_delete_failed = true;
  }
  CHECK(client2_refused >= 5);  // polled every 100 ms from 0.5 s until about 2 s
  CHECK(client1_delete_failed);
  const auto writes = of(r, Ev::StorageWrite, "storage");
  REQUIRE(writes.size() == 2);
  CHECK(writes[0]->peer == client2);
  CHECK(writes[1]->peer == client1);
  CHECK(of(r, Ev::Acquired, "client1")[0]->detail == "etcd1");
  CHECK(none_of_ours_running("adapters/python-etcd3"));
}

TEST_CASE("python-etcd3's refresh() reaches etcd, then a pause stops its thread: the key expires, and is not taken for the client's delete") {
  // refresh() is a LeaseKeepAlive stream of one request that the client
  // closes, as etcd3 for Node's revoke reads: python-etcd3 releases by a
  // Txn's delete, so such a stream is no revoke of its.
  const RunResult r = run_text(R"(title = "python-etcd3: refreshed, then paused past its lease"
source = "tests/external_live_test.cpp"
about = "client1's thread refreshes its 2 s lease at 0.5 s and 1 s; client1 is paused at 1.2 s for 4 s."
seed = 1
duration = "20s"

[lock]
library = "python-etcd3@0.12.0"
lease_ttl = "2s"
refresh_interval = "500ms"

[[node]]
name = "etcd1"

[[client]]
name = "client1"
work = "1500ms"

[[client]]
name = "client2"
start = "1300ms"
work = "300ms"

[[fault]]
at = "1200ms"
kind = "pause"
target = "client1"
duration = "4s"
)");
  const Trace& t = r.world->trace();
  const ProcId client1 = *t.find("client1"), client2 = *t.find("client2");
  const auto expired = of(r, Ev::Expired, "etcd1");
  REQUIRE(expired.size() == 1);
  CHECK(expired[0]->owner == client1);
  // Refreshed at 1 s, the lease lasts to 3 s at least.
  CHECK(expired[0]->at > Instant::zero() + Duration::ms(2900));
  const auto deleted = of(r, Ev::KeyDeleted, "etcd1");
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0]->peer == client2);
  CHECK(r.verdict == kAll);
}

TEST_CASE("etcd3 for Node, a real Node client of a real etcd, paused past its lease: its release is a revoke, told from the expiry") {
  const RunResult r = run_text(matrix_cell("etcd3-node@1.1.2", "pause-no-check"));
  CHECK(r.verdict == kAll);
  const Trace& t = r.world->trace();
  const ProcId client1 = *t.find("client1"), client2 = *t.find("client2");
  // client1's keepalives stop with it: its key goes with its lease; client2
  // releases by revoking its lease, a client's delete.
  const auto expired = of(r, Ev::Expired, "etcd1");
  REQUIRE(expired.size() == 1);
  CHECK(expired[0]->owner == client1);
  CHECK(expired[0]->key == "lock");
  const auto deleted = of(r, Ev::KeyDeleted, "etcd1");
  REQUIRE(deleted.size() == 1);
  CHECK(deleted[0]->owner == client2);
  CHECK(deleted[0]->peer == client2);
  std::vector<const TraceEvent*> holders;
  for (const TraceEvent* e : of(r, Ev::Holder, "etcd1"))
    if (e->owner != kNoProc) holders.push_back(e);
  REQUIRE(holders.size() == 2);
  CHECK(holders[0]->owner == client1);
  CHECK(holders[1]->owner == client2);
  CHECK(none_of_ours_running("adapters/etcd3-node"));
}

TEST_CASE("node-redlock 4.2.0, a real Node client, paused past its TTL at its read overlaps and loses an update") {
  const RunResult r = run_text(paused_past_ttl("node-redlock@4.2.0"));
  check_paused_run(r);
  CHECK(of(r, Ev::ReleaseFailed, "client1").size() == 1);  // unlock() found no key of its value: LockError
}

TEST_CASE("a library that is not installed stops the run with one line naming the client and what to do") {
  TempDir dir;
  fs::create_directories(dir.path() / "adapters" / "node-redlock-4");
  fs::copy(fs::path(LOCKSIM_SOURCE_DIR) / "adapters" / "common", dir.path() / "adapters" / "common");
  fs::copy_file(fs::path(LOCKSIM_SOURCE_DIR) / "adapters" / "node-redlock-4" / "adapter.js",
                dir.path() / "adapters" / "node-redlock-4" / "adapter.js");  // no node_modules
  const LiveOutcome o = locksim_live(dir, paused_past_ttl("node-redlock@4.2.0"), "LOCKSIM_ADAPTERS=" + (dir.path() / "adapters").string());
  INFO(o.err);
  CHECK(o.status == 2);
  CHECK(lines(o.err) == 1);
  CHECK(names_a_client(o.err, "node-redlock@4.2.0 is not installed"));
  CHECK(o.err.find("cannot load redlock") != std::string::npos);
  CHECK(o.err.find("run scripts/install-deps") != std::string::npos);
  CHECK(none_running(dir.path().string()));
}

TEST_CASE("an adapter that dies during its job stops the run with one line naming the client and how it ended") {
  TempDir dir;
  fake_python_adapter(dir, R"(import json, sys
print(json.dumps({"ev": "hello", "library": "redis", "version": "4.3.4"}), flush=True)
sys.stdin.readline()
print("Traceback: something broke", file=sys.stderr)
sys.exit(3)
)");
  const LiveOutcome o = locksim_live(dir, paused_past_ttl("redis-py@4.3.4"), "LOCKSIM_ADAPTERS=" + (dir.path() / "adapters").string());
  INFO(o.err);
  CHECK(o.status == 2);
  CHECK(lines(o.err) == 1);
  CHECK(names_a_client(o.err, "the redis-py@4.3.4 adapter exited with status 3 during its job (Traceback: something broke)"));
  CHECK(none_running(dir.path().string()));
}

TEST_CASE("an adapter that prints a line that is not the protocol stops the run with one line saying so") {
  TempDir dir;
  fake_python_adapter(dir, R"(import json, sys, time
print(json.dumps({"ev": "hello", "library": "redis", "version": "4.3.4"}), flush=True)
sys.stdin.readline()
print("acquired the lock!", flush=True)
time.sleep(60)
)");
  const LiveOutcome o = locksim_live(dir, paused_past_ttl("redis-py@4.3.4"), "LOCKSIM_ADAPTERS=" + (dir.path() / "adapters").string());
  INFO(o.err);
  CHECK(o.status == 2);
  CHECK(lines(o.err) == 1);
  CHECK(names_a_client(o.err, "the redis-py@4.3.4 adapter broke the protocol on its stdout: not a JSON object: 'acquired the lock!'"));
  CHECK(none_running(dir.path().string()));  // the sleeping adapter was killed
}

TEST_CASE("an adapter that loads another version of its library is refused, naming both") {
  TempDir dir;
  fake_python_adapter(dir, R"(import json, sys
print(json.dumps({"ev": "hello", "library": "redis", "version": "4.5.1"}), flush=True)
sys.stdin.readline()
)");
  const LiveOutcome o = locksim_live(dir, paused_past_ttl("redis-py@4.3.4"), "LOCKSIM_ADAPTERS=" + (dir.path() / "adapters").string());
  INFO(o.err);
  CHECK(o.status == 2);
  CHECK(lines(o.err) == 1);
  CHECK(names_a_client(o.err, "the redis-py@4.3.4 adapter loaded redis 4.5.1, not 4.3.4: run scripts/install-deps"));
}

TEST_CASE("a server that does not start stops the run with one line naming it and what to do") {
  TempDir dir;
  fs::create_directories(dir.path() / "bin");
  for (const char* name : {"redis-server", "redis-sentinel"}) {
    const fs::path p = dir.path() / "bin" / name;
    std::ofstream(p) << "#!/bin/sh\necho 'FATAL CONFIG FILE ERROR' >&2\nexit 1\n";
    fs::permissions(p, fs::perms::owner_all);
  }
  // The real redis-py adapter, from a folder of this test's own: a process
  // left behind would name it (other tests' adapters run meanwhile under ctest -j).
  fs::create_directories(dir.path() / "adapters" / "redis-py");
  fs::copy(fs::path(LOCKSIM_SOURCE_DIR) / "adapters" / "common", dir.path() / "adapters" / "common");
  fs::copy_file(fs::path(LOCKSIM_SOURCE_DIR) / "adapters" / "redis-py" / "adapter.py",
                dir.path() / "adapters" / "redis-py" / "adapter.py");
  const LiveOutcome o = locksim_live(dir, paused_past_ttl("redis-py@4.3.4"),
                                     "LOCKSIM_ADAPTERS=" + (dir.path() / "adapters").string() + " PATH=" +
                                         (dir.path() / "bin").string() + ":$PATH");
  INFO(o.err);
  CHECK(o.status == 2);
  CHECK(lines(o.err) == 1);
  CHECK(o.err.find("redis1 exited with status 1 before it answered") != std::string::npos);
  CHECK(o.err.find("--keep") != std::string::npos);
  CHECK(none_running(dir.path().string()));
}

TEST_CASE("a SIGKILLed locksim live leaves no adapter and no redis-server behind, a stopped adapter included") {
  TempDir dir;
  const fs::path file = dir.path() / "paused.toml";
  std::ofstream(file) << paused_past_ttl("redis-py@4.3.4", "30s");
  Child locksim(LOCKSIM_BINARY, {"live", file.string()});
  // Its redis-server and its two adapters, client1's stopped at its read.
  std::vector<pid_t> started;
  const bool stopped = eventually(
      [&] {
        started.clear();
        std::ifstream in("/proc/" + std::to_string(locksim.pid()) + "/task/" + std::to_string(locksim.pid()) + "/children");
        for (pid_t c; in >> c;) started.push_back(c);
        return started.size() == 3 &&
               std::any_of(started.begin(), started.end(), [](pid_t p) { return process_state(p) == 'T'; });
      },
      Duration::s(30));
  REQUIRE_MESSAGE(stopped, "locksim never had a redis-server and two adapters, one stopped");
  locksim.kill(SIGKILL);
  locksim.wait();
  const bool gone = eventually([&] { return std::none_of(started.begin(), started.end(), process_alive); }, Duration::s(5));
  for (pid_t p : started)
    if (process_alive(p)) ::kill(p, SIGKILL);  // never left behind, even when the test fails
  CHECK(gone);
}

TEST_CASE("a crashed external client is killed, the others go on, and the run ends once they are done") {
  std::string text = paused_past_ttl("redis-py@4.3.4");
  auto swap = [&](const std::string& from, const std::string& to) {
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
  };
  swap("kind = \"pause\"", "kind = \"crash\"");
  swap("duration = \"2s\"\n", "");
  swap("[\"overlap\", \"stale-write\", \"lost-update\"]", "[]");
  const RunResult r = run_text(text);
  CHECK(r.verdict.empty());
  CHECK(of(r, Ev::Crashed, "client1").size() == 1);
  const auto writes = of(r, Ev::StorageWrite, "storage");
  REQUIRE(writes.size() == 1);
  CHECK(writes[0]->peer == *r.world->trace().find("client2"));
  CHECK(of(r, Ev::JobDone, "client2").size() == 1);
}

TEST_CASE("locksim matrix runs a cell live and simulated, and the real redis-py agrees with its flavour under a pause") {
  TempDir dir;
  const fs::path json_path = dir.path() / "m.json", md_path = dir.path() / "m.md";
  const auto r = locksim::testing::run_command(std::string("cd ") + LOCKSIM_SOURCE_DIR + " && " + LOCKSIM_BINARY +
                                               " matrix scenarios/matrix --library redis-py@4.3.4 --attack pause-no-check --reps 1 --md " +
                                               md_path.string() + " --json " + json_path.string() + " 2>/dev/null >/dev/null");
  CHECK(r.status == 0);
  std::ifstream in(json_path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(text.find("\"library\": \"redis-py@4.3.4\"") != std::string::npos);
  CHECK(text.find("\"attack\": \"pause-no-check\"") != std::string::npos);
  CHECK(text.find("\"agree\": true") != std::string::npos);
  CHECK(text.find("lost-update") != std::string::npos);  // simulated and live alike
  CHECK(fs::exists(md_path));
  CHECK(none_running(dir.path().string()));
}

}  // namespace external_live_test
