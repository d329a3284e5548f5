#include "harness/toml_guard.hpp"

#include "harness/scenario.hpp"

namespace locksim {

void refuse_control_characters(std::string_view text, const std::string& path) {
  int line = 1;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '\n') ++line;
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F) {
      const char* digits = "0123456789ABCDEF";
      const std::string hex = {'0', 'x', digits[byte >> 4], digits[byte & 0xF]};
      throw ScenarioError(path + ":" + std::to_string(line) + ": byte " + hex +
                          " (a control character) is not allowed in a scenario file");
    }
  }
}

namespace {

bool starts_key(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '"' || c == '\'' || c == ']';
}

// A small lexer, just enough to tell a header line from a line inside a
// string (basic, literal, multi-line) or inside an array spanning lines.
class HeaderScan {
 public:
  HeaderScan(std::string_view text, const std::string& path) : t_(text), path_(path) {}

  void run() {
    bool line_start = true;
    while (i_ < t_.size()) {
      if (line_start && open_.empty()) header();
      line_start = false;
      if (i_ >= t_.size()) break;
      const char c = t_[i_];
      if (c == '\n') {
        ++line_;
        line_start = true;
        ++i_;
      } else if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else if (c == '"' || c == '\'') {
        string(c);
      } else {
        bracket(c);
        ++i_;
      }
    }
  }

 private:
  void blanks() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t')) ++i_;
  }
  bool at(std::string_view s) const { return t_.substr(i_, s.size()) == s; }

  // Brackets of values (headers are skipped whole). A '}' inside an array is
  // always a syntax error, but where the array expects a value (after '[' or
  // ',') toml++ 3.3.0 asserts rather than reporting it (parser.inl:2549,
  // parse_value's `!is_value_terminator(*cp)`, reached from parse_array:3624);
  // under NDEBUG that assertion is an optimiser assumption. Found by
  // fuzz_roundtrip: `violations = ["overlap", }`.
  void bracket(char c) {
    if (c == '[' || c == '{') open_.push_back(c);
    if (c == '}' && !open_.empty() && open_.back() == '[')
      throw ScenarioError(path_ + ":" + std::to_string(line_) + ": a '}' inside an array opened with '['");
    if ((c == ']' || c == '}') && !open_.empty()) open_.pop_back();
  }

  // At a line's start outside any value: a header is checked and skipped whole.
  void header() {
    blanks();
    if (i_ >= t_.size() || t_[i_] != '[') return;
    ++i_;
    blanks();
    if (i_ < t_.size() && t_[i_] == '[') {
      ++i_;
      blanks();
    }
    if (i_ < t_.size() && !starts_key(t_[i_]))
      throw ScenarioError(path_ + ":" + std::to_string(line_) +
                          ": a table header must start with a key name (a letter, digit, _, - or a quote)");
    while (i_ < t_.size() && t_[i_] != '\n') ++i_;
  }

  // From an opening quote to past the closing one, counting lines.
  void string(char q) {
    const std::string triple(3, q);
    const bool multi = at(triple);
    i_ += multi ? 3 : 1;
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\' && q == '"' && i_ + 1 < t_.size()) {
        if (t_[i_ + 1] == '\n') ++line_;
        i_ += 2;
        continue;
      }
      if (c == '\n') {
        ++line_;
        if (!multi) return;  // unterminated: the parser says so
      }
      if (multi && at(triple)) {
        i_ += 3;
        for (int extra = 0; extra < 2 && i_ < t_.size() && t_[i_] == q; ++extra) ++i_;  // """"" ends with quotes
        return;
      }
      if (!multi && c == q) {
        ++i_;
        return;
      }
      ++i_;
    }
  }

  std::string_view t_;
  const std::string& path_;
  std::size_t i_ = 0;
  int line_ = 1;
  std::string open_;  // the brackets open at i_, innermost last
};

}  // namespace

void refuse_bad_table_headers(std::string_view text, const std::string& path) { HeaderScan(text, path).run(); }

namespace {

// A character toml++ quotes ("'\n'", "'s'", "EOF") as a reader says it.
std::string character(std::string_view saw) {
  if (saw == "EOF" || saw == "'\\0'") return "the end of the file";
  if (saw == "'\\n'" || saw == "'\n'" || saw == "'\\r'") return "the end of the line";
  return std::string(saw);
}

// toml++'s "X, saw Y" (what it expected, and what came instead) as "X, not Y".
std::string expected_saw(std::string_view reason) {
  const auto saw = reason.rfind(", saw ");
  if (saw == std::string_view::npos) return std::string(reason);
  std::string wanted(reason.substr(0, saw));
  if (wanted.rfind("expected ", 0) == 0) wanted = wanted.substr(9);
  return wanted + " was expected here, not " + character(reason.substr(saw + 6));
}

}  // namespace

std::string toml_error_words(std::string_view description) {
  // On one line, whatever toml++ quoted ("expected 'true', saw 'tru\n'").
  std::string text;
  for (char c : description) text += c == '\n' ? std::string("\\n") : c == '\r' ? std::string() : std::string(1, c);
  std::string_view d(text), what;
  constexpr std::string_view prefix = "Error while parsing ";
  if (d.substr(0, prefix.size()) == prefix) {
    d.remove_prefix(prefix.size());
    const auto colon = d.find(": ");
    what = d.substr(0, colon);
    d = colon == std::string_view::npos ? std::string_view() : d.substr(colon + 2);
  }
  const auto has = [&](std::string_view s) { return d.find(s) != std::string_view::npos; };
  const bool number = what.find("integer") != std::string_view::npos || what.find("floating-point") != std::string_view::npos;
  if (what == "table header" && has("expected ']'"))
    return "the table header is not closed: its ']' is missing before the end of the line";
  if (what == "string" && (has("control characters") || has("end-of-file")))
    return "the string is not closed: its '\"' is missing before the end of the line";
  if (has("could not determine value type"))
    return "what follows '=' is not a value: a string or a duration needs quotes (\"client1\", \"10s\"), a list brackets ([...])";
  if (number && has("saw '") && !has("saw '.'") && !has("saw '\\n'"))
    return "a number is digits only: a duration needs quotes and a unit (\"30s\", \"250ms\")";
  if (has("cannot redefine existing")) {
    const auto quote = d.find('\'');
    return "the key " + std::string(quote == std::string_view::npos ? d : d.substr(quote)) + " is given twice";
  }
  if (what == "boolean") return "true and false are written as they are, in lower case and without quotes";
  if (has("encountered end-of-file"))
    return "the file ends inside " + (what.empty() ? std::string("a value") : "this " + std::string(what)) + ": a closing bracket or quote is missing";
  if (what == "key-value pair" && has("expected '='")) return "a key and its value are joined by '=': " + expected_saw(d);
  if (what == "key-value pair" && has("expected a comment or whitespace"))
    return "only a comment (# ...) may follow a value on its line: " + expected_saw(d);
  const std::string reason = has(", saw ") ? expected_saw(d) : std::string(d);
  return what.empty() ? reason : "in this " + std::string(what) + ", " + reason;
}

}  // namespace locksim
