// An option whose value is one word of a fixed set (`--format text|json`,
// `--axis auto|linear|compressed`), parsed once, when the command line is,
// into an enum: the commands compare enums, never the option's text. A value
// not in the set is refused as CLI::IsMember refuses it ("--format: xml not
// in {text,json}", exit 2).
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cli/format.hpp"

namespace locksim {

template <class E>
CLI::Option* add_choice(CLI::App& cmd, const std::string& name, E& target, const std::vector<std::pair<std::string, E>>& choices,
                        const std::string& help) {
  std::vector<std::string> words;
  for (const auto& c : choices) words.push_back(c.first);
  auto parse = [&target, choices](const std::string& word) {
    const auto it = std::find_if(choices.begin(), choices.end(), [&](const auto& c) { return c.first == word; });
    if (it != choices.end()) target = it->second;  // always: the check below has let only these through
  };
  return cmd.add_option_function<std::string>(name, parse, help)->check(CLI::IsMember(words));
}

inline CLI::Option* add_format_option(CLI::App& cmd, Format& target) {
  return add_choice(cmd, "--format", target, {{"text", Format::Text}, {"json", Format::Json}}, "text | json");
}

}  // namespace locksim
