// The diagrams: well-formed SVG for every catalogue scenario, a lane per
// process, every violation marked; one self-contained HTML page.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "reports/diagram.hpp"
#include "tests/support.hpp"

using namespace locksim;
using namespace locksim::testing;

namespace {

// Well-formedness, as far as our SVG goes: tags nest and close, attribute
// values are quoted, '&' starts an entity, '<' only starts markup.
std::string xml_problem(const std::string& x) {
  std::vector<std::string> open;
  std::size_t i = 0;
  while (i < x.size()) {
    if (x[i] == '&') {
      const auto semi = x.find(';', i);
      if (semi == std::string::npos || semi - i > 8) return "bare & at " + std::to_string(i);
      i = semi + 1;
      continue;
    }
    if (x[i] != '<') {
      ++i;
      continue;
    }
    const auto close = x.find('>', i);
    if (close == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = x.substr(i + 1, close - i - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag at " + std::to_string(i);
    // Attribute values must be quoted: every '=' is followed by a quote.
    for (std::size_t e = tag.find('='); e != std::string::npos; e = tag.find('=', e + 1)) {
      if (e + 1 >= tag.size() || tag[e + 1] != '"') return "unquoted attribute in <" + tag.substr(0, 40) + ">";
      const auto end_quote = tag.find('"', e + 2);
      if (end_quote == std::string::npos) return "unterminated attribute in <" + tag.substr(0, 40) + ">";
      e = end_quote;
    }
    const std::string name = tag.substr(tag[0] == '/' ? 1 : 0, tag.find_first_of(" />", tag[0] == '/' ? 1 : 0) - (tag[0] == '/' ? 1 : 0));
    if (tag[0] == '/') {
      if (open.empty() || open.back() != name) return "</" + name + "> closes <" + (open.empty() ? "" : open.back()) + ">";
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(name);
    }
    i = close + 1;
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = haystack.find(needle); p != std::string::npos; p = haystack.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the well-formedness check itself catches broken markup") {
  CHECK(xml_problem("<svg><g></g></svg>").empty());
  CHECK_FALSE(xml_problem("<svg><g></svg>").empty());
  CHECK_FALSE(xml_problem("<svg a=b></svg>").empty());
  CHECK_FALSE(xml_problem("<svg>a & b</svg>").empty());
}

TEST_CASE("every catalogue scenario draws a well-formed diagram with a lane per process and its violations marked") {
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(LOCKSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    const RunResult r = run_scenario(load_scenario(entry.path().string()));
    const std::string svg = svg_diagram(r);
    INFO(entry.path().string());
    CHECK(xml_problem(svg) == "");
    CHECK(count(svg, "class=\"lane ") == r.world->trace().processes().size());
    for (const Violation& v : r.violations)
      CHECK(svg.find("class=\"violation violation-" + std::string(violation_name(v.kind)) + "\"") != std::string::npos);
    CHECK(count(svg, "class=\"violation ") == r.violations.size());
  }
}

TEST_CASE("the GC-pause diagram shows the pause, the expiry, both critical sections and the overlap") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  const std::string svg = svg_diagram(r);
  CHECK(count(svg, "class=\"pause\"") == 1);
  CHECK(count(svg, "class=\"key-expired\"") == 1);
  CHECK(count(svg, "class=\"critical-section\"") == 2);
  CHECK(count(svg, "class=\"lease-believed\"") == 2);
  CHECK(count(svg, "class=\"write-accepted\"") == 2);
  CHECK(svg.find("class=\"elided\"") != std::string::npos);  // the long quiet stretches are squeezed
}

TEST_CASE("the HTML page is self-contained: no scripts or styles fetched, the story and the replay command in it") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  const std::string html = html_report(r);
  CHECK(html.find("src=") == std::string::npos);
  CHECK(html.find("href=") == std::string::npos);
  CHECK(html.find("http://www.w3.org/2000/svg") != std::string::npos);  // the SVG namespace, not a fetch
  CHECK(count(html, "http") == 1);
  CHECK(html.find("GC pause outlives the lease") != std::string::npos);
  CHECK(html.find("locksim run " + r.scenario->path + " --seed 1") != std::string::npos);
  CHECK(html.find("<ol class=\"narrative\">") != std::string::npos);
}
