// The boundary search's result in words (reports/boundary.hpp).
#include "reports/boundary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <nlohmann/json.hpp>

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
std::string edge_sentence(const BoundaryResult& b, const BoundaryEdge& e, Lang lang) {
  const bool file_above = e.above.verdict == b.given.verdict;
  const BoundarySide& file = file_above ? e.above : e.below;
  const BoundarySide& other = file_above ? e.below : e.above;
  const std::string file_way = say(lang, file_above ? W::BoundaryAtLeast : W::BoundaryAtMost);
  const std::string other_way = say(lang, file_above ? W::BoundaryAtMost : W::BoundaryAtLeast);
  const std::string noun = say(lang, b.noun), given = format_duration(b.given.value);
  if (minus(other.verdict, file.verdict).empty())
    return say(lang, W::BoundaryNeeds, {{"kinds", kinds_text(file.verdict, lang)}, {"noun", noun}, {"way", file_way},
                                        {"value", format_duration(file.value)}, {"given", given}});
  const bool adds = minus(file.verdict, other.verdict).empty();
  return say(lang, adds ? W::BoundaryAlsoGives : W::BoundaryInstead,
             {{"noun", noun}, {"way", other_way}, {"value", format_duration(other.value)},
              {"kinds", kinds_text(adds ? minus(other.verdict, file.verdict) : other.verdict, lang)}, {"given", given}});
}

}  // namespace

std::string boundary_text(const Scenario& s, const BoundaryResult& b, Lang lang) {
  std::string out = say(lang, W::BoundaryHead, {{"path", s.path}, {"parameter", b.parameter}}) + "\n  " + say(lang, b.subject) + "\n";
  const std::string runs = say_count(lang, static_cast<std::uint64_t>(b.runs), W::ShrinkRunOne, W::ShrinkRunMany);
  if (!b.found()) {
    out += "\n  " + say(lang, W::BoundarySame, {{"parameter", b.parameter}, {"from", format_duration(b.lowest)},
                                                {"to", format_duration(b.highest)}, {"kinds", kinds_text(b.given.verdict, lang)},
                                                {"runs", runs}}) + "\n";
    return out;
  }
  const std::string from = b.lower ? format_duration(b.lower->above.value)
                                   : say(lang, W::BoundaryLeastTried, {{"value", format_duration(b.lowest)}});
  const std::string to = b.upper ? format_duration(b.upper->below.value)
                                 : say(lang, W::BoundaryMostTried, {{"value", format_duration(b.highest)}});
  out += "\n  " + say(lang, W::BoundaryHolds, {{"kinds", kinds_text(b.given.verdict, lang)}, {"from", from}, {"to", to}, {"runs", runs}}) + "\n";
  for (const BoundaryEdge* e : b.edges()) {
    const bool below = b.lower && e == &*b.lower;
    out += "\n  " + say(lang, below ? W::BoundaryFlipsBelow : W::BoundaryFlipsAbove,
                        {{"a", format_duration(e->below.value)}, {"b", format_duration(e->above.value)}}) + "\n";
    for (const BoundarySide* side : {&e->below, &e->above}) {
      out += fmt::format("    {:<22} {}\n", format_duration(side->value), kinds_text(side->verdict, lang));
      if (side->detail.id != kNoWord) out += fmt::format("    {:<22} {}\n", "", say(lang, side->detail));
    }
  }
  out += "\n";
  for (const BoundaryEdge* e : b.edges()) out += "  " + edge_sentence(b, *e, lang) + "\n";
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
