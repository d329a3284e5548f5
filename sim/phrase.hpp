// A fact on its way to a person: which fact (a word id) and with what (its
// arguments, as values: a name as a name, a duration as a Duration). Any
// layer makes one; reports/ alone turns it into a sentence, in the reader's
// language, from its word tables (reports/words_en.cpp, words_zh.cpp). As in
// Clang's diagnostics (`Diag(Loc, diag::warn_unused_variable) << VD`), the
// code that knows the fact never words it, so a test can ask which fact was
// said with what, and another language costs nothing below reports/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/time.hpp"

namespace locksim {

// Every sentence's id (sim/word_ids.hpp lists them: a file that names one
// includes it, so that a new sentence rebuilds only those).
enum class W : std::uint16_t;
inline constexpr W kNoWord = static_cast<W>(0xFFFF);  // a Phrase not yet said

struct Phrase {
  // One argument: the template's {name} and its value.
  struct Arg {
    enum class Type : std::uint8_t { Name, Names, Number, Duration, Instant, Part };
    std::string_view name;
    Type type = Type::Name;
    std::string text;         // Name: as it is (a process, a link, a file); Names: each, '\n' after all but the last
    std::int64_t number = 0;  // Number; Duration and Instant: nanoseconds; Part: index into parts
  };

  W id = kNoWord;
  std::vector<Arg> args;
  std::vector<Phrase> parts;  // phrases said inside this one ("at 1s {what}")

  Phrase() = default;
  explicit Phrase(W w) : id(w) {}

  Phrase& name(std::string_view arg, std::string value) {
    args.push_back({arg, Arg::Type::Name, std::move(value), 0});
    return *this;
  }
  // A list of names ("client1, client2 and client3" in English): the
  // language joins them.
  Phrase& names(std::string_view arg, const std::vector<std::string>& values) {
    std::string text;
    for (std::size_t i = 0; i < values.size(); ++i) (text += i > 0 ? "\n" : "") += values[i];
    args.push_back({arg, Arg::Type::Names, std::move(text), 0});
    return *this;
  }
  Phrase& number(std::string_view arg, std::int64_t value) {
    args.push_back({arg, Arg::Type::Number, {}, value});
    return *this;
  }
  Phrase& duration(std::string_view arg, Duration value) {
    args.push_back({arg, Arg::Type::Duration, {}, value.count_ns()});
    return *this;
  }
  Phrase& instant(std::string_view arg, Instant value) {
    args.push_back({arg, Arg::Type::Instant, {}, (value - Instant::zero()).count_ns()});
    return *this;
  }
  Phrase& part(std::string_view arg, Phrase value) {
    args.push_back({arg, Arg::Type::Part, {}, static_cast<std::int64_t>(parts.size())});
    parts.push_back(std::move(value));
    return *this;
  }

  // The argument `arg` (nullptr: none): what a test asks of a fact.
  const Arg* find(std::string_view arg) const {
    for (const Arg& a : args)
      if (a.name == arg) return &a;
    return nullptr;
  }
  friend bool operator==(const Phrase& a, const Phrase& b) {
    if (a.id != b.id || a.args.size() != b.args.size() || a.parts != b.parts) return false;
    for (std::size_t i = 0; i < a.args.size(); ++i)
      if (a.args[i].name != b.args[i].name || a.args[i].type != b.args[i].type || a.args[i].text != b.args[i].text ||
          a.args[i].number != b.args[i].number)
        return false;
    return true;
  }
};

}  // namespace locksim
