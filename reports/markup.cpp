#include "reports/markup.hpp"

namespace locksim::markup {

namespace {

// Whether the UTF-8 character at s[i] is a wide (CJK) one, after which a
// line may break although no space follows: Chinese has no spaces.
bool wide_at(const std::string& s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0xE2 || c >= 0xF0 || i + 2 >= s.size()) return false;
  const char32_t cp = (static_cast<char32_t>(c & 0x0F) << 12) | (static_cast<char32_t>(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
  return cp >= 0x2E80;
}

// A word as the pieces a line may break between: the word itself, or, where
// it has wide characters, each of them and each run of other characters.
std::vector<std::string> pieces_of(const std::string& word) {
  std::vector<std::string> out;
  std::string run;
  for (std::size_t i = 0; i < word.size();) {
    if (wide_at(word, i)) {
      if (!run.empty()) out.push_back(std::move(run));
      run.clear();
      out.push_back(word.substr(i, 3));
      i += 3;
    } else {
      run += word[i++];
    }
  }
  if (!run.empty() || out.empty()) out.push_back(run);
  return out;
}

}  // namespace

std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

double text_width(std::string_view s, double font_px) {
  // UTF-8 code points, a wide (CJK) one counted as two: a CJK glyph is a
  // full em, and a label estimated short is cut off at the picture's edge.
  double glyphs = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) == 0x80) continue;
    glyphs += wide_at(std::string(s.substr(i, 3)), 0) ? 2 : 1;
  }
  return glyphs * font_px * 0.6;
}

std::vector<std::string> wrap(const std::string& text, double width, double font_px) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t space = text.find(' ', start);
    if (space == std::string::npos) space = text.size();
    const std::vector<std::string> pieces = pieces_of(text.substr(start, space - start));
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      // The first piece of a word follows a space; the others follow the piece before.
      const std::string candidate = line.empty() ? pieces[k] : line + (k == 0 ? " " : "") + pieces[k];
      if (!line.empty() && text_width(candidate, font_px) > width) {
        lines.push_back(line);
        line = pieces[k];
      } else {
        line = candidate;
      }
    }
    start = space + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace locksim::markup
