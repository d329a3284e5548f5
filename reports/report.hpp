// Reports of a run: the story in numbered plain-word steps (text) and one
// JSON object per scenario (product.md, "The JSON report").
#pragma once

#include <string>
#include <vector>

#include "harness/run.hpp"
#include "reports/lang.hpp"

namespace locksim {

// Why a single node's try did not get the lock (a step of Ev::Retrying).
struct TryOutcome {
  enum class Why : std::uint8_t { Held, Refused, NoAnswer };
  Why why = Why::NoAnswer;
  ProcId holder = kNoProc;  // Held: whose value the key held
  bool operator==(const TryOutcome&) const = default;
};

struct Step {
  Instant at;
  std::string text;
  const TraceEvent* event = nullptr;  // the event the step tells (in the trace it was told from)
  TryOutcome tried;                   // a failed try's (Ev::Retrying): what a folded retry line counts
};

// A failed attempt's tally as the algorithms trace it: Redlock's "G of N
// nodes granted it (Q needed), validity V; ..." (lockalgos/redlock.cpp),
// Redisson's MultiLock "G of N locks taken (all needed); ..." (redisson.cpp).
struct AttemptTally {
  long long granted = 0, total = 0;
  bool nodes = true;      // "nodes granted it" (else "locks taken")
  std::string needed;     // "3", "all", "a majority"
  std::string validity;   // "" when not given
  std::string rest;       // from the ';' on ("; it unlocks every node")
  // Too few granted (else, for Redlock, enough but the validity was used up).
  bool too_few() const;
};
std::optional<AttemptTally> parse_tally(const std::string& detail);

// True-time stamps of one story: one unit and one precision for all of them,
// so that they line up. Seconds (ms when the whole story is within a
// second), with the fewest decimals (3 to 6 for seconds) that still tell
// apart two steps at different instants, down to the microsecond.
class StoryClock {
 public:
  explicit StoryClock(const std::vector<Instant>& times);
  std::string operator()(Instant t) const;
  // "3.106s–20.060s"; one instant when the two are the same.
  std::string span(Instant from, Instant to) const;
  std::size_t width() const { return width_; }  // characters of the widest stamp

 private:
  bool ms_ = false;
  int decimals_ = 3;
  std::size_t width_ = 0;
};

// The events that tell the story, in plain words, in true-time order. The
// lock's configuration picks the words for what the algorithm does (a
// ZooKeeper lock lasts as long as its session, not forever). Instants in the
// text are written by format_instant.
std::vector<Step> narrate(const Trace& trace, const LockConfig& lock = {});
std::vector<Step> narrate(const RunResult& r);

// A run's story as the reports tell it: its steps, with every instant in
// their text written by the one clock chosen for them (and the violations).
struct Story {
  std::vector<Step> steps;
  StoryClock clock;
};
Story tell_story(const RunResult& r, Lang lang = Lang::En);

// A line of the story as told: one step, or a run of alike steps told once
// ("client2's attempt fails 57 times, ...").
struct StoryLine {
  Instant at, until;              // the first and the last step it tells
  std::string text;
  std::vector<std::size_t> steps; // indices of the steps it tells
  bool decisive = false;          // a step the verdict rests on: never folded, never cut
};

// The story told with repetition folded: a client's failed retries (and its
// messages lost on the way) between two other steps become one line, and
// three or more alike steps in a row become one. The steps the verdict rests
// on (the grants, expiries, pauses, writes and releases of a violation's
// clients, within it) are told one by one.
std::vector<StoryLine> fold_story(const Trace& trace, const std::vector<Step>& steps, const std::vector<Violation>& violations,
                                  const StoryClock& clock, Lang lang = Lang::En);

// The violations a report tells one by one: all of them when they are few,
// else the first three of each kind (the story keeps the steps these rest on).
std::vector<Violation> told_violations(const std::vector<Violation>& all);

// Violation kinds in words, "overlap, stale-write" ("no violation": none).
std::string kinds_text(const std::set<ViolationKind>& kinds, Lang lang = Lang::En);
// Why a search is not as `s` expects: the kinds its runs (one run's, if
// `one_run`) showed that its [expect] does not allow.
std::string not_allowed_words(Lang lang, const Scenario& s, const std::set<ViolationKind>& found, bool one_run = false);

// A fault of a run as a listing of its faults says it (explore --replay):
// what it does and when, and, if it never fired, why not: its event never
// came (or came too few times), or it was due after the run's end.
std::string fault_listing(Lang lang, const FaultSpec& f, const FaultFate& fate, Duration run);

// The command that replays this run exactly.
std::string replay_command(const RunResult& r);

struct TextOptions {
  bool colour = false;
  // Every step, nothing folded or cut, and every violation listed.
  bool full = false;
  // Lines of the story beyond which the middle is cut (its beginning, the
  // steps the verdict rests on and its ending are always told).
  std::size_t max_lines = 200;
  // The language of the words (the JSON report is always English).
  Lang lang = Lang::En;
};
std::string text_report(const RunResult& r, const TextOptions& options = {});
// The text report's verdict line: "Verdict: overlap ×2, stale-write — as
// expected" (with the expected kinds when not as expected).
std::string verdict_line(const RunResult& r, Lang lang = Lang::En);
// One line for `locksim check`.
std::string check_line(const RunResult& r, Lang lang = Lang::En);
// `locksim check`'s last line: how many scenarios, how many as expected.
std::string check_summary(Lang lang, std::size_t scenarios, int ok, int failed, int bad);
// A violation's detail in the language (the judge writes it in English).
std::string violation_words(Lang lang, const Violation& v);
// The JSON report; its "story" holds every step told from the events the
// trace kept, as records (time, process, kind, text and the event's fields).
std::string json_report(const RunResult& r);

}  // namespace locksim
