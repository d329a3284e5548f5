// The explorer's summary in words (text, either language) and as JSON, and
// `locksim merge`'s reading of shards' JSON results.
#pragma once

#include <string>
#include <vector>

#include "harness/explore.hpp"
#include "reports/lang.hpp"

namespace locksim {

std::string explore_text(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s, Lang lang = Lang::En);
std::string explore_json(const Scenario& base, const ExploreOptions& o, const ExploreSummary& s);
// `explore --matrix`: the share of runs with each violation, a row per variant.
std::string matrix_text(const Scenario& base, const ExploreOptions& o, const std::vector<MatrixRow>& rows, Lang lang = Lang::En);

// A label of what found a violation as the JSON keys and the English text
// write it ("client1 read", "a time, 3 nodes at once", "until client2 read",
// "lease", "client1 work"), and read back (merge); nullopt: not a label.
std::string found_label_key(const FoundLabel& l);
std::optional<FoundLabel> found_label_of_key(const std::string& key);

// `locksim merge`: shards' JSON results (explore --format json, or --result)
// back into the summary one unsharded run gives. Throws ScenarioError when
// the files are not shards of one exploration.
struct Merged {
  std::string scenario_path;
  ExploreOptions options;  // as the shards ran (shard fields reset)
  ExploreSummary summary;
  std::vector<std::uint64_t> missing_shards;  // 1-based
};
Merged merge_results(const std::vector<std::string>& json_texts, const std::vector<std::string>& names);

}  // namespace locksim
