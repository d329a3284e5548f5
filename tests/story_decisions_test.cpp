// A story tells what a client decided because of what it believed, not only
// what happened to it (issue 38): a write it skipped because it no longer
// believed it held the lock, its tries that did not get the lock and its
// waits between them (folded into one line when many), and a replay marks
// the faults of its schedule that never fired.
#include <doctest/doctest.h>

#include <string>

#include "harness/explore.hpp"
#include "reports/report.hpp"
#include "reports/words.hpp"
#include "tests/command_support.hpp"
#include "tests/support.hpp"

namespace story_decisions_test {

using namespace locksim;
using namespace locksim::testing;

namespace {

// The story as `run` tells it (folded), one line per step.
std::string told(const RunResult& r, bool full = false, Lang lang = Lang::En) {
  return text_report(r, {.full = full, .lang = lang});
}

// The scenario with one line of it replaced.
Scenario changed(const std::string& file, const std::string& from, const std::string& to) {
  std::string text = read_text(std::filesystem::path(LOCKSIM_SOURCE_DIR) / file);
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
  return parse_scenario(text, file);
}

}  // namespace

TEST_CASE("a ZooKeeper client that gave up its lock at SUSPENDED does not write, and the story says so without --full") {
  const RunResult r = run_scenario(catalogue("scenarios/zookeeper/partition-suspended-stop.toml"));
  // The decision is the job's (harness/job.cpp), an event of its own.
  const auto skipped = events_of(r, Ev::WriteSkipped, "client1");
  REQUIRE(skipped.size() == 1);
  CHECK(skipped[0]->value == 1);  // the counter it read, plus one
  CHECK(events_of(r, Ev::Writing, "client1").empty());
  const std::string line = "client1 does not send its write (counter = 1): it no longer believes it holds the lock";
  CHECK(told(r).find(line) != std::string::npos);
  CHECK(told(r, true).find(line) != std::string::npos);
  CHECK(told(r, false, Lang::Zh).find("client1 没有发出写入（counter = 1）：它已不再认为自己持有锁") != std::string::npos);
  // Before it: the step that made it so.
  CHECK(told(r).find("client1 gives up the lock: nothing heard from the ensemble for 6.666s: SUSPENDED") < told(r).find(line));
}

TEST_CASE("a client that wrote as it believed it held the lock has no skipped write") {
  const RunResult r = run_scenario(catalogue("scenarios/zookeeper/partition-suspended-vs-lost.toml"));
  CHECK(events_of(r, Ev::WriteSkipped).empty());
  CHECK(told(r, true).find("does not send its write") == std::string::npos);
}

TEST_CASE("SETNX's waiter: its hundreds of tries are one line, saying whose key held the lock and how long it waited between") {
  const RunResult r = run_scenario(catalogue("scenarios/redis/setnx-no-ttl-crash.toml"));
  const auto tries = events_of(r, Ev::Retrying, "client2");
  REQUIRE(tries.size() > 500);
  CHECK(tries[0]->value == Duration::ms(100).count_ns());
  CHECK(r.world->trace().name(tries[0]->peer) == "redis1");
  const std::string story = told(r);
  CHECK(story.find("0.202s  client2 tries and fails " + std::to_string(tries.size()) + " times, 0.202s–59.974s") != std::string::npos);
  CHECK(story.find(": redis1 holds the lock for client1 each time; it waits 100ms before each next try") != std::string::npos);
  // --full tells each try.
  const std::string full = told(r, true);
  CHECK(full.find("client2's try fails: redis1 holds the lock for client1; client2 tries again in 100ms") != std::string::npos);
  CHECK(full.find("tries and fails") == std::string::npos);
}

TEST_CASE("with a 45 s lease (lab step 1) client2's tries between asking at 31 s and acquiring at 41.1 s are told") {
  const RunResult r = run_scenario(changed("scenarios/kleppmann/gc-pause.toml", "ttl = \"30s\"", "ttl = \"45s\""));
  const std::string story = told(r);
  const auto asks = story.find("31.000s  client2 asks for the lock");
  const auto tries = story.find("client2 tries and fails 99 times, 31.002s–40.998s: redis1 holds the lock for client1 each time; it waits 100ms before each next try");
  const auto acquires = story.find("41.100s  client2 acquires the lock on redis1");
  CHECK(asks != std::string::npos);
  CHECK(tries != std::string::npos);
  CHECK(acquires != std::string::npos);
  CHECK((asks < tries && tries < acquires));
  // Each try is a step of its own with --full: 99, each a wait of 100 ms on its clock.
  CHECK(events_of(r, Ev::Retrying, "client2").size() == 99);
}

TEST_CASE("a try that nobody answers is told as unanswered, each kind of failure counted when they differ") {
  // redis1 is cut off from client2 from the start: every try times out.
  const RunResult cut = run_scenario(changed("scenarios/redis/setnx-no-ttl-crash.toml", "[expect]", R"([[fault]]
at = "150ms"
kind = "partition"
groups = [["client2"], ["redis1"]]

[expect])"));
  CHECK(told(cut).find(": no answer from redis1 each time; it waits 100ms before each next try") != std::string::npos);
  // Cut off half-way: the tries before it find client1's key, those after it
  // get no answer (the answer to a try before is not taken for one after).
  const RunResult half = run_scenario(changed("scenarios/redis/setnx-no-ttl-crash.toml", "[expect]", R"([[fault]]
at = "30s"
kind = "partition"
groups = [["client2"], ["redis1"]]

[expect])"));
  const std::string story = told(half);
  INFO(story);
  const auto held = story.find("client2 tries and fails 293 times, 0.202s–29.986s: redis1 holds the lock for client1 each time");
  const auto unanswered = story.find("client2 tries and fails 14 times, 30.086s–59.486s: no answer from redis1 each time; it waits 100ms "
                                     "before each next try; the network loses 15 of its messages (partition), to redis1");
  CHECK(held != std::string::npos);
  CHECK(unanswered != std::string::npos);
  CHECK(held < unanswered);
}

TEST_CASE("tries that failed for different reasons in one loop are counted by reason") {
  // Steps of the loop made by hand: a Retrying with its outcome, as narrate gives them.
  Trace t;
  const ProcId c = t.add_process("client2", ProcessRole::Client), n = t.add_process("redis1", ProcessRole::LockNode),
               h = t.add_process("client1", ProcessRole::Client);
  for (int i = 0; i < 5; ++i) {
    TraceEvent e;
    e.at = Instant::zero() + Duration::ms(100 * i);
    e.process = c;
    e.kind = Ev::Retrying;
    e.peer = n;
    e.value = Duration::ms(100).count_ns();
    t.record(std::move(e));
  }
  std::vector<Step> steps;
  for (std::size_t i = 0; i < t.events().size(); ++i) {
    TryOutcome o = i < 3 ? TryOutcome{TryOutcome::Why::Held, h} : TryOutcome{TryOutcome::Why::NoAnswer, kNoProc};
    steps.push_back({t.events()[i].at, "a try", &t.events()[i], o});
  }
  const StoryClock clock({steps.front().at, steps.back().at});
  const auto lines = fold_story(t, steps, {}, clock);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].text == "client2 tries and fails 5 times, 0ms–400ms: redis1 holds the lock for client1 3 times and no answer from redis1 2 times; "
                         "it waits 100ms before each next try");
}

TEST_CASE("a replay marks the faults of its schedule that never fired, and says why") {
  // Run 11 of gc-pause-fenced under pause and clock-jump faults: client1 is
  // paused on its read, its late write is refused, so "client1 wrote" never comes.
  ExploreOptions o;
  o.kinds = {FaultKind::Pause, FaultKind::ClockJump};
  const Scenario base = catalogue("scenarios/kleppmann/gc-pause-fenced.toml");
  const Scenario s = with_random_faults(base, 7438447578175319763ULL, o);
  const RunResult r = run_scenario(s);
  REQUIRE(s.faults.size() == 2);
  REQUIRE(r.faults.size() == 2);
  CHECK(r.faults[0].applied);
  CHECK_FALSE(r.faults[1].applied);
  CHECK(r.faults[1].seen == 0);
  CHECK(fault_listing(Lang::En, s.faults[0], r.faults[0], s.duration) == say(Lang::En, describe_fault(s.faults[0])));
  CHECK(fault_listing(Lang::En, s.faults[1], r.faults[1], s.duration) ==
        say(Lang::En, describe_fault(s.faults[1])) + " — never fired: 'client1 wrote' never happened");
  CHECK(fault_listing(Lang::Zh, s.faults[1], r.faults[1], s.duration).find("——从未触发：client1 从未出现“wrote”事件") != std::string::npos);
  const auto o2 = locksim_in_source("explore scenarios/kleppmann/gc-pause-fenced.toml --replay 7438447578175319763 --faults pause,clock-jump");
  CHECK(o2.output.find(" — never fired: 'client1 wrote' never happened\n") != std::string::npos);
}

TEST_CASE("a fault that never fired says whether its event came too few times or its time lay past the run's end") {
  FaultSpec on;
  on.kind = FaultKind::Crash;
  on.target = "client1";
  on.on_process = "client1";
  on.on_event = "acquired";
  on.on_occurrence = 3;
  CHECK(fault_listing(Lang::En, on, {.applied = false, .seen = 2}, Duration::s(60)).find(
            "never fired: 'client1 acquired' happened only 2 times, not 3") != std::string::npos);
  // Its event came the third time, but the run ended before the fault's `after`.
  CHECK(fault_listing(Lang::En, on, {.applied = false, .seen = 3}, Duration::s(60)).find("never fired: it was due after the run ended at 60s") !=
        std::string::npos);
  CHECK(fault_listing(Lang::En, on, {.applied = true, .seen = 3}, Duration::s(60)).find("never fired") == std::string::npos);
  FaultSpec at = on;
  at.at = Duration::s(90);
  CHECK(fault_listing(Lang::En, at, {.applied = false}, Duration::s(60)).find("never fired: it was due after the run ended at 60s") !=
        std::string::npos);
}

}  // namespace story_decisions_test
