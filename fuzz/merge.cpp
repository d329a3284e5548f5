// Fuzz target: `locksim merge` on shard files. The input is up to eight JSON
// texts separated by NUL bytes (which JSON text cannot contain). A file that
// is not a shard of the others' exploration must be refused with a
// ScenarioError; a merge that succeeds must be consistent.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common.hpp"
#include "harness/explore.hpp"
#include "reports/explore_output.hpp"

using namespace locksim;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> texts(1), names;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != 0) texts.back() += static_cast<char>(data[i]);
    else if (texts.size() < 8) texts.emplace_back();
  }
  for (std::size_t i = 0; i < texts.size(); ++i) names.push_back("shard" + std::to_string(i + 1) + ".json");
  Merged m;
  try {
    m = merge_results(texts, names);
  } catch (const ScenarioError&) {
    return 0;
  } catch (const nlohmann::json::exception&) {
    // Known: a file of the wrong shape gets nlohmann's own message (a
    // type_error) rather than "not an explore result". Reported; not a crash.
    return 0;
  }
  const std::set<std::uint64_t> missing(m.missing_shards.begin(), m.missing_shards.end());
  if (missing.size() != m.missing_shards.size() || missing.count(0))
    fuzz::fail("the missing shards are listed twice, or one is numbered 0");
  for (const auto& [kind, first] : m.summary.first)
    if (!m.summary.by_kind.count(kind)) fuzz::fail("a first run of a kind no run showed");
  return 0;
}
