#include "harness/scenario_knobs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>

#include "harness/faults/kind.hpp"
#include "harness/counted.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

namespace {

constexpr std::int64_t kPpb = 1000;  // a ppm in parts per billion
// A clock must run forward: more than -1,000,000 ppm (the loader's limit, scenario.cpp's clock table).
constexpr std::int64_t kSlowestPpb = -1'000'000'000 + 1;
constexpr std::int64_t kFastestPpb = 1'000'000'000'000 - 1;

[[noreturn]] void refuse(std::string_view option, const std::string& parameter, const std::string& why) {
  throw ScenarioError(std::string(option) + ": \"" + parameter + "\" " + why);
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// ---- [lock] KEY: edited as text, so the loader checks the value and locates a refusal ----

std::optional<std::int64_t> integer_of(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

Knob lock_knob(const Scenario& s, const std::string& parameter, const std::string& key, std::string_view option,
               KnobUnit guess) {
  Knob k;
  k.parameter = parameter;
  k.subject = Phrase(W::KnobLock).name("key", key);
  k.noun = Phrase(W::KnobNounIs).name("parameter", parameter);
  const auto written = [key](const Scenario& t) -> const LockConfig::Written* {
    for (const LockConfig::Written& w : t.lock.written)
      if (w.key == key) return &w;
    return nullptr;
  };
  k.unit = guess;
  k.line = s.lock.line;
  if (const LockConfig::Written* w = written(s)) {
    k.line = w->line;
    k.subject = Phrase(W::KnobLockWritten).name("key", key).name("value", w->text);
    const bool text = !w->text.empty() && w->text.front() == '"';
    if (text && parse_duration(w->text.substr(1, w->text.size() - 2))) k.unit = KnobUnit::Duration;
    else if (!text && integer_of(w->text)) k.unit = KnobUnit::Integer;
    else refuse(option, parameter, "is " + w->text + " at " + s.path + ":" + std::to_string(w->line) + ": only durations and integers can be moved");
  }
  if (k.unit == KnobUnit::Ppm) refuse(option, parameter, "is not a ppm value: [lock] keys take durations and integers");
  k.get = [written](const Scenario& t) -> std::optional<std::int64_t> {
    const LockConfig::Written* w = written(t);
    if (!w) return std::nullopt;
    if (!w->text.empty() && w->text.front() == '"') {
      const auto d = parse_duration(w->text.substr(1, w->text.size() - 2));
      return d ? std::optional(d->count_ns()) : std::nullopt;
    }
    return integer_of(w->text);
  };
  const KnobUnit unit = k.unit;
  k.set = [key, unit](Scenario& t, std::int64_t v) {
    set_lock_option(t, key, unit == KnobUnit::Duration ? quoted(format_duration(Duration::ns(v))) : std::to_string(v));
  };
  k.lowest = unit == KnobUnit::Duration ? 1 : 0;
  k.search_highest = std::max<std::int64_t>(s.duration.count_ns() * 4, k.get(s).value_or(0));
  return k;
}

// ---- A clock: a [[node]]'s, a [[client]]'s ----

// `clock_of(scenario)` is the clock's ClockSpec (const or not).
template <typename ClockOf>
bool clock_knob(const Scenario& s, Knob& k, const std::string& field, ClockOf clock_of) {
  if (field == "offset") {
    k.unit = KnobUnit::Duration;
    k.get = [clock_of](const Scenario& t) { return std::optional(clock_of(t).offset.count_ns()); };
    k.set = [clock_of](Scenario& t, std::int64_t v) { clock_of(t).offset = Duration::ns(v); };
    k.lowest = INT64_MIN;
  } else if (field == "drift_ppm") {
    k.unit = KnobUnit::Ppm;
    k.get = [clock_of](const Scenario& t) { return std::optional(clock_of(t).drift_ppb); };
    k.set = [clock_of](Scenario& t, std::int64_t v) { clock_of(t).drift_ppb = v; };
    k.lowest = kSlowestPpb;
    k.highest = kFastestPpb;
  } else if (field == "wall_drift_ppm") {
    k.unit = KnobUnit::Ppm;
    k.get = [clock_of](const Scenario& t) { return std::optional(clock_of(t).wall_drift_ppb); };
    k.set = [clock_of](Scenario& t, std::int64_t v) { clock_of(t).wall_drift_ppb = v; };
    k.lowest = kSlowestPpb;
    k.highest = kFastestPpb;
  } else {
    return false;
  }
  k.noun = Phrase(W::KnobNounIs).name("parameter", k.parameter);
  k.subject = Phrase(W::KnobClock).part("table", std::move(k.subject)).name("field", field).name("value", format_knob_value(k.unit, *k.get(s)));
  return true;
}

// "2" (from 1) or a name: the index into `names`.
std::size_t pick(const std::vector<std::string>& names, const std::string& which, std::string_view table,
                 const Scenario& s, std::string_view option, const std::string& parameter) {
  if (const auto n = integer_of(which)) {
    if (*n >= 1 && static_cast<std::size_t>(*n) <= names.size()) return static_cast<std::size_t>(*n - 1);
    refuse(option, parameter, "names none: " + s.path + " has " + counted(names.size(), std::string(table)) + " (they count from 1, in file order)");
  }
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == which) return i;
  refuse(option, parameter, "names none: " + s.path + " has no " + std::string(table) + " named '" + which + "'");
}

Knob client_knob(const Scenario& s, const std::string& parameter, const std::string& which, const std::string& field,
                 std::string_view option) {
  std::vector<std::string> names;
  for (const ClientConfig& c : s.clients) names.push_back(c.name);
  const std::size_t i = pick(names, which, "client", s, option, parameter);
  Knob k;
  k.parameter = parameter;
  k.subject = Phrase(W::KnobClient).name("name", names[i]);
  k.line = s.clients[i].line;
  if (clock_knob(s, k, field, [i](auto& t) -> auto& { return t.clients[i].clock; })) return k;
  using Range = DurationRange ClientConfig::*;
  static const std::map<std::string, Range, std::less<>> ranges = {
      {"start", &ClientConfig::start}, {"work", &ClientConfig::work}, {"hold", &ClientConfig::hold}, {"think", &ClientConfig::think}};
  k.noun = Phrase(W::KnobNounIs).name("parameter", parameter);
  if (const auto r = ranges.find(field); r != ranges.end()) {
    const Range m = r->second;
    k.unit = KnobUnit::Duration;
    // A fixed value: a range ("1s..2s") becomes the one value set.
    k.get = [i, m](const Scenario& t) -> std::optional<std::int64_t> {
      const DurationRange& d = t.clients[i].*m;
      return d.is_fixed() ? std::optional(d.lo.count_ns()) : std::nullopt;
    };
    k.set = [i, m](Scenario& t, std::int64_t v) { t.clients[i].*m = DurationRange::fixed(Duration::ns(v)); };
    k.lowest = field == "start" || field == "think" ? 0 : 1;
  } else if (field == "repeat") {
    k.unit = KnobUnit::Integer;
    k.get = [i](const Scenario& t) { return std::optional<std::int64_t>(t.clients[i].repeat); };
    k.set = [i](Scenario& t, std::int64_t v) { t.clients[i].repeat = static_cast<int>(v); };
    k.lowest = 1;
    k.highest = 1'000'000;
  } else if (field == "storage_timeout") {
    k.get = [i](const Scenario& t) { return std::optional(t.clients[i].storage_timeout.count_ns()); };
    k.set = [i](Scenario& t, std::int64_t v) { t.clients[i].storage_timeout = Duration::ns(v); };
  } else {
    refuse(option, parameter, "is not a number of a [[client]] (" + knob_parameters() + ")");
  }
  return k;
}

Knob node_knob(const Scenario& s, const std::string& parameter, const std::string& which, const std::string& field,
               std::string_view option) {
  std::vector<std::string> names;
  for (const NodeConfig& n : s.nodes) names.push_back(n.name);
  const std::size_t i = pick(names, which, "node", s, option, parameter);
  Knob k;
  k.parameter = parameter;
  k.subject = Phrase(W::KnobNode).name("name", names[i]);
  k.line = s.nodes[i].line;
  if (clock_knob(s, k, field, [i](auto& t) -> auto& { return t.nodes[i].clock; })) return k;
  if (field != "restart_delay") refuse(option, parameter, "is not a number of a [[node]] (" + knob_parameters() + ")");
  k.noun = Phrase(W::KnobNounIs).name("parameter", parameter);
  k.get = [i](const Scenario& t) { return std::optional(t.nodes[i].restart_delay.count_ns()); };
  k.set = [i](Scenario& t, std::int64_t v) { t.nodes[i].restart_delay = Duration::ns(v); };
  return k;
}

// ---- A [[fault]]: its time, and its magnitude ----

Knob fault_knob(const Scenario& s, const std::string& parameter, const std::string& which, const std::string& field,
                std::string_view option) {
  const auto n = integer_of(which);
  if (!n || *n < 1 || static_cast<std::size_t>(*n) > s.faults.size())
    refuse(option, parameter, "names none: " + s.path + " has " + counted(s.faults.size(), "fault") +
                                  " (they count from 1, in file order)");
  const std::size_t i = static_cast<std::size_t>(*n - 1);
  const FaultSpec& f = s.faults[i];
  const std::string name = "fault[" + std::to_string(*n) + "]";
  const std::string kind(fault_kind_name(f.kind));
  Knob k;
  k.parameter = parameter;
  k.subject = Phrase(W::KnobFault).name("name", name).part("what", describe_fault(f));
  k.line = f.line;
  const std::int64_t longest = (s.duration * 4).count_ns();
  if (field == "duration") {
    if (!f.duration) refuse(option, parameter, "is not there: " + name + " (" + kind + ") has no duration");
    k.noun = Phrase(W::KnobNounKindOf).name("kind", kind);
    k.get = [i](const Scenario& t) { return std::optional(t.faults[i].duration->count_ns()); };
    k.set = [i](Scenario& t, std::int64_t v) { t.faults[i].duration = Duration::ns(v); };
    k.lowest = 1;
    k.search_highest = std::max(longest, f.duration->count_ns());
  } else if (field == "by") {
    if (f.by.is_zero()) refuse(option, parameter, "is not there: " + name + " (" + kind + ") has no 'by'");
    k.noun = Phrase(f.kind == FaultKind::ClockJump ? W::KnobNounClockJump : W::KnobNounDelay);
    const bool back = f.by < Duration::zero();  // a jump back: its size moves
    k.get = [i, back](const Scenario& t) { return std::optional((back ? -t.faults[i].by : t.faults[i].by).count_ns()); };
    k.set = [i, back](Scenario& t, std::int64_t v) { t.faults[i].by = back ? -Duration::ns(v) : Duration::ns(v); };
    k.lowest = 1;
    k.search_highest = std::max(longest, *k.get(s));
  } else if (field == "at") {
    if (!f.at) refuse(option, parameter, "is not there: " + name + " waits for an event (on = ...): move its 'after' instead");
    k.noun = Phrase(W::KnobNounAt).name("name", name);
    k.get = [i](const Scenario& t) { return std::optional(t.faults[i].at->count_ns()); };
    k.set = [i](Scenario& t, std::int64_t v) { t.faults[i].at = Duration::ns(v); };
    k.highest = k.search_highest = s.duration.count_ns() - 1;
  } else if (field == "after") {
    if (f.at) refuse(option, parameter, "is not there: " + name + " has a time (at = ...), not an 'after'");
    k.noun = Phrase(W::KnobNounAfter).name("name", name);
    k.get = [i](const Scenario& t) { return std::optional(t.faults[i].after.count_ns()); };
    k.set = [i](Scenario& t, std::int64_t v) { t.faults[i].after = Duration::ns(v); };
    k.search_highest = std::max(longest, f.after.count_ns());
  } else if (field == "drift_ppm") {
    if (f.kind != FaultKind::ClockDrift) refuse(option, parameter, "is not there: " + name + " (" + kind + ") has no drift_ppm");
    k.unit = KnobUnit::Ppm;
    k.noun = Phrase(W::KnobNounDrift);
    k.get = [i](const Scenario& t) { return std::optional(t.faults[i].drift_ppb); };
    k.set = [i](Scenario& t, std::int64_t v) { t.faults[i].drift_ppb = v; };
    k.lowest = kSlowestPpb;
    k.highest = kFastestPpb;
  } else {
    refuse(option, parameter, "is not a number of a [[fault]] (" + knob_parameters() + ")");
  }
  return k;
}

// The parameter's parts, read by hand (a std::regex here cost g++ 12 seventy
// -Wmaybe-uninitialized false positives inside <regex> in the sanitizer build).
bool every_char(std::string_view s, bool (*ok)(char)) { return !s.empty() && std::all_of(s.begin(), s.end(), ok); }
bool key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return key_char(c) || c == '.' || c == '-'; }
bool field_char(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }

// "lock.KEY": KEY.
std::optional<std::string> lock_key_of(std::string_view p) {
  constexpr std::string_view prefix = "lock.";
  if (p.substr(0, prefix.size()) != prefix || !every_char(p.substr(prefix.size()), key_char)) return std::nullopt;
  return std::string(p.substr(prefix.size()));
}

// "TABLE[WHICH].FIELD", TABLE one of fault, client, node.
struct Item {
  std::string table, which, field;
};
std::optional<Item> item_of(std::string_view p) {
  const auto open = p.find('['), close = p.find("].");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  Item item{std::string(p.substr(0, open)), std::string(p.substr(open + 1, close - open - 1)), std::string(p.substr(close + 2))};
  const bool table = item.table == "fault" || item.table == "client" || item.table == "node";
  if (!table || !every_char(item.which, name_char) || !every_char(item.field, field_char)) return std::nullopt;
  return item;
}

}  // namespace

std::string knob_parameters() {
  return "lock.KEY (a duration or an integer), duration, fault[N].duration|by|at|after|drift_ppm, "
         "client[N].start|work|hold|think|repeat|storage_timeout|offset|drift_ppm|wall_drift_ppm, "
         "node[N].offset|drift_ppm|wall_drift_ppm|restart_delay; N counts from 1 (a client or node may be named: "
         "client[client1])";
}

Knob knob_of(const Scenario& s, const std::string& parameter, std::string_view option, KnobUnit guess) {
  if (const auto key = lock_key_of(parameter)) return lock_knob(s, parameter, *key, option, guess);
  if (const auto item = item_of(parameter)) {
    if (item->table == "fault") return fault_knob(s, parameter, item->which, item->field, option);
    if (item->table == "client") return client_knob(s, parameter, item->which, item->field, option);
    return node_knob(s, parameter, item->which, item->field, option);
  }
  if (parameter == "duration") {
    Knob k;
    k.parameter = parameter;
    k.subject = Phrase(W::KnobDuration);
    k.noun = Phrase(W::KnobNounRun);
    k.get = [](const Scenario& t) { return std::optional(t.duration.count_ns()); };
    k.set = [](Scenario& t, std::int64_t v) { t.duration = Duration::ns(v); };
    k.lowest = 1;
    k.search_highest = s.duration.count_ns() * 4;
    return k;
  }
  refuse(option, parameter, "is not a number that can be moved (" + knob_parameters() + ")");
}

std::string format_knob_value(KnobUnit unit, std::int64_t value) {
  switch (unit) {
    case KnobUnit::Duration: return format_duration(Duration::ns(value));
    case KnobUnit::Integer: return std::to_string(value);
    case KnobUnit::Ppm:
      return (value % kPpb == 0 ? std::to_string(value / kPpb) : fmt::format("{}", static_cast<double>(value) / kPpb)) + "ppm";
  }
  return std::to_string(value);
}

std::string_view knob_unit_name(KnobUnit unit) {
  switch (unit) {
    case KnobUnit::Duration: return "duration";
    case KnobUnit::Integer: return "integer";
    case KnobUnit::Ppm: return "ppm";
  }
  return "?";
}

}  // namespace locksim
