// `locksim new`: a starting scenario for every algorithm of the registry,
// valid as written and with its commented-out parts valid when uncommented.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "harness/run.hpp"
#include "lockalgos/registry.hpp"
#include "sim/servers/table.hpp"
#include "tests/command_support.hpp"

namespace new_test {

namespace fs = std::filesystem;
using namespace locksim;
using locksim::testing::locksim_in_source;
using locksim::testing::read_text;

namespace {

fs::path scratch(const std::string& name) {
  static const locksim::testing::ScratchDir dir("locksim-new-test");
  return dir.path() / name;
}

// The text with every line matching `commented` uncommented ("# " removed).
std::string uncomment(const std::string& text, const std::regex& commented) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out += (std::regex_search(line, commented) ? line.substr(2) : line) + "\n";
  return out;
}

// The text with the lines that begin with `prefix` uncommented.
std::string uncomment_prefix(const std::string& text, const std::string& prefix) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += (line.rfind(prefix, 0) == 0 ? line.substr(2) : line) + "\n";
  return out;
}

}  // namespace

TEST_CASE("new writes, for every algorithm, a scenario that loads and runs with no violation") {
  for (const AlgorithmInfo& a : algorithms()) {
    const std::string name(a.name);
    INFO(name);
    const fs::path file = scratch(name + ".toml");
    fs::remove(file);
    const auto written = locksim_in_source("new " + name + " -o " + file.string());
    CHECK(written.status == 0);
    const Scenario s = load_scenario(file.string());
    CHECK(s.lock.algorithm == name);
    CHECK(s.clients.size() == 2);
    // Redlock's five independent masters, a MultiLock over three, one node for the rest.
    CHECK(s.nodes.size() == (name == "redlock" ? 5u : name == "multilock" ? 3u : 1u));
    // Its nodes named as people name the service's hosts (ServerModel::node_prefix).
    static const std::map<std::string, std::string> host = {
        {"redis", "redis"}, {"zookeeper", "zk"}, {"etcd", "etcd"}, {"chubby", "chubby"}, {"consul", "consul"}};
    REQUIRE(host.count(std::string(server_model(a.server).name)) == 1);
    for (const NodeConfig& n : s.nodes) CHECK(n.name.rfind(host.at(std::string(server_model(a.server).name)), 0) == 0);
    const RunResult r = run_scenario(s);
    CHECK(r.verdict.empty());
    CHECK(r.stats.acquisitions == 2);
    CHECK(locksim_in_source("run " + file.string()).status == 0);
    // To stdout, the same text.
    CHECK(locksim_in_source("new " + name).output == read_text(file));
  }
}

TEST_CASE("new lists the algorithm's options with their defaults and its flavours, from the registry's help") {
  for (const AlgorithmInfo& a : algorithms()) {
    INFO(a.name);
    const std::string text = locksim_in_source("new " + std::string(a.name)).output;
    for (const OptionInfo& o : a.options) {
      INFO(o.key);
      CHECK(text.find("#   " + std::string(o.key) + " ") != std::string::npos);
      CHECK(text.find(std::string(o.help)) != std::string::npos);
    }
    for (const OptionInfo& f : a.flavours) CHECK(text.find("# flavour = \"" + std::string(f.key) + "\"") != std::string::npos);
    CHECK(text.find(std::string(a.help)) != std::string::npos);
  }
}

TEST_CASE("the commented-out fault, fencing and flavour lines of a new scenario are valid when uncommented") {
  const std::regex fault(R"(^# (\[\[fault\]\]|at = |kind = |target = |duration = ))");
  const std::regex expect(R"(^# (\[expect\]|violations = ))");
  const std::regex flavour(R"(^# flavour = )");
  for (const AlgorithmInfo& a : algorithms()) {
    const std::string name(a.name);
    INFO(name);
    const std::string text = locksim_in_source("new " + name).output;
    // The pause: a run with it loads and is judged (the verdict is the student's to predict).
    const Scenario paused = parse_scenario(uncomment(text, fault), name + "+fault");
    REQUIRE(paused.faults.size() == 1);
    CHECK(paused.faults[0].kind == FaultKind::Pause);
    const Scenario expecting = parse_scenario(uncomment(uncomment(text, fault), expect), name + "+expect");
    CHECK(expecting.expect.present);
    CHECK(run_scenario(paused).stats.events > 0);
    // Each fencing this algorithm offers, and each flavour, one at a time.
    std::vector<std::string> variants;
    if (a.monotonic_token) variants.push_back("fencing = \"token\"");
    variants.push_back("fencing = \"lock-value\"");
    for (const OptionInfo& f : a.flavours) variants.push_back("flavour = \"" + std::string(f.key) + "\"");
    for (const std::string& v : variants) {
      INFO(v);
      const std::string one = uncomment_prefix(text, "# " + v);
      REQUIRE(one != text);
      CHECK_NOTHROW(parse_scenario(one, name + "+" + v));
    }
    if (!a.monotonic_token) CHECK(text.find("fencing = \"token\" is refused") != std::string::npos);
  }
}

TEST_CASE("new refuses an unknown algorithm and an existing file, exit 2") {
  const auto unknown = locksim_in_source("new redlok");
  CHECK(unknown.status == 2);
  CHECK(unknown.output.find("\"redlok\" is not an algorithm") != std::string::npos);
  CHECK(unknown.output.find("redlock") != std::string::npos);

  const fs::path file = scratch("exists.toml");
  { std::ofstream(file) << "mine\n"; }
  const auto clobber = locksim_in_source("new redis-single -o " + file.string());
  CHECK(clobber.status == 2);
  CHECK(clobber.output.find("not overwritten") != std::string::npos);
  CHECK(read_text(file) == "mine\n");
}

TEST_CASE("new without an algorithm starts from redis-single") {
  const auto o = locksim_in_source("new");
  CHECK(o.status == 0);
  CHECK(o.output.find("algorithm = \"redis-single\"") != std::string::npos);
}

TEST_CASE("a grant is a client's entry on every node for MultiLock, on a majority for Redlock and RedlockMutex, on its one node otherwise") {
  // RedissonMultiLock.tryLock needs every RLock; Redlock, N/2 + 1 masters.
  // The judge takes an acquire with fewer as the client's belief.
  CHECK(grant_quorum(*find_algorithm("multilock"), 3) == 3);
  CHECK(grant_quorum(*find_algorithm("redlock"), 5) == 3);
  CHECK(grant_quorum(*find_algorithm("redlock"), 4) == 3);
  CHECK(grant_quorum(*find_algorithm("redis-single"), 1) == 1);
  // redis-semaphore's RedlockMutex: Math.round((n + 1) / 2) of its nodes (2 of 3).
  CHECK(grant_quorum(*find_algorithm("redis-semaphore"), 3) == 2);
}

}  // namespace new_test
