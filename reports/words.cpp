// Filling the word tables' templates (reports/words.hpp), and the
// phrasebook that carries a lower layer's English detail into another language.
#include "reports/words.hpp"

#include <vector>

namespace locksim {

namespace {

constexpr std::string_view kIdNames[] = {
#define LOCKSIM_WORD(id) #id,
#include "sim/word_ids.inc"
#undef LOCKSIM_WORD
};
static_assert(std::size(kIdNames) == kWordCount);

const words_detail::Entry* table(Lang lang) {
  switch (lang) {
    case Lang::En: return words_detail::kEnglish;
    case Lang::Zh: return words_detail::kChinese;
  }
  return words_detail::kEnglish;
}

// A template as its pieces: literal text and argument names, alternating,
// starting with a literal (possibly empty).
std::vector<std::string_view> pieces(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (true) {
    const auto open = text.find('{', at);
    const auto close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) {
      out.push_back(text.substr(at));
      return out;
    }
    out.push_back(text.substr(at, open - at));
    out.push_back(text.substr(open + 1, close - open - 1));
    at = close + 1;
  }
}

// Matches `text` from `at` against the pieces from `i` on (literal at even
// i, argument at odd i), each argument at least one character, the shortest
// first; fills `got` with what the arguments matched.
bool match(const std::vector<std::string_view>& p, std::size_t i, std::string_view text, std::size_t at, std::vector<std::string>& got) {
  if (i % 2 == 0) {
    if (text.substr(at, p[i].size()) != p[i]) return false;
    at += p[i].size();
    return i + 1 == p.size() ? at == text.size() : match(p, i + 1, text, at, got);
  }
  const std::string_view next = p[i + 1];
  for (std::size_t end = at + 1; end <= text.size(); ++end) {
    if (!next.empty()) {
      end = text.find(next, end);
      if (end == std::string_view::npos) return false;
    }
    got.emplace_back(text.substr(at, end - at));
    if (match(p, i + 1, text, end, got)) return true;
    got.pop_back();
  }
  return false;
}

bool is_detail(W id) { return word_id_name(id).substr(0, 6) == "Detail"; }

}  // namespace

std::string_view lang_name(Lang l) { return l == Lang::Zh ? "zh" : "en"; }

std::optional<Lang> parse_lang(std::string_view name) {
  for (Lang l : kAllLangs)
    if (lang_name(l) == name) return l;
  return std::nullopt;
}

std::string unknown_lang_message(std::string_view name) {
  std::string known;
  for (Lang l : kAllLangs) known += (known.empty() ? "" : ", ") + std::string(lang_name(l));
  return "--lang: \"" + std::string(name) + "\" is not a language locksim speaks (" + known + ")";
}

std::string_view word_id_name(W id) { return kIdNames[static_cast<std::size_t>(id)]; }

std::string_view word(Lang lang, W id) { return table(lang)[static_cast<std::size_t>(id)].text; }

std::string fill(std::string_view text, WordArgs args) {
  std::string out;
  const auto p = pieces(text);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (i % 2 == 0) {
      out += p[i];
      continue;
    }
    const WordArg* found = nullptr;
    for (const WordArg& a : args)
      if (a.name == p[i]) found = &a;
    if (found) out += found->value;
    else (out += '{') += std::string(p[i]) + '}';
  }
  return out;
}

std::string say(Lang lang, W id, WordArgs args) { return fill(word(lang, id), args); }

std::string say(Lang lang, const Phrase& phrase) {
  if (phrase.id == kNoWord) return "";
  std::vector<std::string> values;
  values.reserve(phrase.args.size());
  for (const Phrase::Arg& a : phrase.args) {
    switch (a.type) {
      case Phrase::Arg::Type::Name: values.push_back(a.text); break;
      case Phrase::Arg::Type::Names: {
        std::vector<std::string> each;
        for (std::size_t from = 0, to; from <= a.text.size(); from = to + 1) {
          to = std::min(a.text.find('\n', from), a.text.size());
          each.push_back(a.text.substr(from, to - from));
        }
        values.push_back(say_list(lang, each));
        break;
      }
      case Phrase::Arg::Type::Number: values.push_back(std::to_string(a.number)); break;
      case Phrase::Arg::Type::Duration: values.push_back(format_duration(Duration::ns(a.number))); break;
      case Phrase::Arg::Type::Instant: values.push_back(format_instant(Instant::from_ns(a.number))); break;
      case Phrase::Arg::Type::Part: values.push_back(say(lang, phrase.parts[static_cast<std::size_t>(a.number)])); break;
    }
  }
  std::string out;
  const auto p = pieces(word(lang, phrase.id));
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (k % 2 == 0) {
      out += p[k];
      continue;
    }
    std::size_t i = 0;
    while (i < phrase.args.size() && phrase.args[i].name != p[k]) ++i;
    if (i < phrase.args.size()) out += values[i];
    else (out += '{') += std::string(p[k]) + '}';
  }
  return out;
}

std::string say_count(Lang lang, std::uint64_t n, W one, W many) { return say(lang, n == 1 ? one : many, {{"n", std::to_string(n)}}); }

std::string say_list(Lang lang, const std::vector<std::string>& items) {
  if (items.empty()) return "";
  std::string s = items[0];
  for (std::size_t i = 1; i < items.size(); ++i) s = say(lang, i + 1 == items.size() ? W::ListLast : W::ListComma, {{"a", s}, {"b", items[i]}});
  return s;
}

namespace {

// `english` by the pattern `id`, in `lang`; nullopt when the pattern does not match it.
std::optional<std::string> translate_by(Lang lang, W id, const std::string& english) {
  const auto p = pieces(word(Lang::En, id));
  std::vector<std::string> got;
  if (!match(p, 0, english, 0, got)) return std::nullopt;
  // The arguments are translated in turn ("{why}" may be a detail itself).
  std::vector<WordArg> args;
  for (std::size_t k = 0; k < got.size(); ++k) args.push_back({p[2 * k + 1], translate_detail(lang, got[k])});
  std::string out;
  const auto q = pieces(word(lang, id));
  for (std::size_t k = 0; k < q.size(); ++k) {
    if (k % 2 == 0) {
      out += q[k];
      continue;
    }
    for (const WordArg& a : args)
      if (a.name == q[k]) {
        out += a.value;
        break;
      }
  }
  return out;
}

// Whether a pattern of its own tells `english` whole: a specific one, or a
// suffix wrapping such a detail (not the name lists, which join anything).
bool known(const std::string& english) {
  std::vector<std::string> got;
  for (W wrapper : {W::DetailForDuration, W::DetailAtMost}) {
    got.clear();
    if (match(pieces(word(Lang::En, wrapper)), 0, english, 0, got) && known(got[0])) return true;
  }
  for (std::size_t i = 0; i < kWordCount; ++i) {
    const W id = static_cast<W>(i);
    if (!is_detail(id) || id == W::DetailForDuration || id == W::DetailAtMost || id == W::DetailThreeNames || id == W::DetailTwoNames) continue;
    got.clear();
    if (match(pieces(word(Lang::En, id)), 0, english, 0, got)) return true;
  }
  return false;
}

}  // namespace

std::string translate_detail(Lang lang, const std::string& english) {
  if (lang == Lang::En || english.empty()) return english;
  // A prefix before a whole detail ("healed: ") is read first: the detail
  // after it may end in a suffix of its own, which must not be taken for one
  // wrapping the prefix.
  if (auto out = translate_by(lang, W::DetailHealed, english)) return *out;
  // A suffix a lower layer appends ("drop messages on a -> b (at most 3) for
  // 5s") wraps the detail before it: tried first, where what it wraps is a
  // detail the phrasebook knows (else "nobody waited for the lock…" would be
  // "{what} for {d}").
  for (W wrapper : {W::DetailForDuration, W::DetailAtMost}) {
    const auto p = pieces(word(Lang::En, wrapper));
    std::vector<std::string> got;
    if (match(p, 0, english, 0, got) && known(got[0])) return *translate_by(lang, wrapper, english);
  }
  // The wrappers were tried above: they take only a detail the phrasebook knows.
  for (std::size_t i = 0; i < kWordCount; ++i) {
    const W id = static_cast<W>(i);
    if (!is_detail(id) || id == W::DetailForDuration || id == W::DetailAtMost) continue;
    if (auto out = translate_by(lang, id, english)) return *out;
  }
  return english;
}

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = len == 1 ? c : c & (0x3F >> (len - 1));
    for (int k = 1; k < len && i + static_cast<std::size_t>(k) < text.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    // The wide ranges fmt counts as two columns (fmt/format.h, compute_width).
    const bool wide = cp >= 0x1100 && (cp <= 0x115f || (cp >= 0x2e80 && cp <= 0xa4cf && cp != 0x303f) || (cp >= 0xac00 && cp <= 0xd7a3) ||
                                       (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe10 && cp <= 0xfe19) || (cp >= 0xfe30 && cp <= 0xfe6f) ||
                                       (cp >= 0xff00 && cp <= 0xff60) || (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x20000 && cp <= 0x3fffd));
    width += wide ? 2 : 1;
    i += static_cast<std::size_t>(len);
  }
  return width;
}

std::string kind_words(Lang lang, ViolationKind k) {
  switch (k) {
#define LOCKSIM_VIOLATION(Id, name, Checker, mark) \
  case ViolationKind::Id: return say(lang, W::Kind##Id);
#include "judge/violation_kinds.inc"
#undef LOCKSIM_VIOLATION
  }
  return std::string(violation_name(k));
}

std::string kind_help(Lang lang, ViolationKind k) {
  switch (k) {
#define LOCKSIM_VIOLATION(Id, name, Checker, mark) \
  case ViolationKind::Id: return say(lang, W::Help##Id);
#include "judge/violation_kinds.inc"
#undef LOCKSIM_VIOLATION
  }
  return "";
}

}  // namespace locksim
