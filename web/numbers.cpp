#include "web/numbers.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <variant>

#include "harness/faults/kind.hpp"
#include "reports/words.hpp"

namespace locksim::web {

namespace {

constexpr std::string_view kOption = "slider";

// Where a parameter's number sits in the TOML document: the keys and array
// indices from the root ("fault", 0, "duration"; "client", 1, "clock", "offset").
using Step = std::variant<std::string, std::size_t>;

[[noreturn]] void refuse(const std::string& parameter, const std::string& why) {
  throw ScenarioError(std::string(kOption) + ": \"" + parameter + "\" " + why);
}

// The element of [[table]] that `which` names: "2" (from 1) or a name.
std::size_t element(const toml::table& root, const std::string& table, const std::string& which, const std::string& parameter) {
  const toml::array* items = root[table].as_array();
  const std::size_t count = items ? items->size() : 0;
  if (!which.empty() && std::all_of(which.begin(), which.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const std::size_t n = which.size() > 9 ? 0 : static_cast<std::size_t>(std::stoul(which));
    if (n >= 1 && n <= count) return n - 1;
  } else {
    for (std::size_t i = 0; i < count; ++i)
      if (const auto name = (*items)[i].as_table() ? (*(*items)[i].as_table())["name"].value<std::string>() : std::nullopt;
          name && *name == which)
        return i;
  }
  refuse(parameter, "names no [[" + table + "]] of the file");
}

// The path of `parameter`'s number, as harness/scenario_knobs.cpp names it.
std::vector<Step> path_of(const toml::table& root, const std::string& parameter) {
  static const std::regex lock(R"(lock\.([A-Za-z0-9_]+))");
  static const std::regex item(R"((fault|client|node)\[([A-Za-z0-9_.-]+)\]\.([a-z_]+))");
  std::smatch m;
  if (parameter == "duration") return {std::string("duration")};
  if (std::regex_match(parameter, m, lock)) return {std::string("lock"), m[1].str()};
  if (!std::regex_match(parameter, m, item)) refuse(parameter, "is not a number a slider moves (" + knob_parameters() + ")");
  const std::string table = m[1], field = m[3];
  const std::size_t i = element(root, table, m[2], parameter);
  const bool clock = table != "fault" && (field == "offset" || field == "drift_ppm" || field == "wall_drift_ppm");
  if (clock) return {table, i, std::string("clock"), field};
  return {table, i, field};
}

const toml::node* find(const toml::table& root, const std::vector<Step>& path) {
  toml::node_view<const toml::node> at{root};
  for (const Step& s : path) at = std::holds_alternative<std::string>(s) ? at[std::get<std::string>(s)] : at[std::get<std::size_t>(s)];
  return at.node();
}

// The byte offset of a line and column (1-based, columns counting UTF-8
// code points, as toml++ counts them) in `text`.
std::size_t offset_of(std::string_view text, toml::source_position p) {
  std::size_t at = 0;
  for (toml::source_index line = 1; line < p.line; ++line) {
    at = text.find('\n', at);
    if (at == std::string_view::npos) throw std::logic_error("numbers: a position past the text's end");
    ++at;
  }
  for (toml::source_index column = 1; column < p.column && at < text.size(); ++column) {
    ++at;
    while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) ++at;  // a code point's continuation bytes
  }
  return at;
}

// Parts per billion as the file writes parts per million: 50000, 0.5, -12.25.
std::string ppm_text(std::int64_t ppb) {
  const std::uint64_t magnitude = ppb < 0 ? 0 - static_cast<std::uint64_t>(ppb) : static_cast<std::uint64_t>(ppb);
  std::string out = (ppb < 0 ? "-" : "") + std::to_string(magnitude / 1000);
  if (const std::uint64_t thousandths = magnitude % 1000) {
    std::string fraction = std::to_string(thousandths);
    fraction.insert(0, 3 - fraction.size(), '0');
    while (fraction.back() == '0') fraction.pop_back();
    out += "." + fraction;
  }
  return out;
}

// The value as the file writes it, in the place of `old` (its sign kept: a
// clock jump back stays back).
std::string value_text(KnobUnit unit, std::int64_t value, std::string_view old) {
  switch (unit) {
    case KnobUnit::Integer: return std::to_string(value);
    case KnobUnit::Ppm: return ppm_text(value);
    case KnobUnit::Duration: break;
  }
  const char sign = old.size() > 1 && (old[1] == '-' || old[1] == '+') ? old[1] : '\0';
  const Duration d = Duration::ns(value);
  if (sign == '-' && value > 0) return "\"-" + format_duration(d) + "\"";
  return std::string("\"") + (sign == '+' ? "+" : "") + format_duration(d) + "\"";
}

bool is_duration_text(const std::string& toml_value) {
  return toml_value.size() > 2 && toml_value.front() == '"' && parse_duration(toml_value.substr(1, toml_value.size() - 2));
}

}  // namespace

std::vector<Slider> sliders(const Scenario& s, std::string_view text, Lang lang) {
  std::vector<std::string> parameters;
  for (const LockConfig::Written& w : s.lock.written)
    if (is_duration_text(w.text)) parameters.push_back("lock." + w.key);
  const toml::table root = toml::parse(text, std::string_view(s.path));
  for (std::size_t i = 0; i < s.faults.size(); ++i)
    for (const char* field : {"duration", "by", "drift_ppm"})
      if (find(root, {std::string("fault"), i, std::string(field)})) parameters.push_back("fault[" + std::to_string(i + 1) + "]." + field);
  std::vector<Slider> out;
  for (const std::string& p : parameters) {
    const Knob k = knob_of(s, p, kOption);
    const std::optional<std::int64_t> value = k.get(s);
    if (!value) continue;
    Slider slider{.parameter = p, .unit = k.unit, .value = *value, .lowest = k.lowest, .highest = std::min(k.highest, k.search_highest), .line = k.line};
    if (p.rfind("lock.", 0) == 0) {
      slider.label = "[lock] " + p.substr(5);
    } else {
      const std::size_t n = static_cast<std::size_t>(std::stoul(p.substr(6)));
      slider.label = "fault[" + std::to_string(n) + "]: " + say(lang, describe_fault(s.faults[n - 1]));
    }
    out.push_back(std::move(slider));
  }
  return out;
}

std::string set_number(std::string_view text, const std::string& path, const std::string& parameter, std::int64_t value) {
  const Scenario s = parse_scenario(text, path);
  const Knob knob = knob_of(s, parameter, kOption);
  if (value < knob.lowest || value > knob.highest)
    refuse(parameter, "cannot be " + format_knob_value(knob.unit, value) + " (from " + format_knob_value(knob.unit, knob.lowest) +
                          " to " + format_knob_value(knob.unit, knob.highest) + ")");
  const toml::table root = toml::parse(text, std::string_view(path));
  const toml::node* node = find(root, path_of(root, parameter));
  if (!node) refuse(parameter, "is not written in " + path + ": the scenario leaves it to its default, nothing to move");
  const std::size_t begin = offset_of(text, node->source().begin), end = offset_of(text, node->source().end);
  std::string edited(text);
  edited.replace(begin, end - begin, value_text(knob.unit, value, text.substr(begin, end - begin)));
  // The loader reads the edit as it reads any file (a refusal names the line);
  // and it reads back the value set, or this edited the wrong place.
  const Scenario moved = parse_scenario(edited, path);
  if (knob_of(moved, parameter, kOption).get(moved) != value)
    throw std::logic_error("slider: " + parameter + " did not read back as " + format_knob_value(knob.unit, value) + " after the edit");
  return edited;
}

}  // namespace locksim::web
