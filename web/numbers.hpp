// The numbers of a scenario that the playground's sliders move, and a move
// written back into the scenario's own text.
//
// A slider is one of the sweep's knobs (harness/scenario_knobs.hpp: the same
// parameter names, units and limits as `locksim sweep --set`): each [lock]
// key the file writes as a duration (ttl, lease_ttl, session_timeout, ...),
// each fault's length (a pause's, a partition's: fault[N].duration), size
// (a clock jump's or a delay's: fault[N].by) and drift (fault[N].drift_ppm).
//
// A move edits the text where the file writes the number, character for
// character, and nothing else: the student's comments, layout and other
// edits stay; the editor shows what will run, and a link carries it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "harness/scenario.hpp"
#include "harness/scenario_knobs.hpp"
#include "reports/lang.hpp"

namespace locksim::web {

struct Slider {
  std::string parameter;  // "fault[1].duration", as `locksim sweep --set` names it
  std::string label;      // "[lock] ttl"; "fault[1]: at 1s client1 pauses for 40s" (in the language)
  KnobUnit unit = KnobUnit::Duration;
  std::int64_t value = 0;                 // in the unit's base (ns, the integer, ppb)
  std::int64_t lowest = 0, highest = 0;   // what it may take (the knob's limits, within 4 x the run)
  int line = 0;                           // the line of the file that writes it
};

// The sliders of a scenario read from `text` (its parse), in file order:
// [lock] first, then the faults.
std::vector<Slider> sliders(const Scenario& s, std::string_view text, Lang lang = Lang::En);

// `text` with the number `parameter` names set to `value` (in the unit's
// base), written where the text writes it, as the file would write it
// ("20s", "-5s", 42, 0.5). Throws ScenarioError, naming the file, line and
// key as the loader does, for a value the loader refuses or a number the text
// does not write (a default: nothing to move). `path` names the file in
// messages.
std::string set_number(std::string_view text, const std::string& path, const std::string& parameter, std::int64_t value);

}  // namespace locksim::web
