// What `locksim sweep` shows of its grid (harness/sweep.hpp): a table, CSV,
// one JSON document, and a heatmap SVG of the violation rate over the two
// numbers swept (a strip for one), with the safe/unsafe boundary drawn.
#pragma once

#include <string>

#include "harness/sweep.hpp"
#include "reports/lang.hpp"

namespace locksim {

// Rows the first axis, columns the second; each cell the share of runs that
// violated something and the kinds' letters; then where each column flips.
std::string sweep_text(const SweepResult& r, const std::string& title, Lang lang = Lang::En);
// One line per point: the values (as written and in their base unit), runs, rates and kinds.
std::string sweep_csv(const SweepResult& r);
std::string sweep_json(const SweepResult& r, bool allowed);
// The first axis runs along x, the second up y; a point is safe when no run violated anything.
std::string sweep_svg(const SweepResult& r, const std::string& title, Lang lang = Lang::En);

// Where safe and unsafe meet along the first axis, per value of the second:
// pairs of neighbouring row indices whose safety differs.
struct SweepFlip {
  std::size_t column, row_before, row_after;
  bool unsafe_after;
};
std::vector<SweepFlip> sweep_flips(const SweepResult& r);

}  // namespace locksim
