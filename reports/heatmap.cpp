#include "reports/heatmap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <nlohmann/json.hpp>

#include "reports/markup.hpp"
#include "reports/words.hpp"

namespace locksim {

namespace {

using markup::esc;

std::string percent(const SweepCell& c) {
  if (c.violating == 0) return "0%";
  const double p = 100.0 * c.rate();
  // Never "0%" or "100%" for a share that is not: 1 of 1000 is "0.1%".
  if (p < 1.0) return fmt::format("{:.1f}%", p);
  if (c.violating < c.runs && p > 99.0) return "99%";
  return fmt::format("{:.0f}%", p);
}

std::string cell_text(const SweepCell& c) {
  std::string s = percent(c);
  if (!c.kinds.empty()) s += " ";
  for (const auto& [k, n] : c.kinds) s += violation_mark(k);
  if (c.internal_errors) s += " !";
  return s;
}

std::string value_text(const SweepAxis& a, std::size_t i) { return format_knob_value(a.knob.unit, a.values[i]); }

bool safe(const SweepCell& c) { return c.violating == 0; }

std::string kinds_legend(const SweepResult& r, Lang lang = Lang::En) {
  std::string s;
  for (ViolationKind k : kAllViolationKinds)
    if (r.found().count(k)) s += fmt::format("{}{} {}", s.empty() ? "" : std::string(word(lang, W::KindSeparator)), violation_mark(k), kind_words(lang, k));
  return s;
}

// Rows of cells, each column as wide as its widest text.
std::string table_text(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], display_width(row[i]));
    }
  std::string out;
  for (const auto& row : rows) {
    std::string l = "  ";
    for (std::size_t i = 0; i < row.size(); ++i) l += fmt::format("{}{:<{}}", i == 0 ? "" : "  ", row[i], width[i]);
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  }
  return out;
}

// One number: a row per value.
std::string list_text(const SweepResult& r, Lang lang) {
  std::vector<std::vector<std::string>> rows{{r.axes[0].knob.parameter, say(lang, W::SweepViolated)}};
  for (std::size_t i = 0; i < r.rows(); ++i) rows.push_back({value_text(r.axes[0], i), cell_text(r.at(i, 0))});
  return table_text(rows);
}

// Two numbers, as the heatmap lays them out: the first across, the second
// up. Columns that would not fit a terminal's 100 are cut into blocks, one
// under the other, each with the rows' values.
std::string grid_text(const SweepResult& r) {
  const SweepAxis &x = r.axes[0], &y = r.axes[1];
  const std::string corner = y.knob.parameter + " \\ " + x.knob.parameter;
  std::size_t label = corner.size();
  for (std::size_t j = 0; j < y.values.size(); ++j) label = std::max(label, value_text(y, j).size());
  std::string out;
  for (std::size_t from = 0; from < x.values.size();) {
    std::size_t to = from, used = 2 + label;
    while (to < x.values.size()) {
      std::size_t w = value_text(x, to).size();
      for (std::size_t j = 0; j < y.values.size(); ++j) w = std::max(w, cell_text(r.at(to, j)).size());
      if (to > from && used + 2 + w > 100) break;
      used += 2 + w;
      ++to;
    }
    std::vector<std::vector<std::string>> rows{{corner}};
    for (std::size_t i = from; i < to; ++i) rows[0].push_back(value_text(x, i));
    for (std::size_t j = y.values.size(); j-- > 0;) {
      rows.push_back({value_text(y, j)});
      for (std::size_t i = from; i < to; ++i) rows.back().push_back(cell_text(r.at(i, j)));
    }
    if (from > 0) out += '\n';  // not `"\n" + table_text(rows)`: g++ 12 -O2 warns of it wrongly (see sweep_csv)
    out += table_text(rows);
    from = to;
  }
  return out;
}

}  // namespace

std::vector<SweepFlip> sweep_flips(const SweepResult& r) {
  std::vector<SweepFlip> out;
  for (std::size_t c = 0; c < r.columns(); ++c)
    for (std::size_t row = 0; row + 1 < r.rows(); ++row)
      if (safe(r.at(row, c)) != safe(r.at(row + 1, c))) out.push_back({c, row, row + 1, safe(r.at(row, c))});
  return out;
}

std::string sweep_text(const SweepResult& r, const std::string& title, Lang lang) {
  const SweepAxis& a = r.axes.front();
  std::string out = r.axes.size() > 1 ? say(lang, W::SweepOfTwo, {{"path", r.path}, {"a", a.knob.parameter}, {"b", r.axes[1].knob.parameter}})
                                      : say(lang, W::SweepOf, {{"path", r.path}, {"a", a.knob.parameter}});
  out += "\n  " + title + "\n  ";
  // Laid out as the heatmap draws it (sweep_svg): the first number across,
  // the second up (its first value in the bottom row); one number: a list.
  if (r.axes.size() > 1)
    out += say(lang, W::SweepColumnsRows, {{"a", a.knob.parameter}, {"sa", say(lang, a.knob.subject)},
                                           {"b", r.axes[1].knob.parameter}, {"sb", say(lang, r.axes[1].knob.subject)}});
  else
    out += say(lang, W::SweepRows, {{"a", a.knob.parameter}, {"sa", say(lang, a.knob.subject)}});
  out += "\n  " + say(lang, W::SweepCounts,
                      {{"points", say_count(lang, r.cells.size(), W::SweepPointOne, W::SweepPointMany)},
                       {"seeds", say_count(lang, r.seeds, W::SweepSeedOne, W::SweepSeedMany)},
                       {"n", std::to_string(r.seeds)},
                       {"runs", say_count(lang, r.cells.size() * r.seeds, W::ShrinkRunOne, W::ShrinkRunMany)}});
  const std::string legend = kinds_legend(r, lang);
  out += legend.empty() ? "\n\n" : say(lang, W::SweepKinds, {{"legend", legend}}) + "\n\n";
  out += r.axes.size() > 1 ? grid_text(r) : list_text(r, lang);

  ((out += '\n') += say(lang, W::SweepWhere, {{"a", a.knob.parameter}})) += '\n';  // not "\n" + ...: see sweep_csv
  const std::vector<SweepFlip> flips = sweep_flips(r);
  for (std::size_t c = 0; c < r.columns(); ++c) {
    std::string words;
    for (const SweepFlip& f : flips)
      if (f.column == c)
        words += (words.empty() ? "" : std::string(word(lang, W::SweepFlipSeparator))) +
                 say(lang, f.unsafe_after ? W::SweepUnsafeFrom : W::SweepSafeFrom,
                     {{"v", value_text(a, f.row_after)}, {"w", value_text(a, f.row_before)}});
    if (words.empty()) words = say(lang, safe(r.at(0, c)) ? W::SweepSafeAtEvery : W::SweepUnsafeAtEvery);
    out += fmt::format("  {}{}\n", r.axes.size() > 1 ? r.axes[1].knob.parameter + " = " + value_text(r.axes[1], c) + ": " : "", words);
  }
  if (const std::uint64_t n = r.internal_errors()) {
    ((out += '\n') += say(lang, W::SweepFailedInside, {{"runs", say_count(lang, n, W::ShrinkRunOne, W::ShrinkRunMany)}})) += '\n';
    for (const SweepCell& c : r.cells)
      if (c.internal_errors) out += "  " + c.first_error + "\n";
  }
  return out;
}

std::string sweep_csv(const SweepResult& r) {
  std::string out;
  for (const SweepAxis& a : r.axes) {
    const std::string base = a.knob.unit == KnobUnit::Duration ? "_ns" : a.knob.unit == KnobUnit::Ppm ? "_ppb" : "_value";
    out += a.knob.parameter + "," + a.knob.parameter + base + ",";
  }
  out += "runs,violating,rate";
  // Appended in two steps: `"," + std::string(...)` here makes g++ 12 -O2
  // warn of a memcpy overlap that cannot happen (-Wrestrict, GCC bug 105329).
  for (ViolationKind k : kAllViolationKinds) (out += ',') += violation_name(k);
  out += ",internal_errors,first_violating_seed\n";
  for (std::size_t row = 0; row < r.rows(); ++row)
    for (std::size_t c = 0; c < r.columns(); ++c) {
      const std::size_t at[2] = {row, c};
      const SweepCell& cell = r.at(row, c);
      for (std::size_t i = 0; i < r.axes.size(); ++i)
        out += fmt::format("{},{},", value_text(r.axes[i], at[i]), r.axes[i].values[at[i]]);
      out += fmt::format("{},{},{:.4f}", cell.runs, cell.violating, cell.rate());
      for (ViolationKind k : kAllViolationKinds) out += fmt::format(",{}", cell.kinds.count(k) ? cell.kinds.at(k) : 0);
      out += fmt::format(",{},{}\n", cell.internal_errors, cell.first_violating_seed);
    }
  return out;
}

std::string sweep_json(const SweepResult& r, bool allowed) {
  using json = nlohmann::ordered_json;
  json axes = json::array();
  for (const SweepAxis& a : r.axes) {
    json values = json::array(), shown = json::array();
    for (std::size_t i = 0; i < a.values.size(); ++i) {
      values.push_back(a.values[i]);
      shown.push_back(value_text(a, i));
    }
    axes.push_back({{"parameter", a.knob.parameter}, {"subject", say(Lang::En, a.knob.subject)}, {"unit", knob_unit_name(a.knob.unit)},
                    {"spec", a.spec}, {"values", values}, {"shown", shown}});
  }
  json cells = json::array();
  for (std::size_t row = 0; row < r.rows(); ++row)
    for (std::size_t c = 0; c < r.columns(); ++c) {
      const SweepCell& cell = r.at(row, c);
      json kinds = json::object();
      for (const auto& [k, n] : cell.kinds) kinds[std::string(violation_name(k))] = n;
      json j = {{"at", r.axes.size() > 1 ? json{row, c} : json{row}}, {"runs", cell.runs}, {"violating", cell.violating},
                {"rate", cell.rate()}, {"kinds", kinds}, {"internal_errors", cell.internal_errors},
                {"over_budget", cell.over_budget}};
      if (cell.first_violating_seed) j["first_violating_seed"] = cell.first_violating_seed;
      if (!cell.first_error.empty()) j["first_error"] = cell.first_error;
      cells.push_back(j);
    }
  json flips = json::array();
  for (const SweepFlip& f : sweep_flips(r))
    flips.push_back({{"column", f.column}, {"before", f.row_before}, {"after", f.row_after}, {"unsafe_after", f.unsafe_after}});
  json found = json::array();
  for (ViolationKind k : r.found()) found.push_back(violation_name(k));
  const json doc = {{"scenario", r.path}, {"seeds", r.seeds}, {"axes", axes}, {"cells", cells},
                    {"boundary", flips}, {"found", found}, {"allowed", allowed}};
  return doc.dump();
}

namespace {

// An axis's values as numbers in one unit, for tick labels: "s", "ms", "ppm", "".
struct AxisScale {
  double divisor = 1;
  std::string unit;
};

AxisScale scale_of(const SweepAxis& a) {
  if (a.knob.unit == KnobUnit::Ppm) return {1000.0, "ppm"};
  if (a.knob.unit == KnobUnit::Integer) return {1.0, ""};
  std::int64_t largest = 0;
  for (std::int64_t v : a.values) largest = std::max(largest, v < 0 ? -v : v);
  if (largest >= 1'000'000'000) return {1e9, "s"};
  if (largest >= 1'000'000) return {1e6, "ms"};
  if (largest >= 1'000) return {1e3, "µs"};
  return {1.0, "ns"};
}

std::string tick(const AxisScale& s, std::int64_t v) {
  std::string t = fmt::format("{:.3f}", static_cast<double>(v) / s.divisor);
  while (t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t == "-0" ? "0" : t;
}

std::string axis_title(const SweepAxis& a, const AxisScale& s) { return a.knob.parameter + (s.unit.empty() ? "" : " (" + s.unit + ")"); }
// Under the title, smaller: what the number is in the file.
std::string axis_note(const SweepAxis& a, Lang lang) { return say(lang, W::SweepSvgAxisNote, {{"what", say(lang, a.knob.subject)}}); }

// Safe: pale green. Unsafe: light orange at a few runs to dark red at every run.
std::string colour(const SweepCell& c) {
  if (c.violating == 0) return "#dff0d8";
  struct Stop { double at; int r, g, b; };
  static constexpr Stop stops[] = {{0.0, 0xfe, 0xe0, 0x8b}, {0.5, 0xf4, 0x6d, 0x43}, {1.0, 0xa5, 0x00, 0x26}};
  const double x = std::clamp(c.rate(), 0.0, 1.0);
  const Stop& lo = x <= 0.5 ? stops[0] : stops[1];
  const Stop& hi = x <= 0.5 ? stops[1] : stops[2];
  const double f = (x - lo.at) / (hi.at - lo.at);
  auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(lo.r, hi.r), mix(lo.g, hi.g), mix(lo.b, hi.b));
}

struct Plot {
  double left = 0, top = 64, cell_w = 0, cell_h = 0;
  std::size_t nx = 0, ny = 0;
  double x(std::size_t i) const { return left + static_cast<double>(i) * cell_w; }
  // The second axis runs up: its first value at the bottom.
  double y(std::size_t j) const { return top + static_cast<double>(ny - 1 - j) * cell_h; }
  double right() const { return x(nx); }
  double bottom() const { return top + static_cast<double>(ny) * cell_h; }
};

std::string cells_svg(const SweepResult& r, const Plot& p, Lang lang) {
  std::string s = "<g class=\"cells\">";
  for (std::size_t i = 0; i < p.nx; ++i)
    for (std::size_t j = 0; j < p.ny; ++j) {
      const SweepCell& c = r.at(i, j);
      std::string where = r.axes[0].knob.parameter + " = " + value_text(r.axes[0], i);
      if (r.axes.size() > 1) where += ", " + r.axes[1].knob.parameter + " = " + value_text(r.axes[1], j);
      std::string tip = say(lang, W::SweepSvgTip, {{"where", where}, {"violating", std::to_string(c.violating)}, {"runs", std::to_string(c.runs)}});
      for (const auto& [k, n] : c.kinds) tip += fmt::format("; {} {}", violation_name(k), n);
      s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}" fill="{}" stroke="#ffffff" stroke-width="1"><title>{}</title></rect>)",
                       p.x(i), p.y(j), p.cell_w, p.cell_h, colour(c), esc(tip));
      const std::string label = percent(c);
      if (markup::text_width("100%", 11) + 12 <= p.cell_w && p.cell_h >= 16)
        s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" font-size="11" fill="{}">{}</text>)",
                         p.x(i) + p.cell_w / 2, p.y(j) + p.cell_h / 2 + 4, c.rate() > 0.55 ? "#ffffff" : "#222222", label);
    }
  return s + "</g>";
}

// The edges between a safe cell and an unsafe one, as one path.
std::string boundary_svg(const SweepResult& r, const Plot& p) {
  std::string d;
  for (std::size_t i = 0; i < p.nx; ++i)
    for (std::size_t j = 0; j < p.ny; ++j) {
      if (i + 1 < p.nx && safe(r.at(i, j)) != safe(r.at(i + 1, j)))
        d += fmt::format("M{:.1f} {:.1f}V{:.1f}", p.x(i + 1), p.y(j), p.y(j) + p.cell_h);
      if (j + 1 < p.ny && safe(r.at(i, j)) != safe(r.at(i, j + 1)))
        d += fmt::format("M{:.1f} {:.1f}H{:.1f}", p.x(i), p.y(j), p.x(i + 1));
    }
  if (d.empty()) return "";
  return fmt::format(R"(<path class="boundary" d="{}" fill="none" stroke="#111111" stroke-width="3" stroke-linecap="square"/>)", d);
}

std::string axes_svg(const SweepResult& r, const Plot& p, Lang lang) {
  std::string s = "<g class=\"axes\" fill=\"#222222\">";
  const AxisScale sx = scale_of(r.axes[0]);
  double widest = 0;
  for (std::int64_t v : r.axes[0].values) widest = std::max(widest, markup::text_width(tick(sx, v), 12));
  const std::size_t every = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil((widest + 8) / p.cell_w)));
  for (std::size_t i = 0; i < p.nx; i += every)
    s += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#222222"/><text x="{0:.1f}" y="{3:.1f}" text-anchor="middle" font-size="12">{4}</text>)",
                     p.x(i) + p.cell_w / 2, p.bottom(), p.bottom() + 5, p.bottom() + 19, esc(tick(sx, r.axes[0].values[i])));
  s += fmt::format(R"(<text x="{0:.1f}" y="{1:.1f}" text-anchor="middle" font-size="13">{2}</text><text x="{0:.1f}" y="{3:.1f}" text-anchor="middle" font-size="11" fill="#555555">{4}</text>)",
                   (p.left + p.right()) / 2, p.bottom() + 40, esc(axis_title(r.axes[0], sx)), p.bottom() + 56, esc(axis_note(r.axes[0], lang)));
  if (r.axes.size() > 1) {
    const AxisScale sy = scale_of(r.axes[1]);
    const std::size_t step = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(16 / p.cell_h)));
    for (std::size_t j = 0; j < p.ny; j += step)
      s += fmt::format(R"(<line x1="{0:.1f}" y1="{1:.1f}" x2="{2:.1f}" y2="{1:.1f}" stroke="#222222"/><text x="{3:.1f}" y="{4:.1f}" text-anchor="end" font-size="12">{5}</text>)",
                       p.left - 5, p.y(j) + p.cell_h / 2, p.left, p.left - 8, p.y(j) + p.cell_h / 2 + 4,
                       esc(tick(sy, r.axes[1].values[j])));
    const double cy = (p.top + p.bottom()) / 2;
    for (const auto& [x, size, fill, text] : {std::tuple{18.0, 13, "#222222", axis_title(r.axes[1], sy)},
                                              std::tuple{33.0, 11, "#555555", axis_note(r.axes[1], lang)}})
      s += fmt::format(R"~(<text x="{0:.1f}" y="{1:.1f}" text-anchor="middle" font-size="{2}" fill="{3}" transform="rotate(-90 {0:.1f} {1:.1f})">{4}</text>)~",
                       x, cy, size, fill, esc(text));
  }
  return s + "</g>";
}

std::string legend_svg(const SweepResult& r, double x, double y, Lang lang) {
  std::string s = fmt::format(R"(<g class="legend" font-size="12" fill="#222222"><text x="{:.1f}" y="{:.1f}" font-weight="bold">{}</text>)", x, y,
                              esc(say(lang, W::SweepSvgLegend)));
  y += 10;
  s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="18" height="14" fill="{}"/><text x="{:.1f}" y="{:.1f}">{}</text>)",
                   x, y, colour(SweepCell{}), x + 26, y + 11, esc(say(lang, W::SweepSvgSafe)));
  y += 24;
  // The unsafe scale, from a few runs (bottom) to all (top).
  constexpr int kSteps = 20;
  constexpr double kBar = 100;
  for (int i = 0; i < kSteps; ++i) {
    SweepCell c;
    c.runs = kSteps;
    c.violating = static_cast<std::uint64_t>(kSteps - i);
    s += fmt::format(R"(<rect x="{:.1f}" y="{:.1f}" width="18" height="{:.1f}" fill="{}"/>)", x, y + i * kBar / kSteps,
                     kBar / kSteps + 0.5, colour(c));
  }
  s += fmt::format(R"(<text x="{0:.1f}" y="{1:.1f}">{4}</text><text x="{0:.1f}" y="{2:.1f}">50%</text><text x="{0:.1f}" y="{3:.1f}">{5}</text>)",
                   x + 26, y + 10, y + kBar / 2 + 4, y + kBar, esc(say(lang, W::SweepSvgAll)), esc(say(lang, W::SweepSvgFew)));
  y += kBar + 22;
  s += fmt::format(R"(<path d="M{:.1f} {:.1f}h18" stroke="#111111" stroke-width="3"/><text x="{:.1f}" y="{:.1f}">{}</text>)",
                   x, y, x + 26, y + 4, esc(say(lang, W::SweepSvgBoundary)));
  if (!r.found().empty()) {
    y += 26;
    s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", x, y, esc(say(lang, W::SweepSvgKindsSeen)));
    for (ViolationKind k : r.found()) {
      y += 16;
      s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{}</text>)", x + 8, y, violation_name(k));
    }
  }
  return s + "</g>";
}

}  // namespace

std::string sweep_svg(const SweepResult& r, const std::string& title, Lang lang) {
  Plot p;
  p.nx = r.rows();
  p.ny = r.columns();
  p.cell_w = std::clamp(720.0 / static_cast<double>(p.nx), 14.0, 72.0);
  p.cell_h = r.axes.size() == 1 ? 56.0 : std::clamp(360.0 / static_cast<double>(p.ny), 20.0, 56.0);
  double widest = 0;
  if (r.axes.size() > 1) {
    const AxisScale sy = scale_of(r.axes[1]);
    for (std::int64_t v : r.axes[1].values) widest = std::max(widest, markup::text_width(tick(sy, v), 12));
  }
  p.left = r.axes.size() > 1 ? 48 + widest + 12 : 24;
  const double legend_x = p.right() + 28;
  const double width = std::max(legend_x + 215, p.left + markup::text_width(axis_note(r.axes[0], lang), 11) + 24);
  const double height = std::max(p.bottom() + 72, p.top + 280);
  const std::string sub = say(lang, W::SweepSvgSub,
                              {{"path", r.path},
                               {"seeds", say_count(lang, r.seeds, W::SweepSeedOne, W::SweepSeedMany)},
                               {"n", std::to_string(r.seeds)},
                               {"runs", say_count(lang, r.cells.size() * r.seeds, W::ShrinkRunOne, W::ShrinkRunMany)}});
  std::string s = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" class="locksim-sweep" width="{0:.0f}" height="{1:.0f}" viewBox="0 0 {0:.0f} {1:.0f}" font-family="sans-serif" font-size="12">)",
                              width, height);
  s += fmt::format(R"(<rect width="100%" height="100%" fill="#ffffff"/><text x="{0:.1f}" y="24" font-size="16" font-weight="bold">{1}</text><text x="{0:.1f}" y="44" font-size="12" fill="#555555">{2}</text>)",
                   p.left, esc(title), esc(sub));
  s += cells_svg(r, p, lang) + boundary_svg(r, p) + axes_svg(r, p, lang) + legend_svg(r, legend_x, p.top + 12, lang);
  return s + "</svg>\n";
}

}  // namespace locksim
