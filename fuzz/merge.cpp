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

using namespace locksim;

namespace {

// Known bugs in merge_results (harness/explore.cpp), reported:
// - it reads the fields of violations.<kind> through a const json&, whose
//   operator[] on a missing key is undefined behaviour (nlohmann asserts):
//   {"runs": 1} without "first", or "first" without "run" or "seed";
// - a shard count of 10^15 has it list 10^15 missing shards (a hang).
bool reaches_known_bug(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  if (j.contains("shard") && j["shard"].is_array() && j["shard"].size() > 1 && j["shard"][1].is_number() &&
      !(j["shard"][1].get<double>() >= 0 && j["shard"][1].get<double>() <= 4096))
    return true;
  if (!j.contains("violations") || !j["violations"].is_object()) return false;
  for (const auto& [kind, v] : j["violations"].items()) {
    if (!v.is_object()) continue;
    if (!v.contains("runs")) return true;
    if (!v["runs"].is_number() || v["runs"] == 0) continue;
    if (!v.contains("first")) return true;
    const nlohmann::json& first = v["first"];
    if (first.is_object() && (!first.contains("run") || !first.contains("seed"))) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> texts(1), names;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] != 0) texts.back() += static_cast<char>(data[i]);
    else if (texts.size() < 8) texts.emplace_back();
  }
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (fuzz::skip_known() && reaches_known_bug(texts[i])) return 0;
    names.push_back("shard" + std::to_string(i + 1) + ".json");
  }
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
