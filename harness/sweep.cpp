#include "harness/sweep.hpp"

#include <fmt/format.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <version>

#include "harness/run.hpp"

namespace locksim {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::optional<std::int64_t> whole_number(std::string_view text) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return v;
}

// A decimal number, all of `text`: "0.5", "-3", "1e3". std::from_chars
// where the library has it for floating point (libstdc++); the libc++ of the
// playground's WebAssembly build (web/) has it for integers only, so there
// strtod (correctly rounded in musl as in glibc, and the build has no locale
// but "C") reads the same texts: what from_chars would refuse (a sign '+',
// spaces, hexadecimal) is refused first.
std::optional<double> decimal(std::string_view text) {
  double v = 0;
#if defined(__cpp_lib_to_chars)
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
#else
  if (text.empty() || !(text.front() == '-' || text.front() == '.' || (text.front() >= '0' && text.front() <= '9')) ||
      text.find_first_of("xX \t") != std::string_view::npos)
    return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return std::nullopt;
#endif
  return v;
}

// Parts per million, as parts per billion: "50000", "50000ppm", "0.5ppm", "5%".
std::optional<std::int64_t> ppb_of(std::string_view text) {
  double scale = 1000.0;
  if (text.size() > 3 && text.substr(text.size() - 3) == "ppm") text.remove_suffix(3);
  else if (text.size() > 1 && text.back() == '%') {
    text.remove_suffix(1);
    scale = 10'000'000.0;
  }
  const std::optional<double> v = decimal(text);
  if (!v || !std::isfinite(*v) || std::fabs(*v * scale) > 9e18) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(*v * scale));
}

std::string_view unit_example(KnobUnit unit) {
  switch (unit) {
    case KnobUnit::Duration: return "a duration with its unit, like 250ms, 10s, 1.5s";
    case KnobUnit::Integer: return "a whole number, like 3";
    case KnobUnit::Ppm: return "parts per million, like 50000, 50000ppm or 5%";
  }
  return "";
}

std::optional<std::int64_t> value_of(KnobUnit unit, std::string_view text) {
  switch (unit) {
    case KnobUnit::Duration: {
      const auto d = parse_duration(text);
      return d ? std::optional(d->count_ns()) : std::nullopt;
    }
    case KnobUnit::Integer: return whole_number(text);
    case KnobUnit::Ppm: return ppb_of(text);
  }
  return std::nullopt;
}

class AxisParser {
 public:
  AxisParser(const std::string& argument, const Knob& k, const std::string& path) : argument_(argument), k_(k), path_(path) {}

  [[noreturn]] void refuse(const std::string& why) const {
    throw ScenarioError(fmt::format("--set {}: {}. {} ({}:{}) takes {}: FROM..TO:POINTS (1s..40s:40), FROM..TO:step=STEP, "
                                    "or a list V1,V2,V3",
                                    argument_, why, k_.parameter, path_, k_.line, unit_example(k_.unit)));
  }

  std::int64_t value(std::string_view text) const {
    text = trim(text);
    const auto v = value_of(k_.unit, text);
    if (!v) refuse(fmt::format("'{}' is not {}", text, unit_example(k_.unit)));
    if (*v < k_.lowest || *v > k_.highest)
      refuse(fmt::format("{} is out of range: {} takes {} to {}", text, k_.parameter,
                         k_.lowest == INT64_MIN ? "any value" : format_knob_value(k_.unit, k_.lowest),
                         k_.highest == INT64_MAX ? "any larger" : format_knob_value(k_.unit, k_.highest)));
    return *v;
  }

  std::vector<std::int64_t> values(std::string_view spec) const {
    std::vector<std::int64_t> out;
    const auto dots = spec.find("..");
    if (dots == std::string_view::npos) {
      for (std::size_t from = 0; from <= spec.size();) {
        const auto comma = std::min(spec.find(',', from), spec.size());
        out.push_back(value(spec.substr(from, comma - from)));
        from = comma + 1;
      }
    } else {
      const auto colon = spec.find(':', dots);
      if (colon == std::string_view::npos) refuse("a range needs its points (:10) or its step (:step=5s)");
      const std::int64_t lo = value(spec.substr(0, dots)), hi = value(spec.substr(dots + 2, colon - dots - 2));
      if (hi < lo) refuse("the range goes down: write the smaller value first");
      const std::string_view how = trim(spec.substr(colon + 1));
      if (how.rfind("step=", 0) == 0) {
        const std::int64_t step = value_of(k_.unit, trim(how.substr(5))).value_or(0);
        if (step <= 0) refuse(fmt::format("step '{}' is not {} above zero", how.substr(5), unit_example(k_.unit)));
        if ((hi - lo) / step + 1 > static_cast<std::int64_t>(kMaxSweepPoints)) refuse(too_many());
        for (std::int64_t v = lo; v <= hi; v += step) out.push_back(v);
      } else {
        const auto n = whole_number(how);
        if (!n || *n < 1) refuse(fmt::format("'{}' is not a number of points (:10) or a step (:step=5s)", how));
        if (*n > static_cast<std::int64_t>(kMaxSweepPoints)) refuse(too_many());
        // Evenly spaced, both ends included; exact in integers.
        for (std::int64_t i = 0; i < *n; ++i)
          out.push_back(*n == 1 ? lo : static_cast<std::int64_t>(lo + static_cast<__int128>(hi - lo) * i / (*n - 1)));
      }
    }
    if (out.size() > kMaxSweepPoints) refuse(too_many());
    for (std::size_t i = 1; i < out.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (out[i] == out[j]) refuse(fmt::format("{} comes twice", format_knob_value(k_.unit, out[i])));
    return out;
  }

 private:
  std::string too_many() const { return fmt::format("more than {} points", kMaxSweepPoints); }
  const std::string& argument_;
  const Knob& k_;
  const std::string& path_;
};

// A [lock] key the file does not write takes the unit its values are written in.
KnobUnit unit_written(std::string_view spec) {
  const std::string_view first = trim(spec.substr(0, std::min(spec.find(".."), spec.find(','))));
  return parse_duration(first) ? KnobUnit::Duration : KnobUnit::Integer;
}

void set_point(Scenario& s, const std::vector<SweepAxis>& axes, std::size_t row, std::size_t column) {
  const std::size_t at[2] = {row, column};
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const SweepAxis& axis = axes[a];
    const std::int64_t v = axis.values[at[a]];
    try {
      axis.knob.set(s, v);
    } catch (const ScenarioError& e) {
      throw ScenarioError(fmt::format("--set {}={}: at {} = {}: {}", axis.knob.parameter, axis.spec, axis.knob.parameter,
                                      format_knob_value(axis.knob.unit, v), e.what()));
    }
  }
}

struct Outcome {
  std::set<ViolationKind> verdict;
  bool over_budget = false;
  std::string error;  // a run that threw
};

}  // namespace

SweepAxis parse_sweep_axis(const Scenario& s, const std::string& set_argument) {
  const auto eq = set_argument.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == set_argument.size())
    throw ScenarioError("--set " + set_argument + ": write KEY=SPEC, e.g. --set fault[1].duration=1s..40s:40 (" +
                        knob_parameters() + ")");
  const std::string key(trim(std::string_view(set_argument).substr(0, eq)));
  const std::string spec(trim(std::string_view(set_argument).substr(eq + 1)));
  SweepAxis axis{knob_of(s, key, "--set", unit_written(spec)), spec, {}};
  axis.values = AxisParser(set_argument, axis.knob, s.path).values(spec);
  return axis;
}

Scenario sweep_point(const Scenario& s, const std::vector<SweepAxis>& axes, std::size_t row, std::size_t column) {
  Scenario t = s;
  set_point(t, axes, row, column);
  return t;
}

SweepResult run_sweep(const Scenario& s, const std::vector<SweepAxis>& axes, const SweepOptions& o) {
  SweepResult r;
  r.path = s.path;
  r.axes = axes;
  r.seeds = std::max<std::uint64_t>(1, o.seeds);
  if (axes.empty() || axes.size() > 2) throw ScenarioError("sweep: give one or two --set KEY=SPEC");
  if (axes.size() == 2 && axes[0].knob.parameter == axes[1].knob.parameter)
    throw ScenarioError("--set " + axes[0].knob.parameter + " is given twice: a sweep's two axes are two numbers");
  const std::size_t points = r.rows() * r.columns();
  if (static_cast<double>(points) * static_cast<double>(r.seeds) > static_cast<double>(kMaxSweepRuns))
    throw ScenarioError(fmt::format("sweep: {} points x {} seeds is more than {} runs: fewer points or seeds", points, r.seeds,
                                    kMaxSweepRuns));
  // Every point's scenario first, in this thread: a value the loader refuses stops the sweep before any run.
  std::vector<Scenario> scenarios;
  scenarios.reserve(points);
  for (std::size_t p = 0; p < points; ++p) scenarios.push_back(sweep_point(s, axes, p / r.columns(), p % r.columns()));

  const std::uint64_t total = points * r.seeds;
  std::vector<Outcome> outcomes(total);
  std::atomic<std::uint64_t> next{0};
  auto worker = [&] {
    for (std::uint64_t i = next++; i < total; i = next++) {
      RunOptions ro;
      ro.seed = i % r.seeds + 1;
      ro.max_events = o.max_events;
      ro.keep_events = 0;
      Outcome& out = outcomes[i];
      try {
        const RunResult run = run_scenario(scenarios[i / r.seeds], ro);
        out.verdict = run.verdict;
        out.over_budget = run.budget_exhausted;
      } catch (const std::exception& e) {
        out.error = e.what();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 1; j < std::max(1, o.jobs); ++j) threads.emplace_back(worker);
  worker();
  for (std::thread& t : threads) t.join();

  // Summed in index order: the same cells for any number of threads.
  r.cells.resize(points);
  for (std::uint64_t i = 0; i < total; ++i) {
    SweepCell& c = r.cells[i / r.seeds];
    const Outcome& out = outcomes[i];
    ++c.runs;
    if (!out.error.empty()) {
      if (c.internal_errors++ == 0) c.first_error = fmt::format("seed {}: {}", i % r.seeds + 1, out.error);
      continue;
    }
    c.over_budget += out.over_budget;
    if (out.verdict.empty()) continue;
    if (c.violating++ == 0) c.first_violating_seed = i % r.seeds + 1;
    for (ViolationKind k : out.verdict) ++c.kinds[k];
  }
  return r;
}

std::set<ViolationKind> SweepResult::found() const {
  std::set<ViolationKind> out;
  for (const SweepCell& c : cells)
    for (const auto& [k, n] : c.kinds) out.insert(k);
  return out;
}

std::uint64_t SweepResult::internal_errors() const {
  std::uint64_t n = 0;
  for (const SweepCell& c : cells) n += c.internal_errors;
  return n;
}

}  // namespace locksim
