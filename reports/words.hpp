// The words of the reports, in the languages locksim speaks.
//
// One table per language (reports/words_en.cpp, reports/words_zh.cpp),
// keyed by a message id; each entry a template whose arguments are named
// ("{who} asks for the lock"). say() fills one in. English is the default
// and the reference: JSON, traces and the `kind` values stay English in
// every language (they are an interface); only what a person reads changes.
//
// The details that lower layers write in English (a fault's or a node's
// event detail, a judge's violation detail) are turned into another language
// by the phrasebook: the Detail* ids' English entries are patterns
// ("by the active expiry cycle; it was due at {t} on {node}'s clock") that
// translate_detail() matches, then fills the other language's entry with
// what they matched. A detail no pattern matches is left in English.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "judge/checkers.hpp"
#include "reports/lang.hpp"
#include "sim/phrase.hpp"
#include "sim/word_ids.hpp"

namespace locksim {

// Every message's id (W, sim/word_ids.inc) is below every layer, with the
// Phrase a layer makes of a fact (sim/phrase.hpp); the words are here.
std::string_view word_id_name(W id);  // "AsksForLock"

// A named argument of a template.
struct WordArg {
  std::string_view name;
  std::string value;
};
using WordArgs = std::initializer_list<WordArg>;

// The template of `id` in `lang`, and it filled in.
std::string_view word(Lang lang, W id);
std::string say(Lang lang, W id, WordArgs args = {});
// Fills a template: "{name}" is the argument of that name (absent: left as written).
std::string fill(std::string_view text, WordArgs args);

// A fact said in `lang`: its template filled with its arguments, each in
// the language's way (a duration as format_duration writes it, a phrase
// inside it said in turn).
std::string say(Lang lang, const Phrase& phrase);

// A count and its noun ("1 client", "2 clients"; "2 个客户端").
std::string say_count(Lang lang, std::uint64_t n, W one, W many);
// "a, b and c" in the language's way.
std::string say_list(Lang lang, const std::vector<std::string>& items);

// A lower layer's English detail in `lang`: the phrasebook's pattern that
// matches it whole, filled in `lang` (arguments translated in turn); as it
// is when no pattern matches.
std::string translate_detail(Lang lang, const std::string& english);

// Columns a terminal gives the text: two for a wide (East Asian) character,
// as fmt pads ("{:<16}"), one for any other.
std::size_t display_width(std::string_view text);

// The name of a violation kind for a person: "overlap"; "重叠持有 (overlap)".
std::string kind_words(Lang lang, ViolationKind k);
// What a violation kind means, in one line (English: judge/'s violation_help).
std::string kind_help(Lang lang, ViolationKind k);

namespace words_detail {
// A table: one entry per id, in the ids' order.
struct Entry {
  W id;
  std::string_view text;
};
extern const Entry kEnglish[kWordCount];
extern const Entry kChinese[kWordCount];
}  // namespace words_detail

}  // namespace locksim
