// The boundary search's result in words (reports/boundary.hpp).
#include "reports/boundary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

#include "harness/counted.hpp"
#include "reports/report.hpp"
#include "reports/words.hpp"

namespace locksim {

namespace {

std::set<ViolationKind> minus(const std::set<ViolationKind>& a, const std::set<ViolationKind>& b) {
  std::set<ViolationKind> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

// One edge in words. Where the other side has fewer kinds than the file's
// verdict, the file's failure needs this side: "The failure (...) needs a
// pause of at least 30.002s". Where it has more, the other side adds them:
// "lock.ttl = at most 999.999us also gives stuck".
std::string edge_sentence(const BoundaryResult& b, const BoundaryEdge& e) {
  const bool file_above = e.above.verdict == b.given.verdict;
  const BoundarySide& file = file_above ? e.above : e.below;
  const BoundarySide& other = file_above ? e.below : e.above;
  const char* file_way = file_above ? "at least" : "at most";
  const char* other_way = file_above ? "at most" : "at least";
  const std::string given = format_duration(b.given.value);
  if (minus(other.verdict, file.verdict).empty())
    return fmt::format("The failure ({}) needs {} {} {} (the file has {}).", kinds_text(file.verdict), b.noun, file_way,
                       format_duration(file.value), given);
  if (minus(file.verdict, other.verdict).empty())
    return fmt::format("{} {} {} also gives {} (the file has {}).", b.noun, other_way, format_duration(other.value),
                       kinds_text(minus(other.verdict, file.verdict)), given);
  return fmt::format("{} {} {} gives {} instead (the file has {}).", b.noun, other_way, format_duration(other.value),
                     kinds_text(other.verdict), given);
}

}  // namespace

std::string boundary_text(const Scenario& s, const BoundaryResult& b) {
  std::string out = fmt::format("{} — where the verdict flips as {} moves\n  {}\n", s.path, b.parameter, say(Lang::En, b.subject));
  const std::string runs = counted(static_cast<std::uint64_t>(b.runs), "run");
  if (!b.found()) {
    out += fmt::format("\n  {} from {} to {}: the same verdict at every value tried ({}; {})\n",
                       b.parameter, format_duration(b.lowest), format_duration(b.highest), kinds_text(b.given.verdict), runs);
    return out;
  }
  const std::string from = b.lower ? format_duration(b.lower->above.value) : format_duration(b.lowest) + " (the least tried)";
  const std::string to = b.upper ? format_duration(b.upper->below.value) : format_duration(b.highest) + " (the most tried)";
  out += fmt::format("\n  the file's verdict ({}) holds from {} to {} ({}, to the nanosecond)\n", kinds_text(b.given.verdict),
                     from, to, runs);
  for (const BoundaryEdge* e : b.edges()) {
    out += fmt::format("\n  {} it flips between {} and {}:\n", b.lower && e == &*b.lower ? "below," : "above,",
                       format_duration(e->below.value), format_duration(e->above.value));
    for (const BoundarySide* side : {&e->below, &e->above}) {
      out += fmt::format("    {:<22} {}\n", format_duration(side->value), kinds_text(side->verdict));
      if (side->detail.id != kNoWord) out += fmt::format("    {:<22} {}\n", "", say(Lang::En, side->detail));
    }
  }
  out += "\n";
  for (const BoundaryEdge* e : b.edges()) out += "  " + edge_sentence(b, *e) + "\n";
  return out;
}

std::string boundary_json(const Scenario& s, const BoundaryResult& b) {
  using json = nlohmann::ordered_json;
  auto side = [](const BoundarySide& x) {
    json v = json::array();
    for (ViolationKind k : x.verdict) v.push_back(violation_name(k));
    return json{{"value_ns", x.value.count_ns()}, {"value", format_duration(x.value)}, {"verdict", v}, {"detail", say(Lang::En, x.detail)}};
  };
  auto edge = [&](const std::optional<BoundaryEdge>& e) {
    return e ? json{{"below", side(e->below)}, {"above", side(e->above)}} : json(nullptr);
  };
  json j = {{"scenario", s.path}, {"parameter", b.parameter}, {"subject", say(Lang::En, b.subject)}, {"given", side(b.given)},
            {"found", b.found()}, {"runs", b.runs},
            {"searched_ns", {b.lowest.count_ns(), b.highest.count_ns()}},
            {"lower", edge(b.lower)}, {"upper", edge(b.upper)}};
  return j.dump();
}

}  // namespace locksim
