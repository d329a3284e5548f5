// The story as told (reports/report.hpp): one clock for its stamps, and its
// repetition folded so that a retry loop does not push the ending out.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <set>

#include "reports/report.hpp"
#include "reports/words.hpp"

namespace locksim {

namespace {

std::int64_t pow10(int n) {
  std::int64_t p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

}  // namespace

StoryClock::StoryClock(const std::vector<Instant>& times) {
  std::vector<std::int64_t> ns;
  for (Instant t : times) ns.push_back(t.ns());
  std::sort(ns.begin(), ns.end());
  ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
  std::int64_t gap = 1'000'000'000;
  for (std::size_t i = 1; i < ns.size(); ++i) gap = std::min(gap, ns[i] - ns[i - 1]);
  // Milliseconds when the whole story fits in a second, else seconds; the
  // fewest decimals at which two steps at different instants read apart,
  // from the millisecond down to the microsecond.
  ms_ = !ns.empty() && ns.back() < 1'000'000'000;
  const int unit_digits = ms_ ? 6 : 9, least = ms_ ? 0 : 3, most = ms_ ? 3 : 6;
  decimals_ = least;
  while (decimals_ < most && pow10(unit_digits - decimals_) > gap) ++decimals_;
  for (std::int64_t n : ns) width_ = std::max(width_, (*this)(Instant::from_ns(n)).size());
  width_ = std::max(width_, (*this)(Instant::zero()).size());
}

std::string StoryClock::operator()(Instant t) const {
  const int unit_digits = ms_ ? 6 : 9;
  const std::int64_t n = t.ns(), unit = pow10(unit_digits), step = pow10(unit_digits - decimals_);
  std::string s = std::to_string(n / unit);
  if (decimals_ > 0) s += fmt::format(".{:0{}}", (n % unit) / step, decimals_);
  return s + (ms_ ? "ms" : "s");
}

std::string StoryClock::span(Instant from, Instant to) const {
  return from == to ? (*this)(from) : (*this)(from) + "–" + (*this)(to);
}

namespace {

bool client(const Trace& t, ProcId p) { return p < t.processes().size() && t.processes()[p].role == ProcessRole::Client; }


// The steps the verdict rests on: for each violation, what its clients did
// and what happened to their lock from the first of their grants it rests
// on until it ended (grants, pauses, expiries, writes, releases), and what
// happened to the lock's nodes meanwhile (crashes, clock jumps, promotions).
std::vector<bool> decisive_steps(const Trace& trace, const std::vector<Step>& steps, const std::vector<Violation>& violations) {
  std::vector<bool> decisive(steps.size(), false);
  // Per client, its grants' steps in order: a violation's are found by
  // bisection, so that thousands of violations in a long story stay cheap.
  std::map<ProcId, std::vector<std::size_t>> grants;
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].event && steps[i].event->kind == Ev::Acquired) grants[steps[i].event->process].push_back(i);
  auto first_at = [&](Instant t) {
    return static_cast<std::size_t>(std::lower_bound(steps.begin(), steps.end(), t, [](const Step& s, Instant v) { return s.at < v; }) - steps.begin());
  };
  for (const Violation& v : violations) {
    const std::set<ProcId> who(v.processes.begin(), v.processes.end());
    Instant from = v.at;
    for (ProcId p : who) {
      const auto it = grants.find(p);
      if (it == grants.end()) continue;
      const auto& g = it->second;
      const auto after = std::upper_bound(g.begin(), g.end(), v.at, [&](Instant t, std::size_t i) { return t < steps[i].at; });
      if (after == g.begin()) continue;
      decisive[*(after - 1)] = true;
      from = std::min(from, steps[*(after - 1)].at);
    }
    for (std::size_t i = first_at(from); i < steps.size() && steps[i].at <= v.until; ++i) {
      const TraceEvent* e = steps[i].event;
      if (!e) continue;
      const bool involved = who.count(e->process) || who.count(e->peer) || who.count(e->owner);
      const bool node = e->process != kNoProc && !client(trace, e->process);
      switch (e->kind) {
        case Ev::Acquired: case Ev::Paused: case Ev::Resumed: case Ev::Lost: case Ev::Writing: case Ev::StorageWrite:
        case Ev::StorageReject: case Ev::WriteRejected: case Ev::Releasing: case Ev::Released: case Ev::ReleaseFailed:
        case Ev::Expired: case Ev::KeyDeleted: case Ev::Checked: case Ev::Claiming: case Ev::Notified:
          decisive[i] = decisive[i] || involved;
          break;
        case Ev::Crashed: case Ev::Restarted: case Ev::ClockJumped: case Ev::ClockDrift: case Ev::Promoted:
          decisive[i] = decisive[i] || involved || node;
          break;
        default:
          break;
      }
    }
  }
  return decisive;
}

// The client whose retry loop a step belongs to: its attempt that failed for
// too few nodes, a single node's try that failed, or a message of its lost
// while it tries for the lock. An attempt that failed otherwise (its
// validity used up after a pause, its session gone) is told on its own.
std::optional<ProcId> retry_client(const Trace& trace, const Step& step, const std::set<ProcId>& trying) {
  const TraceEvent& e = *step.event;
  if (e.kind == Ev::Retrying) return e.process;
  if (e.kind == Ev::AttemptFailed) {
    const auto t = parse_tally(e.detail);
    return t && t->too_few() ? std::optional(e.process) : std::nullopt;
  }
  if (e.kind != Ev::Dropped) return std::nullopt;
  for (ProcId p : {e.process, e.peer})
    if (client(trace, p) && trying.count(p)) return p;
  return std::nullopt;
}

constexpr std::size_t kFoldRetries = 3;  // failed attempts in a row worth one line
constexpr std::size_t kFoldAlike = 3;    // alike steps in a row worth one line

// "; the network loses 3 of its messages (partition), to redis1": the
// messages of a retry loop's client lost meanwhile (none: nothing).
std::string lost_text(const Trace& trace, ProcId who, const std::vector<Step>& steps, const std::vector<std::size_t>& idx, Lang lang) {
  std::size_t lost = 0;
  bool only_its_own = true;  // every message lost was one it sent
  std::set<std::string> why_lost;
  std::vector<std::string> peers;
  for (std::size_t i : idx) {
    const TraceEvent& e = *steps[i].event;
    if (e.kind != Ev::Dropped) continue;
    ++lost;
    only_its_own = only_its_own && e.process == who;
    why_lost.insert(e.detail.substr(0, e.detail.find(':')));
    const std::string other = trace.name(e.process == who ? e.peer : e.process);
    if (std::find(peers.begin(), peers.end(), other) == peers.end()) peers.push_back(other);
  }
  if (lost == 0) return "";
  std::vector<std::string> why;
  for (const std::string& w : why_lost) why.push_back(translate_detail(lang, w));
  return say(lang, only_its_own ? W::RetryLostTo : W::RetryLostToOrFrom,
             {{"lost", std::to_string(lost)}, {"why", say_list(lang, why)}, {"peers", say_list(lang, peers)}});
}

// One line for a single node's tries that failed (Ev::Retrying): how many,
// over what time, why (whose key the node held, a refusal, no answer: each
// with its count when they differ), the wait between them, and what the
// network lost meanwhile.
std::string tries_text(const Trace& trace, ProcId who, const std::vector<Step>& steps, const std::vector<std::size_t>& idx,
                       const StoryClock& clock, Lang lang) {
  struct Reason {
    ProcId node;
    TryOutcome outcome;
    std::size_t times;
  };
  std::vector<Reason> reasons;  // in order of first appearance
  std::size_t tries = 0;
  Duration shortest = Duration::ns(INT64_MAX), longest = Duration::zero();
  for (std::size_t i : idx) {
    const TraceEvent& e = *steps[i].event;
    if (e.kind != Ev::Retrying) continue;
    ++tries;
    shortest = std::min(shortest, Duration::ns(e.value));
    longest = std::max(longest, Duration::ns(e.value));
    const TryOutcome& o = steps[i].tried;
    auto it = std::find_if(reasons.begin(), reasons.end(), [&](const Reason& r) { return r.node == e.peer && r.outcome == o; });
    if (it == reasons.end()) reasons.push_back({e.peer, o, 1});
    else ++it->times;
  }
  std::vector<std::string> why;
  for (const Reason& r : reasons) {
    const bool each = reasons.size() == 1;
    const WordArgs args{{"node", trace.name(r.node)},
                        {"holder", r.outcome.holder == kNoProc ? "" : trace.name(r.outcome.holder)},
                        {"times", say_count(lang, r.times, W::TimeOne, W::TimeMany)}};
    switch (r.outcome.why) {
      case TryOutcome::Why::Held: why.push_back(say(lang, each ? W::RetryHeldEach : W::RetryHeldTimes, args)); break;
      case TryOutcome::Why::Refused: why.push_back(say(lang, each ? W::RetryRefusedEach : W::RetryRefusedTimes, args)); break;
      case TryOutcome::Why::NoAnswer: why.push_back(say(lang, each ? W::RetryNoAnswerEach : W::RetryNoAnswerTimes, args)); break;
    }
  }
  const std::string wait = shortest == longest ? format_duration(shortest) : format_duration(shortest) + "–" + format_duration(longest);
  return say(lang, W::RetryHead,
             {{"who", trace.name(who)}, {"n", std::to_string(tries)}, {"span", clock.span(steps[idx.front()].at, steps[idx.back()].at)}}) +
         say_list(lang, why) + say(lang, W::RetryWaits, {{"d", wait}}) + lost_text(trace, who, steps, idx, lang);
}

// One line for a client's retry loop: how many tries, over what time, why
// they failed, and what the network lost meanwhile.
std::string retry_text(const Trace& trace, ProcId who, const std::vector<Step>& steps, const std::vector<std::size_t>& idx,
                       const StoryClock& clock, Lang lang) {
  const bool single_node = std::any_of(idx.begin(), idx.end(), [&](std::size_t i) { return steps[i].event->kind == Ev::Retrying; });
  if (single_node) return tries_text(trace, who, steps, idx, clock, lang);
  // Every attempt here failed for too few (retry_client): how many were granted, each time.
  std::vector<std::pair<long long, std::size_t>> granted;  // in order of first appearance, with counts
  std::optional<AttemptTally> first;
  std::size_t attempts = 0;
  for (std::size_t i : idx) {
    const TraceEvent& e = *steps[i].event;
    if (e.kind != Ev::AttemptFailed) continue;
    ++attempts;
    const auto t = parse_tally(e.detail);
    if (!first) first = t;
    auto it = std::find_if(granted.begin(), granted.end(), [&](const auto& p) { return p.first == t->granted; });
    if (it == granted.end()) granted.emplace_back(t->granted, 1);
    else ++it->second;
  }
  std::string s = say(lang, W::RetryHead,
                      {{"who", trace.name(who)}, {"n", std::to_string(attempts)}, {"span", clock.span(steps[idx.front()].at, steps[idx.back()].at)}});
  const std::string total = std::to_string(first->total), needed = translate_detail(lang, first->needed);
  if (granted.size() == 1) {
    s += say(lang, first->nodes ? W::RetrySameNodes : W::RetrySameLocks,
             {{"granted", std::to_string(granted[0].first)}, {"total", total}, {"needed", needed}});
  } else {
    // By a count that varies: "2 of 5 granted it 175 times, 0 of 5 44 times".
    s += say(lang, first->nodes ? W::RetryVariesNodes : W::RetryVariesLocks, {{"needed", needed}});
    for (std::size_t k = 0; k < granted.size(); ++k)
      s += say(lang, k > 0 ? W::RetryNext : first->nodes ? W::RetryFirstNodes : W::RetryFirstLocks,
               {{"granted", std::to_string(granted[k].first)}, {"total", total}, {"times", say_count(lang, granted[k].second, W::TimeOne, W::TimeMany)}});
  }
  // What the client does after each failure ("; it unlocks every node"), said once.
  s += translate_detail(lang, first->rest);
  return s + lost_text(trace, who, steps, idx, lang);
}

// A step's shape: its words with its own process's name as '@' and every
// shortened value as '…', so that "client3 asks for the lock" is alike
// "client4 asks for the lock" but "0 of 5 granted it" is not alike "2 of 5".
std::string shape(const std::string& text, const std::string& who) {
  // Copied across, not replaced in place (a g++ 12 -Wrestrict false positive inside std::string::replace).
  std::string s;
  std::size_t from = 0;
  for (auto at = text.find(who); !who.empty() && at != std::string::npos; at = text.find(who, std::max(at + 1, from))) {
    const bool end = at + who.size() == text.size() || !std::isalnum(static_cast<unsigned char>(text[at + who.size()]));
    if ((at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1]))) || !end) continue;
    s.append(text, from, at - from) += '@';
    from = at + who.size();
  }
  s.append(text, from);
  // "9925…" (narrate.cpp's shortened values) as "…".
  const std::string ellipsis = "…";
  for (auto at = s.find(ellipsis); at != std::string::npos; at = s.find(ellipsis, at + 1))
    if (at >= 4 && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(at - 4), s.begin() + static_cast<std::ptrdiff_t>(at),
                               [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; })) {
      s.erase(at - 4, 4);
      at -= 4;
    }
  return s;
}

// Which kinds of step may be folded with alike neighbours: asking, renewing,
// failing and losing messages. A write, a grant or an expiry is told each time.
bool foldable(Ev kind) {
  return kind == Ev::Acquiring || kind == Ev::Renewed || kind == Ev::AttemptFailed || kind == Ev::AcquireFailed || kind == Ev::Dropped;
}

// Three or more alike steps in a row as one line.
std::vector<StoryLine> fold_alike(const Trace& trace, const std::vector<Step>& steps, std::vector<StoryLine> lines, const StoryClock& clock,
                                  Lang lang) {
  std::vector<StoryLine> out;
  auto alike = [&](const StoryLine& a, const StoryLine& b) {
    if (a.decisive || b.decisive || a.steps.size() != 1 || b.steps.size() != 1) return false;
    const TraceEvent* x = steps[a.steps[0]].event;
    const TraceEvent* y = steps[b.steps[0]].event;
    return x && y && x->kind == y->kind && foldable(x->kind) &&
           shape(a.text, trace.name(x->process)) == shape(b.text, trace.name(y->process));
  };
  for (std::size_t i = 0; i < lines.size();) {
    std::size_t j = i + 1;
    while (j < lines.size() && alike(lines[i], lines[j])) ++j;
    if (j - i < kFoldAlike) {
      for (; i < j; ++i) out.push_back(std::move(lines[i]));
      continue;
    }
    StoryLine folded{.at = lines[i].at, .until = lines[j - 1].until, .text = lines[i].text};
    std::vector<std::string> others;
    bool one_process = true;
    for (std::size_t k = i; k < j; ++k) {
      folded.steps.push_back(lines[k].steps[0]);
      const ProcId p = steps[lines[k].steps[0]].event->process;
      one_process = one_process && p == steps[lines[i].steps[0]].event->process;
      if (k > i) others.push_back(trace.name(p));
    }
    const std::string until = folded.until != folded.at ? say(lang, W::FoldUntil, {{"t", clock(folded.until)}}) : "";
    if (steps[folded.steps[0]].event->kind == Ev::Dropped)
      folded.text += say(lang, W::FoldLost, {{"n", std::to_string(j - i - 1)}, {"until", until}});
    else if (one_process)
      folded.text += say(lang, W::FoldTimes, {{"n", std::to_string(j - i)}, {"until", until}});
    else if (others.size() <= 3)
      folded.text += say(lang, W::FoldSoDo, {{"names", say_list(lang, others)}, {"until", until}});
    else
      folded.text += say(lang, W::FoldSoDoOthers,
                         {{"n", std::to_string(others.size())}, {"first", others.front()}, {"last", others.back()}, {"until", until}});
    out.push_back(std::move(folded));
    i = j;
  }
  return out;
}

}  // namespace

std::vector<StoryLine> fold_story(const Trace& trace, const std::vector<Step>& steps, const std::vector<Violation>& violations,
                                  const StoryClock& clock, Lang lang) {
  const std::vector<bool> decisive = decisive_steps(trace, steps, violations);
  std::vector<StoryLine> lines;
  std::set<ProcId> trying;                         // clients between asking and getting (or giving up)
  std::map<ProcId, std::vector<std::size_t>> open;  // per client: its retry steps since the last step told on its own
  auto single = [&](std::size_t i) { return StoryLine{.at = steps[i].at, .until = steps[i].at, .text = steps[i].text, .steps = {i}, .decisive = decisive[i]}; };
  // The retry loops open so far, each as one line, or step by step when short.
  auto flush = [&] {
    std::vector<StoryLine> told;
    for (const auto& [who, idx] : open) {
      std::size_t attempts = 0;
      for (std::size_t i : idx) attempts += steps[i].event->kind == Ev::AttemptFailed || steps[i].event->kind == Ev::Retrying;
      if (attempts < kFoldRetries) {
        for (std::size_t i : idx) told.push_back(single(i));
        continue;
      }
      told.push_back(StoryLine{.at = steps[idx.front()].at, .until = steps[idx.back()].at,
                               .text = retry_text(trace, who, steps, idx, clock, lang), .steps = idx});
    }
    std::stable_sort(told.begin(), told.end(), [](const StoryLine& a, const StoryLine& b) { return a.steps.front() < b.steps.front(); });
    for (StoryLine& l : told) lines.push_back(std::move(l));
    open.clear();
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const TraceEvent* e = steps[i].event;
    if (e && e->kind == Ev::Acquiring) trying.insert(e->process);
    if (e && (e->kind == Ev::Acquired || e->kind == Ev::AcquireFailed || e->kind == Ev::Crashed)) trying.erase(e->process);
    if (const auto who = e ? retry_client(trace, steps[i], trying) : std::nullopt; who && !decisive[i]) {
      open[*who].push_back(i);
      continue;
    }
    flush();
    lines.push_back(single(i));
  }
  flush();
  return fold_alike(trace, steps, std::move(lines), clock, lang);
}

}  // namespace locksim
