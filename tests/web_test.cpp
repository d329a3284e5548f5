// The playground's engine (web/), natively: its answers are the command
// line's, computed by the same code; a slider's move edits the scenario's
// text where the file writes the number and nowhere else. The WebAssembly
// build's own tests (web/test/) check the same answers in Node and Chromium.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/explore.hpp"
#include "reports/explore_output.hpp"
#include "harness/run.hpp"
#include "reports/report.hpp"
#include "tests/support.hpp"
#include "web/api.hpp"
#include "web/numbers.hpp"

namespace web_test {

extern "C" char* locksim_request(const char* request);
extern "C" void locksim_free(char* answer);

using namespace locksim;
using namespace locksim::testing;
using json = nlohmann::ordered_json;

namespace {

const std::string kK1 = "scenarios/kleppmann/gc-pause.toml";

std::string text_of(const std::string& relative) {
  std::ifstream in(std::string(LOCKSIM_SOURCE_DIR) + "/" + relative);
  REQUIRE(in);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// K1 read as the engine reads it: named by its path from the source root,
// as `locksim run` run there names it (tests/support.hpp's catalogue() names
// it by its absolute path).
Scenario k1_native() { return parse_scenario(text_of(kK1), kK1); }

json ask(json request, const web::ProgressSink& progress = {}) { return json::parse(web::answer(request.dump(), progress)); }

json k1(json request) {
  request["toml"] = text_of(kK1);
  request["path"] = kK1;
  return request;
}

// The lines of `b` that are not those of `a`, in order (a changed line counts once).
std::vector<std::string> changed_lines(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::vector<std::string> out;
  for (std::string la, lb; std::getline(sb, lb);) {
    if (!std::getline(sa, la)) la.clear();
    if (la != lb) out.push_back(lb);
  }
  return out;
}

}  // namespace

TEST_CASE("the engine's run of K1 is `locksim run`'s: the trace hash, the text report, the verdict") {
  const RunResult native = run_scenario(k1_native());
  const json a = ask(k1({{"op", "run"}}));
  REQUIRE_FALSE(a.contains("error"));
  CHECK(a["trace_hash"] == native.trace_hash);
  CHECK(a["report"] == text_report(native));
  CHECK(a["verdict"] == json::array({"overlap", "stale-write", "lost-update"}));
  CHECK(a["verdict_words"] == "Verdict: overlap, stale-write, lost-update — as expected");
  CHECK(a["as_expected"] == true);
  CHECK(a["replay"] == "locksim run scenarios/kleppmann/gc-pause.toml --seed 1");
  CHECK(a["svg"].get<std::string>().rfind("<svg", 0) == 0);
  CHECK(a["story"].size() == 17);  // the seventeen lines of the README's story
  CHECK(a["story"][3]["text"] == "client1 is paused for 40s (a stop-the-world pause: nothing in it runs, not even timers)");
  CHECK(a["violations"].size() == 3);
}

TEST_CASE("the engine tells a run in Chinese, and its JSON report is `run --format json`'s") {
  const json a = ask(k1({{"op", "run"}, {"lang", "zh"}, {"json", true}}));
  CHECK(a["verdict_words"].get<std::string>().rfind("判定：", 0) == 0);
  CHECK(a["report"] == text_report(run_scenario(k1_native()), {.lang = Lang::Zh}));
  RunOptions o;
  o.keep_events = 20'000;
  CHECK(a["json"] == json::parse(json_report(run_scenario(k1_native(), o))));
}

TEST_CASE("a bad scenario's error is the loader's, with its line for the editor to mark") {
  std::string text = text_of(kK1);
  text.replace(text.find("duration = \"40s\""), 16, "duration = \"forty seconds\"");
  const json a = ask({{"op", "run"}, {"toml", text}, {"path", kK1}});
  REQUIRE(a.contains("error"));
  CHECK(a["error"]["line"] == 47);
  CHECK(a["error"]["message"].get<std::string>().rfind(kK1 + ":47: ", 0) == 0);
  CHECK(ask({{"op", "fly"}})["error"]["message"] == "\"fly\" is not a request the engine answers");
  CHECK(ask(k1({{"op", "run"}, {"lang", "fr"}}))["error"]["line"].is_null());
}

TEST_CASE("K1's sliders are its TTL and its pause, named as `locksim sweep` names them") {
  const json d = ask(k1({{"op", "describe"}}));
  REQUIRE(d["sliders"].size() == 2);
  CHECK(d["sliders"][0]["parameter"] == "lock.ttl");
  CHECK(d["sliders"][0]["value"] == 30'000'000'000LL);
  CHECK(d["sliders"][0]["line"] == 24);
  CHECK(d["sliders"][1]["parameter"] == "fault[1].duration");
  CHECK(d["sliders"][1]["label"] == "fault[1]: at 1s client1 pauses for 40s");
  CHECK(d["sliders"][1]["value"] == 40'000'000'000LL);
  CHECK(d["catalogue"] == "K1");
  CHECK(d["explore_kinds"].size() >= 3);
  const std::string zh = ask(k1({{"op", "describe"}, {"lang", "zh"}}))["sliders"][1]["label"];
  CHECK(zh.rfind("fault[1]: ", 0) == 0);
  CHECK(zh.find("40s") != std::string::npos);
  CHECK(zh != d["sliders"][1]["label"]);
}

TEST_CASE("a slider's move edits the one value in the text, keeps the rest, and runs as the moved scenario") {
  const std::string before = text_of(kK1);
  const std::string after = web::set_number(before, kK1, "fault[1].duration", 20'000'000'000);
  CHECK(changed_lines(before, after) == std::vector<std::string>{"duration = \"20s\""});
  const json run = ask({{"op", "run"}, {"toml", after}, {"path", kK1}});
  CHECK(run["verdict"] == json::array());  // a 20 s pause ends before the 30 s lease: safe
  CHECK(run["as_expected"] == false);
  // The same move as text, as a link or the value box gives it.
  CHECK(ask(k1({{"op", "set"}, {"parameter", "fault[1].duration"}, {"value", "20s"}}))["toml"] == after);
  CHECK(changed_lines(before, web::set_number(before, kK1, "lock.ttl", 5'000'000'000)) == std::vector<std::string>{"ttl = \"5s\""});
}

TEST_CASE("a move keeps the number's sign and its place in an inline table") {
  const std::string text = R"(title = "t"
source = "s"
about = "a"
duration = "60s"
[lock]
algorithm = "redis-single"
ttl = "10s"
[[node]]
name = "redis1"
clock = { offset = "-2s", drift_ppm = 100 }  # a comment stays
[[client]]
name = "client1"
[[fault]]
at = "1s"
kind = "clock-jump"
target = "redis1"
by = "-20s"
[[fault]]
at = "2s"
kind = "clock-drift"
target = "client1"
drift_ppm = 3
)";
  CHECK(changed_lines(text, web::set_number(text, "x.toml", "fault[1].by", 5'000'000'000)) == std::vector<std::string>{"by = \"-5s\""});
  CHECK(changed_lines(text, web::set_number(text, "x.toml", "node[redis1].offset", -1'500'000'000)) ==
        std::vector<std::string>{"clock = { offset = \"-1.5s\", drift_ppm = 100 }  # a comment stays"});
  CHECK(changed_lines(text, web::set_number(text, "x.toml", "node[1].drift_ppm", 50)) ==
        std::vector<std::string>{"clock = { offset = \"-2s\", drift_ppm = 0.05 }  # a comment stays"});
  CHECK(changed_lines(text, web::set_number(text, "x.toml", "fault[2].drift_ppm", -12'250)) == std::vector<std::string>{"drift_ppm = -12.25"});
  // Its sliders: the TTL, the jump (its size) and the drift.
  const auto sliders = web::sliders(parse_scenario(text, "x.toml"), text);
  REQUIRE(sliders.size() == 3);
  CHECK(sliders[1].parameter == "fault[1].by");
  CHECK(sliders[1].value == 20'000'000'000);
  CHECK(sliders[2].unit == KnobUnit::Ppm);
}

TEST_CASE("a move the loader would refuse, or of a number the file does not write, is refused with the file's words") {
  const std::string text = text_of(kK1);
  CHECK_THROWS_WITH_AS(web::set_number(text, kK1, "fault[1].duration", 0), doctest::Contains("cannot be 0s"), ScenarioError);
  CHECK_NOTHROW(web::set_number(text, kK1, "fault[1].duration", 1));  // its lowest
  CHECK_THROWS_WITH_AS(web::set_number(text, kK1, "client[1].think", 1'000'000'000), doctest::Contains("not written"), ScenarioError);
  CHECK_THROWS_WITH_AS(web::set_number(text, kK1, "fault[2].duration", 1), doctest::Contains("names none"), ScenarioError);
  CHECK_THROWS_AS(web::set_number(text, kK1, "lock.ttl", -5), ScenarioError);
  const json a = ask(k1({{"op", "set"}, {"parameter", "fault[1].duration"}, {"value", "soon"}}));
  CHECK(a["error"]["message"].get<std::string>().find("soon") != std::string::npos);
}

TEST_CASE("the engine's explore is `locksim explore`'s summary, and its progress counts the runs") {
  std::vector<std::uint64_t> done;
  const json a = ask(k1({{"op", "explore"}, {"runs", 200}}),
                     [&](const std::string& p) { done.push_back(json::parse(p)["done"].get<std::uint64_t>()); });
  ExploreOptions o;
  o.runs = 200;
  const Scenario base = k1_native();
  CHECK(a["text"] == explore_text(base, o, explore(base, o)));
  CHECK(a["summary"]["runs"] == 200);
  REQUIRE(done.size() >= 50);
  CHECK(done.back() == 200);
  CHECK(std::is_sorted(done.begin(), done.end()));
}

TEST_CASE("an explored run opens as the scenario that replays it, and shrinks to one that still shows its kind") {
  const json e = ask(k1({{"op", "explore"}, {"runs", 300}, {"faults", {"pause"}}}));
  REQUIRE(e["summary"]["violations"]["overlap"]["runs"].get<int>() > 0);
  const std::uint64_t seed = e["summary"]["violations"]["overlap"]["first"]["seed"];
  const json r = ask(k1({{"op", "replay"}, {"run_seed", seed}, {"faults", {"pause"}}}));
  CHECK(std::find(r["verdict"].begin(), r["verdict"].end(), "overlap") != r["verdict"].end());
  CHECK(r["replay"].get<std::string>().find("--replay " + std::to_string(seed)) != std::string::npos);
  const json again = ask({{"op", "run"}, {"toml", r["toml"]}, {"path", kK1}});
  CHECK(again["trace_hash"] == r["trace_hash"]);  // the written scenario is the run
  int heard = 0;
  const json s = ask(k1({{"op", "shrink"}, {"run_seed", seed}, {"kind", "overlap"}, {"faults", {"pause"}}}),
                     [&](const std::string&) { ++heard; });
  REQUIRE_FALSE(s.contains("error"));
  CHECK(s["trials"].get<int>() >= 1);
  CHECK(heard == s["trials"].get<int>() / 10);
  const json shrunk = ask({{"op", "run"}, {"toml", s["toml"]}, {"path", "found.toml"}});
  CHECK(std::find(shrunk["verdict"].begin(), shrunk["verdict"].end(), "overlap") != shrunk["verdict"].end());
}

TEST_CASE("a sweep of K1's pause is safe below the lease and unsafe above it, each point the slider's run") {
  json values = json::array();
  for (int s = 10; s <= 50; s += 5) values.push_back(std::int64_t{s} * 1'000'000'000);
  const json a = ask(k1({{"op", "sweep"}, {"parameter", "fault[1].duration"}, {"values", values}}));
  REQUIRE(a["cells"].size() == 9);
  CHECK(a["cells"][0]["verdict"] == json::array());       // 10 s
  CHECK(a["cells"][3]["verdict"] == json::array());       // 25 s
  CHECK(a["cells"][8]["verdict"].size() == 3);            // 50 s
}

TEST_CASE("the quiz tells the set-up without the story, and a prediction is scored") {
  const json q = ask(k1({{"op", "quiz"}}));
  CHECK(q["setup"].get<std::string>().find("client1") != std::string::npos);
  CHECK(q["setup"].get<std::string>().find("GC pause") == std::string::npos);
  CHECK(q["kinds"].size() == 5);
  const json right = ask(k1({{"op", "run"}, {"predict", {"overlap", "stale-write", "lost-update"}}}));
  CHECK(right["right"] == true);
  CHECK(right["about"] == "");
  const json wrong = ask(k1({{"op", "run"}, {"predict", json::array()}}));
  CHECK(wrong["right"] == false);
  CHECK(wrong["score"].get<std::string>().find("overlap") != std::string::npos);
}

TEST_CASE("the engine's C door answers JSON and hands back memory to free") {
  char* a = locksim_request(R"({"op": "nothing"})");
  REQUIRE(a != nullptr);
  CHECK(json::parse(a)["error"]["message"] == "\"nothing\" is not a request the engine answers");
  locksim_free(a);
  char* b = locksim_request("not json");
  CHECK(json::parse(b)["error"]["message"].get<std::string>().rfind("the request: ", 0) == 0);
  locksim_free(b);
}

}  // namespace web_test
