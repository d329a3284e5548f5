// `--lang en|zh`: the language of the words a command prints for a person
// (the story, the verdict, the diagram's words). Parsed once, here, into a
// Lang that the command passes on; nothing is read from the environment
// (LANG, LC_ALL): English unless --lang says otherwise.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "harness/scenario.hpp"
#include "reports/lang.hpp"

namespace locksim {

inline void add_lang_option(CLI::App& cmd, std::string& lang) {
  cmd.add_option("--lang", lang, "the language of the story, the verdict and the diagram's words: en (default) or zh (Simplified Chinese)");
}

// The flag's language; an unknown one is bad input (exit 2).
inline Lang lang_flag(const std::string& lang) {
  if (lang.empty()) return Lang::En;
  const auto l = parse_lang(lang);
  if (!l) throw ScenarioError(unknown_lang_message(lang));
  return *l;
}

}  // namespace locksim
