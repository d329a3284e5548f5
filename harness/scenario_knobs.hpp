// The numbers of a scenario a program may move, named as the file names
// them: "lock.ttl", "fault[1].duration", "client[2].drift_ppm",
// "node[redis1].offset". One table (scenario_knobs.cpp) serves every command
// that moves a number: `explore --boundary` bisects one, `sweep` walks a grid
// of them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "harness/scenario.hpp"
#include "sim/phrase.hpp"

namespace locksim {

// What a number is. Its values are integers in the unit's base:
// nanoseconds, the integer itself, parts per billion (the file's ppm * 1000).
enum class KnobUnit : std::uint8_t { Duration, Integer, Ppm };

struct Knob {
  std::string parameter;  // as given: "fault[1].duration"
  Phrase subject;         // "fault[1], at 1s client1 pauses for 40s"; "[lock] ttl" (W::Knob*)
  Phrase noun;            // "a pause of", "lock.ttl ="
  KnobUnit unit = KnobUnit::Duration;
  int line = 0;           // where the file has it (its table's line; 0: the top level)
  // The scenario's value (nullopt: the file leaves it to a default the table does not know).
  std::function<std::optional<std::int64_t>(const Scenario&)> get;
  // Sets it; throws ScenarioError (naming the file, line and key) for a value the loader would refuse.
  std::function<void(Scenario&, std::int64_t)> set;
  std::int64_t lowest = 0, highest = INT64_MAX;  // the values it may take
  std::int64_t search_highest = INT64_MAX;       // how far a search goes up (4 times the run's duration)
};

// The knob `parameter` names, for `option` ("--boundary", "--set") in
// messages. `guess` is the unit of a [lock] key the file does not write
// (the file's own text decides otherwise). Throws ScenarioError, naming the
// parameters there are, for one it cannot move.
Knob knob_of(const Scenario& s, const std::string& parameter, std::string_view option,
             KnobUnit guess = KnobUnit::Duration);

// What the parameters look like, for messages and --help.
std::string knob_parameters();

// A value as the file writes it: "10s", "42", "50000ppm".
std::string format_knob_value(KnobUnit unit, std::int64_t value);
// Its unit's name for an axis: "duration", "integer", "ppm".
std::string_view knob_unit_name(KnobUnit unit);

}  // namespace locksim
