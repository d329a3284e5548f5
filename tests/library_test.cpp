// [lock] library = "<id>": a library names the algorithm and the flavour that
// model it (lockalgos/libraries.cpp); a contradiction or an unknown id is an
// error naming the file, the line and the key; a library's own [[client]]
// keys are taken only where [lock] names a library that has them.
#include <doctest/doctest.h>

#include <string>

#include "harness/run.hpp"
#include "harness/scenario_writer.hpp"
#include "lockalgos/libraries.hpp"
#include "lockalgos/redlock.hpp"
#include "tests/command_support.hpp"
#include "tests/support.hpp"

namespace library_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// [lock] on line 6, its keys from line 7; a node, then client1.
std::string library_scenario(const std::string& lock_keys, const std::string& client_keys = "") {
  return "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"10s\"\n\n[lock]\n" + lock_keys +
         "\n\n[[node]]\nname = \"redis1\"\n\n[[client]]\nname = \"client1\"\n" + client_keys;
}

std::string rejection(const std::string& text) {
  try {
    parse_scenario(text, "scenarios/x.toml");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("a library chooses the algorithm and the flavour that model it") {
  for (const LibraryInfo& lib : libraries()) {
    INFO(lib.id);
    const AlgorithmInfo* algo = find_algorithm(lib.algorithm);
    REQUIRE(algo != nullptr);
    // Its flavour is one the algorithm lists.
    if (!lib.flavour.empty()) {
      bool listed = false;
      for (const OptionInfo& f : algo->flavours) listed = listed || f.key == lib.flavour;
      CHECK(listed);
    }
    CHECK(find_library(lib.id) == &lib);
  }
  const Scenario s = parse_scenario(library_scenario("library = \"node-redlock@5.0.0-beta.2\"\nttl = \"2s\""), "x.toml");
  CHECK(s.lock.library == "node-redlock@5.0.0-beta.2");
  CHECK(s.lock.algorithm == "redlock");
  CHECK(s.lock.flavour == "node-redlock-v5");
  CHECK(s.lock.options_as<RedlockOptions>().flavour == RedlockFlavour::NodeRedlockV5);
  // Written back as it was: the writer's text names the library, not what it chose.
  CHECK(to_toml(s).find("library = \"node-redlock@5.0.0-beta.2\"") != std::string::npos);
  CHECK(to_toml(s).find("algorithm =") == std::string::npos);
}

TEST_CASE("an algorithm or a flavour that agrees with the library may be given") {
  const Scenario s = parse_scenario(
      library_scenario("library = \"node-redlock@5.0.0-beta.2\"\nalgorithm = \"redlock\"\nflavour = \"node-redlock-v5\"\nttl = \"2s\""),
      "x.toml");
  CHECK(s.lock.flavour == "node-redlock-v5");
}

TEST_CASE("an algorithm or a flavour that contradicts the library is rejected at its line") {
  std::string m = rejection(library_scenario("library = \"node-redlock@5.0.0-beta.2\"\nalgorithm = \"redis-single\"\nttl = \"2s\""));
  CHECK(m.rfind("scenarios/x.toml:8: [lock] 'algorithm': \"redis-single\" contradicts library = "
                "\"node-redlock@5.0.0-beta.2\", which is algorithm \"redlock\"", 0) == 0);
  m = rejection(library_scenario("library = \"node-redlock@5.0.0-beta.2\"\nttl = \"2s\"\nflavour = \"redsync\""));
  CHECK(m.rfind("scenarios/x.toml:9: [lock] 'flavour': \"redsync\" contradicts library = "
                "\"node-redlock@5.0.0-beta.2\", which is flavour \"node-redlock-v5\" of redlock", 0) == 0);
}

TEST_CASE("an unknown library is rejected with the nearest id and the list") {
  std::string m = rejection(library_scenario("library = \"node-redlok@5.0.0-beta.2\"\nttl = \"2s\""));
  INFO(m);
  CHECK(m.rfind("scenarios/x.toml:7: [lock] 'library': unknown library \"node-redlok@5.0.0-beta.2\" "
                "(did you mean \"node-redlock@5.0.0-beta.2\"?); known: ", 0) == 0);
  CHECK(m.find('\n') == std::string::npos);
  // The name alone, or another version, is the library of that name.
  m = rejection(library_scenario("library = \"node-redlock\"\nttl = \"2s\""));
  CHECK(m.find("(did you mean \"node-redlock@") != std::string::npos);
  // Nothing near: no guess.
  m = rejection(library_scenario("library = \"zzz\"\nttl = \"2s\""));
  CHECK(m.find("did you mean") == std::string::npos);
  CHECK(m.find("unknown library \"zzz\"; known: ") != std::string::npos);
}

TEST_CASE("without a library, algorithm is still required") {
  const std::string m = rejection(library_scenario("ttl = \"2s\""));
  CHECK(m.rfind("scenarios/x.toml:6: [lock] 'algorithm': missing", 0) == 0);
}

TEST_CASE("a library's own client keys are taken only where the lock table names a library that has them") {
  const Scenario s = parse_scenario(
      library_scenario("library = \"node-redlock@5.0.0-beta.2\"\nttl = \"2s\"", "using = true\n"), "x.toml");
  CHECK(s.clients.at(0).library.using_routine);
  CHECK(s.clients.at(0).library.check == LibraryCheck::Aborted);
  const std::string m = rejection(library_scenario("algorithm = \"redlock\"\nttl = \"2s\"", "using = true\n"));
  CHECK(m.rfind("scenarios/x.toml:15: [[client]] 'using': an option of a library scenario ([lock] library = ...; "
                "libraries that take it: node-redlock@5.0.0-beta.2", 0) == 0);
}

TEST_CASE("locksim list names every library, what models it and its options, a bad library is exit 2") {
  const Outcome list = locksim_in_source("list");
  CHECK(list.status == 0);
  for (const LibraryInfo& lib : libraries()) {
    INFO(lib.id);
    CHECK(list.output.find("  " + std::string(lib.id) + " — ") != std::string::npos);
    for (const LibraryOption& o : lib.options) CHECK(list.output.find("[[client]] " + std::string(o.key) + ": ") != std::string::npos);
  }
  ScratchDir dir("locksim-library-test");
  const std::string path = (dir.path() / "bad.toml").string();
  std::ofstream(path) << library_scenario("library = \"kazoo@2.7.0\"");
  const Outcome bad = locksim_in_source("run " + path);
  CHECK(bad.status == 2);
  CHECK(bad.output.find("bad.toml:7: [lock] 'library': unknown library \"kazoo@2.7.0\"") != std::string::npos);
}

TEST_CASE("a misspelt library id gets the nearest id within three edits, and a string far from all gets none") {
  CHECK(nearest_library("kazzo@2.8.0") == "kazoo@2.8.0");       // one letter wrong
  CHECK(nearest_library("redis-py@4.3.5") == "redis-py@4.3.4");  // the name alone means the library
  // Eleven characters, as kazoo@2.8.0, but every one of them different.
  CHECK(nearest_library("zzzzz@9.9.9").empty());
}

}  // namespace library_test
