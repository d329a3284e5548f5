// A run judged as it goes: the streaming judges agree with the whole-trace
// checkers, the hash does not depend on what is kept, a long run keeps nothing
// it does not need, and the benchmark workload is the one the peers run.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/explore.hpp"
#include "harness/faults/kind.hpp"
#include "harness/scenario_writer.hpp"
#include "support.hpp"

namespace streaming_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {

std::vector<fs::path> catalogue_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios"))
    if (e.path().extension() == ".toml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

// The benchmark workload, shortened.
Scenario bench(const std::string& duration) {
  std::ifstream in(fs::path(LOCKSIM_SOURCE_DIR) / "bench" / "redlock-contention.toml");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const std::string hour = "\nduration = \"3600s\"";
  REQUIRE(s.find(hour) != std::string::npos);
  s.replace(s.find(hour), hour.size(), "\nduration = \"" + duration + "\"");
  return parse_scenario(s, "bench/redlock-contention.toml");
}

}  // namespace

TEST_CASE("the streaming judges find what the whole-trace checkers find, on every catalogue scenario") {
  for (const fs::path& file : catalogue_files()) {
    INFO(file.string());
    const Scenario s = load_scenario(file.string());
    const RunResult r = run_scenario(s);
    CheckOptions o;
    o.run_end = r.world->now();
    o.ttl = s.lock.ttl;
    o.liveness_window = s.expect.liveness_window;
    const std::vector<Violation> whole = check_trace(r.world->trace(), o);
    REQUIRE(whole.size() == r.violations.size());
    for (std::size_t i = 0; i < whole.size(); ++i) {
      CHECK(whole[i].kind == r.violations[i].kind);
      CHECK(whole[i].at == r.violations[i].at);
      CHECK(whole[i].until == r.violations[i].until);
      CHECK(whole[i].processes == r.violations[i].processes);
      CHECK(whole[i].detail == r.violations[i].detail);
    }
  }
}

namespace {
// Each checker alone, shown every event of a kept trace (check_overlap and
// the rest), and merged as Judge::finish merges them; against the run's own
// verdict, which the streaming judge gave showing each checker only the
// kinds it reads (Judge::kReads) and the run's listener skipping the rest.
void same_as_each_checker_alone(const RunResult& r) {
  const Scenario& s = *r.scenario;
  CheckOptions o;
  o.run_end = r.world->now();
  o.ttl = s.lock.ttl;
  o.liveness_window = s.expect.liveness_window;
  const Trace& t = r.world->trace();
  REQUIRE(t.complete());
  std::vector<Violation> alone;
  for (auto found : {check_overlap(t, o), check_stale_write(t, o), check_lost_update(t, o),
                     check_foreign_release(t, o), check_stuck(t, o)})
    alone.insert(alone.end(), found.begin(), found.end());
  std::stable_sort(alone.begin(), alone.end(), [](const Violation& a, const Violation& b) {
    return a.at != b.at ? a.at < b.at : a.kind < b.kind;
  });
  REQUIRE(alone.size() == r.violations.size());
  for (std::size_t i = 0; i < alone.size(); ++i) {
    CHECK(alone[i].kind == r.violations[i].kind);
    CHECK(alone[i].at == r.violations[i].at);
    CHECK(alone[i].until == r.violations[i].until);
    CHECK(alone[i].processes == r.violations[i].processes);
    CHECK(alone[i].detail == r.violations[i].detail);
  }
}
}  // namespace

TEST_CASE("each checker shown every event finds what the judge finds showing it only the kinds it reads") {
  std::size_t found = 0;
  for (const fs::path& file : catalogue_files()) {
    INFO(file.string());
    const RunResult r = run_scenario(load_scenario(file.string()));
    same_as_each_checker_alone(r);
    found += r.violations.size();
  }
  // And under explore's random faults, on a few topologies (crashes,
  // partitions, failovers, clock faults the catalogue does not have).
  for (const char* name : {"kleppmann/gc-pause.toml", "kleppmann/redlock-clock-jump.toml",
                           "redis/failover-async-replication.toml", "zookeeper/herd-effect.toml",
                           "consul/session-ttl-pause.toml"}) {
    const Scenario base = load_scenario((fs::path(LOCKSIM_SOURCE_DIR) / "scenarios" / name).string());
    ExploreOptions eo;
    for (std::uint64_t i = 0; i < 40; ++i) {
      INFO(name << " run " << i);
      const RunResult r = run_scenario(with_random_faults(base, run_seed(1, i), eo));
      same_as_each_checker_alone(r);
      found += r.violations.size();
    }
  }
  CHECK(found >= 100);  // the comparison saw violations of its own, not only clean runs
}

TEST_CASE("a run asked for no trace hash (explore's) leaves it out and judges alike, and borrowed it points to the caller's scenario") {
  const Scenario s = load_scenario((fs::path(LOCKSIM_SOURCE_DIR) / "scenarios/kleppmann/gc-pause.toml").string());
  const RunResult full = run_scenario(s);
  RunOptions no_hash;
  no_hash.hash = false;
  const RunResult bare = run_scenario_borrowed(s, no_hash);
  CHECK(full.trace_hash.size() == 16);
  CHECK(bare.trace_hash.empty());
  CHECK(bare.scenario == &s);
  CHECK(bare.owned_scenario == nullptr);
  CHECK(bare.verdict == full.verdict);
  CHECK(bare.stats.events == full.stats.events);
}

TEST_CASE("a link or partition fault words what it does only when the trace keeps words, and hashes alike either way") {
  Scenario s = load_scenario((fs::path(LOCKSIM_SOURCE_DIR) / "scenarios/kleppmann/gc-pause.toml").string());
  auto fault = [&](FaultKind kind, std::int64_t at_s, auto fill) {
    FaultSpec f;
    f.kind = kind;
    f.at = Duration::s(at_s);
    fill(f);
    s.faults.push_back(std::move(f));
  };
  fault(FaultKind::Partition, 2, [](FaultSpec& f) {
    f.groups = {{"client1"}, {"redis1", "client2", "storage"}};
    f.duration = Duration::s(5);
  });
  fault(FaultKind::Delay, 32, [](FaultSpec& f) {  // held back
    f.from = "client2";
    f.to = "redis1";
    f.duration = Duration::s(3);
  });
  fault(FaultKind::Delay, 33, [](FaultSpec& f) {  // slowed down
    f.from = "redis1";
    f.by = Duration::ms(5);
  });
  fault(FaultKind::Drop, 34, [](FaultSpec& f) {
    f.to = "storage";
    f.count = 1;
  });
  sort_faults(s.faults);
  const RunResult kept = run_scenario(s);
  std::vector<std::string> kept_words;
  for (const TraceEvent& e : kept.world->trace().events())
    if (e.kind == Ev::Fault || e.kind == Ev::Dropped) kept_words.push_back(e.detail);
  REQUIRE(kept_words.size() >= 6);  // the partition, its heal, three rules, a drop
  for (const bool details : {false, true}) {
    INFO(details);
    std::vector<std::string> words;
    RunOptions o;
    o.keep_events = 0;
    o.details = details;
    o.listener = [&](const Trace&, const TraceEvent& e) {
      if (e.kind == Ev::Fault || e.kind == Ev::Dropped) words.push_back(e.detail);
    };
    const RunResult r = run_scenario(s, o);
    CHECK(r.trace_hash == kept.trace_hash);
    CHECK(r.verdict == kept.verdict);
    REQUIRE(words.size() == kept_words.size());
    if (details) CHECK(words == kept_words);
    else CHECK(std::all_of(words.begin(), words.end(), [](const std::string& w) { return w.empty(); }));
  }
  CHECK(std::none_of(kept_words.begin(), kept_words.end(), [](const std::string& w) { return w.empty(); }));
}

TEST_CASE("the trace hash is the same whether the events are kept, partly kept or not kept, on every catalogue scenario") {
  // Not kept, the network's events are hashed from their fields (Trace::record_hashed).
  for (const fs::path& file : catalogue_files()) {
    INFO(file.string());
    const Scenario s = load_scenario(file.string());
    RunOptions none, some;
    none.keep_events = 0;
    some.keep_events = 10;
    some.details = true;
    const RunResult all = run_scenario(s), kept_none = run_scenario(s, none), kept_some = run_scenario(s, some);
    CHECK(all.trace_hash == kept_none.trace_hash);
    CHECK(all.trace_hash == kept_some.trace_hash);
    CHECK(all.verdict == kept_none.verdict);
    CHECK(kept_none.world->trace().events().empty());
    CHECK(kept_some.world->trace().events().size() == 10);
    CHECK_FALSE(kept_some.world->trace().complete());
    CHECK(all.world->trace().complete());
  }
}

TEST_CASE("a run without a hash (explore's lean world) judges every catalogue scenario as a hashed run does") {
  for (const fs::path& file : catalogue_files()) {
    INFO(file.string());
    const Scenario s = load_scenario(file.string());
    RunOptions hashed, unhashed;
    hashed.keep_events = unhashed.keep_events = 0;
    unhashed.hash = false;
    const RunResult a = run_scenario(s, hashed);
    const RunResult b = run_scenario(s, unhashed);
    REQUIRE(a.violations.size() == b.violations.size());
    for (std::size_t i = 0; i < a.violations.size(); ++i) {
      CHECK(a.violations[i].kind == b.violations[i].kind);
      CHECK(a.violations[i].at == b.violations[i].at);
      CHECK(a.violations[i].processes == b.violations[i].processes);
      CHECK(a.violations[i].detail == b.violations[i].detail);
    }
    CHECK(a.stats.events == b.stats.events);  // skipped events still count
    CHECK(a.stats.delivered == b.stats.delivered);
    CHECK(a.stats.acquisitions == b.stats.acquisitions);
    CHECK(a.stats.failed_attempts == b.stats.failed_attempts);
    CHECK(a.stats.queue_events == b.stats.queue_events);
    CHECK(a.world->now() == b.world->now());
    CHECK_FALSE(a.trace_hash.empty());
    CHECK(b.trace_hash.empty());
    CHECK(b.world->trace().hashing() == false);
    CHECK_FALSE(b.world->trace().wants(Ev::Sent));  // no listener of the network's events...
    CHECK(b.world->trace().wants(Ev::Acquired));    // ...but the judge's
    CHECK(b.world->trace().wants(Ev::Command));     // a command that leaves the requester holding...
    CHECK_FALSE(b.world->trace().wants_unowned(Ev::Command));  // ...not one that leaves nobody
    CHECK_FALSE(b.world->trace().wants_clocks());  // the watchers go by true time
    CHECK(a.world->trace().wants_clocks());        // the hash reads the clock readings
  }
}

TEST_CASE("compact timers (every run but the exhaustive search's) keep every catalogue scenario's trace, byte for byte") {
  for (const fs::path& file : catalogue_files()) {
    INFO(file.string());
    const Scenario s = load_scenario(file.string());
    RunOptions compact, stale;
    compact.keep_events = stale.keep_events = 0;
    // An at_anchor run keeps superseded timer events in the queue, as its states have always folded them.
    stale.at_anchor = [](const Trace&, const TraceEvent&, const std::function<std::uint64_t()>&) {};
    const RunResult a = run_scenario(s, compact);
    const RunResult b = run_scenario(s, stale);
    CHECK(a.trace_hash == b.trace_hash);
    CHECK(a.stats.events == b.stats.events);
    CHECK(a.verdict == b.verdict);
    CHECK(a.stats.queue_events <= b.stats.queue_events);
  }
}

TEST_CASE("a listener hears only the kinds it names, and a skipped event keeps the count and later events' positions") {
  Trace t;
  t.set_hashing(false);
  t.set_keep_limit(0);
  std::vector<std::pair<Ev, std::uint64_t>> heard;
  t.add_listener([&](const TraceEvent& e) { heard.emplace_back(e.kind, e.seq); }, EvSet{Ev::Acquired});
  CHECK(t.wants(Ev::Acquired));
  CHECK_FALSE(t.wants(Ev::Sent));
  t.record(TraceEvent{.kind = Ev::Acquired});
  t.skip();  // a sent event nobody reads
  t.record(TraceEvent{.kind = Ev::Released});  // recorded, but not of the listener's kind
  t.record(TraceEvent{.kind = Ev::Acquired});
  CHECK(t.size() == 4);
  REQUIRE(heard.size() == 2);
  CHECK(heard[1] == std::pair{Ev::Acquired, std::uint64_t{3}});
  CHECK(t.hash_hex().empty());
  t.set_hashing(true);  // hashing reads every kind
  CHECK(t.wants(Ev::Sent));
  CHECK(EvSet::all().has(kLastEvent));
  CHECK_FALSE(EvSet::all_but({Ev::Sent}).has(Ev::Sent));
  CHECK(EvSet::all_but({Ev::Sent}).has(Ev::Delivered));
}

TEST_CASE("an event only the hash reads, recorded from its fields, counts and hashes as the event recorded whole") {
  Trace whole, hashed;
  whole.set_keep_limit(0);
  hashed.set_keep_limit(0);
  CHECK(hashed.hash_only(Ev::Sent));
  const Instant at = Instant::from_ns(1'500'000), wall = Instant::from_ns(7'000'123), mono = Instant::from_ns(42);
  for (std::int64_t id = 1; id <= 3; ++id) {
    whole.record(TraceEvent{.at = at, .process = 2, .kind = Ev::Sent, .peer = 5, .value = id, .wall = wall,
                            .mono = mono, .content = 0xfeedULL * static_cast<std::uint64_t>(id)});
    hashed.record_hashed(at, 2, Ev::Sent, 5, id, wall, mono, 0xfeedULL * static_cast<std::uint64_t>(id));
  }
  CHECK(hashed.size() == 3);
  CHECK(hashed.hash_hex() == whole.hash_hex());
  // Another value of any field is another hash.
  hashed.record_hashed(at, 2, Ev::Delivered, 5, 4, wall, mono, 0);
  whole.record(TraceEvent{.at = at, .process = 2, .kind = Ev::Delivered, .peer = 5, .value = 4, .wall = wall,
                          .mono = mono, .content = 1});
  CHECK(hashed.hash_hex() != whole.hash_hex());
  // Not when someone else reads the kind: a listener of it, kept events, or no hash.
  Trace listened;
  listened.set_keep_limit(0);
  listened.add_listener([](const TraceEvent&) {}, EvSet{Ev::Sent});
  CHECK_FALSE(listened.hash_only(Ev::Sent));
  CHECK(listened.hash_only(Ev::Delivered));
  Trace kept;
  CHECK_FALSE(kept.hash_only(Ev::Sent));
  CHECK_FALSE(kept.hash_only_unowned(Ev::Command));  // nor a command without an owner
  Trace unhashed;
  unhashed.set_keep_limit(0);
  unhashed.set_hashing(false);
  CHECK_FALSE(unhashed.hash_only(Ev::Sent));
  CHECK_FALSE(unhashed.hash_only_unowned(Ev::Command));
}

TEST_CASE("a command that names no owner is hashed from its fields, key and all, when its listeners read only owned ones") {
  // The judge reads a Redis command only when it names an owner
  // (Judge::kOwnedOnly); a refused SET NX names none, and RedisNode::note_command
  // records it with record_hashed. The same hash as the event recorded whole.
  Trace whole, hashed;
  for (Trace* t : {&whole, &hashed}) {
    t->set_keep_limit(0);
    t->add_listener([](const TraceEvent&) {}, {EvSet{Ev::Command}, EvSet{Ev::Command}});
  }
  CHECK_FALSE(hashed.hash_only(Ev::Command));  // a listener reads the kind ...
  CHECK(hashed.hash_only_unowned(Ev::Command));  // ... but not without an owner
  const Instant at = Instant::from_ns(2'000'000), wall = Instant::from_ns(9'000'001), mono = Instant::from_ns(77);
  for (const std::string key : {"lock", "a-key-longer-than-one-word"}) {
    whole.record(TraceEvent{.at = at, .process = 1, .kind = Ev::Command, .peer = 3, .wall = wall, .mono = mono,
                            .key = key, .content = 0xc0ffeeULL});
    hashed.record_hashed(at, 1, Ev::Command, 3, 0, wall, mono, 0xc0ffeeULL, key);
  }
  CHECK(hashed.size() == 2);
  CHECK(hashed.hash_hex() == whole.hash_hex());
  hashed.record_hashed(at, 1, Ev::Command, 3, 0, wall, mono, 0xc0ffeeULL, "lock2");
  whole.record(TraceEvent{.at = at, .process = 1, .kind = Ev::Command, .peer = 3, .wall = wall, .mono = mono,
                          .key = "lock", .content = 0xc0ffeeULL});
  CHECK(hashed.hash_hex() != whole.hash_hex());  // the key is hashed
  // A listener that reads commands whole: recorded whole (kept events and
  // no hash: the test before).
  Trace reads_all;
  reads_all.set_keep_limit(0);
  reads_all.add_listener([](const TraceEvent&) {}, EvSet{Ev::Command});
  CHECK_FALSE(reads_all.hash_only_unowned(Ev::Command));
}

TEST_CASE("a listener may read a kind only when the event names an owner, and may leave the clock readings unread") {
  Trace t;
  t.set_hashing(false);
  t.set_keep_limit(0);
  std::vector<ProcId> judge_heard, other_heard;
  const std::size_t judge = t.add_listener([&](const TraceEvent& e) { judge_heard.push_back(e.owner); },
                                           {EvSet{Ev::Command, Ev::Acquired}, EvSet{Ev::Command, Ev::Sent}});
  CHECK(t.wants(Ev::Command));
  CHECK_FALSE(t.wants_unowned(Ev::Command));
  CHECK(t.wants_unowned(Ev::Acquired));
  CHECK_FALSE(t.wants(Ev::Sent));  // owned-only of a kind it does not read: nothing
  t.record(TraceEvent{.kind = Ev::Command, .owner = 2});
  t.record(TraceEvent{.kind = Ev::Command});  // names nobody: not shown to it
  t.record(TraceEvent{.kind = Ev::Acquired});
  CHECK(judge_heard == std::vector<ProcId>{2, kNoProc});
  // Widened with a kind it does not name as owned-only: Command stays owned-only.
  t.widen_listener(judge, {EvSet{Ev::Released}, EvSet{Ev::Command}});
  CHECK_FALSE(t.wants_unowned(Ev::Command));
  CHECK(t.wants_unowned(Ev::Released));
  // Widened with Command whole: whole from now on.
  t.widen_listener(judge, EvSet{Ev::Command});
  CHECK(t.wants_unowned(Ev::Command));
  judge_heard.clear();
  t.record(TraceEvent{.kind = Ev::Command});
  CHECK(judge_heard == std::vector<ProcId>{kNoProc});
  // Another listener that reads Command whole: everyone wants every command.
  Trace u;
  u.set_hashing(false);
  u.set_keep_limit(0);
  u.add_listener([&](const TraceEvent&) {}, {EvSet{Ev::Command}, EvSet{Ev::Command}});
  CHECK_FALSE(u.wants_unowned(Ev::Command));
  u.add_listener([&](const TraceEvent& e) { other_heard.push_back(e.owner); }, EvSet{Ev::Command});
  CHECK(u.wants_unowned(Ev::Command));
  u.record(TraceEvent{.kind = Ev::Command});
  CHECK(other_heard == std::vector<ProcId>{kNoProc});
  // Clock readings: read by a listener that says so, or by the hash.
  Trace k;
  k.set_hashing(false);
  k.set_keep_limit(0);
  const std::size_t timeless = k.add_listener([&](const TraceEvent&) {}, {EvSet{Ev::Acquired}, {}, false});
  CHECK_FALSE(k.wants_clocks());
  k.widen_listener(timeless, {EvSet{Ev::Released}, {}, false});
  CHECK_FALSE(k.wants_clocks());
  k.widen_listener(timeless, EvSet{Ev::Released});
  CHECK(k.wants_clocks());
  // Hashing reads every event, owner or none.
  Trace h;
  h.add_listener([&](const TraceEvent&) {}, {EvSet{Ev::Command}, EvSet{Ev::Command}, false});
  h.set_keep_limit(0);
  CHECK(h.wants_unowned(Ev::Command));
  CHECK(h.wants_clocks());
}

TEST_CASE("the benchmark workload: parallel SET NX PX, replies collected from all, unlocks not answered") {
  RunOptions o;
  o.keep_events = 0;
  const RunResult r = run_scenario(bench("2s"), o);
  CHECK(r.verdict.empty());
  CHECK(r.stats.acquisitions > 50);
  CHECK(r.stats.failed_attempts > r.stats.acquisitions);
  // 5 SETs, 5 replies and 5 unlocks per attempt (no reply to an unlock), but
  // for what is in flight when the run stops.
  const std::uint64_t attempts = r.stats.acquisitions + r.stats.failed_attempts;
  CHECK(r.stats.messages >= 15 * attempts);
  CHECK(r.stats.messages <= 15 * attempts + 15 * 100);
  CHECK(r.world->trace().events().empty());  // nothing kept: no report asked
  CHECK(r.stats.events > 50'000);
}

TEST_CASE("the benchmark's clients start at random within their start range") {
  const Scenario s = bench("200ms");
  const RunResult r = run_scenario(s);
  const auto started = events_of(r, Ev::Started);
  std::size_t clients = 0;
  Instant first = Instant::never(), last = Instant::zero();
  for (const TraceEvent* e : started) {
    if (r.world->trace().processes()[e->process].role != ProcessRole::Client) continue;
    ++clients;
    first = min(first, e->at);
    last = max(last, e->at);
  }
  CHECK(clients == 100);
  CHECK(last <= Instant::zero() + Duration::ms(100));
  CHECK(last - first > Duration::ms(50));  // spread over the range, not all at once
}

TEST_CASE("the benchmark scenario written back as TOML keeps its keys and runs to the same trace") {
  const Scenario original = bench("300ms");
  const std::string text = to_toml(original);
  for (const char* line : {"fanout = \"parallel\"", "collect = \"all\"", "unlock = \"no-wait\"", "start = \"0s..100ms\""})
    CHECK_MESSAGE(text.find(line) != std::string::npos, line);
  const Scenario again = parse_scenario(text, "written.toml");
  RunOptions o;
  o.keep_events = 0;
  CHECK(run_scenario(original, o).trace_hash == run_scenario(again, o).trace_hash);
}

namespace {
void same_violations(const std::vector<Violation>& a, const std::vector<Violation>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].kind == b[i].kind);
    CHECK(a[i].at == b[i].at);
    CHECK(a[i].until == b[i].until);
    CHECK(a[i].processes == b[i].processes);
    CHECK(a[i].detail == b[i].detail);
  }
}
}  // namespace

TEST_CASE("a judge restarted on another trace finds what a new judge finds there, whatever it judged before") {
  // Explore's workers keep one judge for all their runs (RunReuse): nothing
  // of one run's judging may reach the next, finished or cut off midway.
  std::vector<RunResult> runs;
  std::vector<CheckOptions> options;
  std::size_t found = 0;
  for (const fs::path& file : catalogue_files()) {
    RunResult r = run_scenario(load_scenario(file.string()));
    CheckOptions o;
    o.run_end = r.world->now();
    o.ttl = r.scenario->lock.ttl;
    o.liveness_window = r.scenario->expect.liveness_window;
    found += r.violations.size();
    options.push_back(o);
    runs.push_back(std::move(r));
  }
  REQUIRE(found > 20);  // the catalogue shows every kind of violation, some several times
  Judge judge(runs.front().world->trace(), options.front());
  for (std::size_t i = 0; i < runs.size(); ++i)
    for (const bool cut_off : {false, true}) {
      // The previous scenario's run, judged whole or cut off halfway (a run that threw).
      const std::size_t before = (i + runs.size() - 1) % runs.size();
      const Trace& previous = runs[before].world->trace();
      judge.restart(previous, options[before]);
      const std::size_t upto = cut_off ? previous.events().size() / 2 : previous.events().size();
      for (std::size_t k = 0; k < upto; ++k) judge.observe(previous.events()[k]);
      if (!cut_off) judge.finish(options[before].run_end);
      INFO(runs[i].scenario->path << (cut_off ? ", after a run cut off" : ", after a finished run"));
      const Trace& t = runs[i].world->trace();
      judge.restart(t, options[i]);
      for (const TraceEvent& e : t.events()) judge.observe(e);
      same_violations(judge.finish(options[i].run_end), check_trace(t, options[i]));
    }
}

}  // namespace streaming_test
