// Numbers on the command line. CLI11 reads "-1" into an unsigned option
// without complaint, as 2^64 - 1: `--seed -1` ran seed 18446744073709551615
// and `explore --runs -5` asked for 18 quintillion runs and died of
// bad_alloc. Every unsigned option refuses a sign instead, with its name.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace locksim {

// On every option of `app` and its subcommands whose type is unsigned; call
// once, after all options are declared.
inline void refuse_negative_unsigned(CLI::App& app) {
  const CLI::Validator no_sign(
      [](std::string& text) {
        return !text.empty() && (text[0] == '-' || text[0] == '+') ? std::string("a whole number, 0 or more, without a sign")
                                                                   : std::string();
      },
      "", "no sign");
  for (CLI::Option* o : app.get_options())
    if (o->get_type_name() == "UINT") o->check(no_sign);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) refuse_negative_unsigned(*sub);
}

}  // namespace locksim
