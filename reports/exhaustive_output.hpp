// The bounded exhaustive search's words: its summary as text and as JSON,
// a finding as a scenario file, shards' JSON results merged back.
#pragma once

#include <string>
#include <vector>

#include "harness/explore_exhaustive.hpp"
#include "reports/lang.hpp"

namespace locksim {

// The scenario with a finding's faults (and its expect saying what it shows).
// Throws std::logic_error if, run on its own, it does not show `kind`, the
// violation the search found it for.
Scenario exhaustive_scenario(const Scenario& base, const ExploreOptions& o, const ExhaustiveFinding& f,
                             ViolationKind kind);

// "no overlap, stale-write or lost-update in any schedule of ≤ 2 faults
// (pause, crash) over 25 anchors × 7 lengths".
std::string exhaustive_text(const Scenario& base, const ExploreOptions& o, const ExhaustiveOptions& x,
                            const ExhaustiveSummary& s, Lang lang = Lang::En);
std::string exhaustive_json(const Scenario& base, const ExploreOptions& o, const ExhaustiveOptions& x,
                            const ExhaustiveSummary& s);
// Shards' JSON results into the unsharded summary (ScenarioError if they are not one search's).
struct MergedExhaustive {
  std::string scenario_path;
  ExploreOptions options;
  ExhaustiveOptions exhaustive;
  ExhaustiveSummary summary;
  std::vector<std::uint64_t> missing_shards;
};
MergedExhaustive merge_exhaustive(const std::vector<std::string>& json_texts, const std::vector<std::string>& names);
bool is_exhaustive_result(const std::string& json_text);
// A finding's faults in words, "; "-separated: "at 1s client1 pauses for 40s; ...".
std::string finding_faults_text(const ExhaustiveFinding& f, Lang lang = Lang::En);

}  // namespace locksim
