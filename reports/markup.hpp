// Text in SVG and HTML: escaping, and the rough width of a text for layout.
// Internal to reports/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace locksim::markup {

// The text with & < > " ' as entities: safe in an element and in a quoted attribute.
std::string esc(const std::string& s);

// Rough width of a text in px (sans-serif, average glyph 0.6 em), for layout.
double text_width(std::string_view s, double font_px);

// Words wrapped into lines of at most `width` px.
std::vector<std::string> wrap(const std::string& text, double width, double font_px);

}  // namespace locksim::markup
