// Course mode (`locksim run --quiz`, `--predict`): a scenario's set-up told
// without its story (`about`), its title or its expected verdict, and a
// student's prediction scored against what the run shows. docs/lab.md says
// how a class uses it.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "harness/scenario.hpp"
#include "reports/lang.hpp"

namespace locksim {

// What the scenario sets up, in plain words: the lock and its options, the
// nodes, network, storage, clients and every fault with its keys. Nothing of
// the title, `about` or [expect].
std::string setup_text(const Scenario& s, Lang lang = Lang::En);

// The question: the violation kinds to choose from, each with its meaning.
std::string prediction_question(Lang lang = Lang::En);

// "overlap, stale-write", "none" (or ""): the kinds predicted. Unknown
// names: nullopt, with `error` saying which and what the kinds are.
std::optional<std::set<ViolationKind>> parse_prediction(std::string_view text, std::string& error);

// "You predicted ...; the run shows ...: right." or what was missed and what was extra.
std::string score_text(const std::set<ViolationKind>& predicted, const std::set<ViolationKind>& found, Lang lang = Lang::En);

// Judged with no expectation: the verdict alone decides (no "as expected").
// The checkers' parameter in [expect] (liveness_window) stays.
void drop_expectation(Scenario& s);

}  // namespace locksim
