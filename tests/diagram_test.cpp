// The diagrams: well-formed SVG for every catalogue scenario, a lane per
// process, every violation marked; one self-contained HTML page.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
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

namespace {

// The benchmark's workload cut to 2 s with 100 clients and a 200 ms TTL;
// client7 is paused for 300 ms as soon as it holds the lock, so it overlaps
// the clients that take the lock after its key expires (at about 0.7 s).
Scenario hundred_clients() {
  std::string text = R"(
title = "100 clients, one paused holder"
source = "diagram_test.cpp"
about = "client7 is paused while it holds the lock; the others go on taking it."
seed = 42
duration = "2s"
[lock]
algorithm = "redlock"
flavour = "redlock-rb"
ttl = "200ms"
fanout = "parallel"
collect = "all"
unlock = "no-wait"
request_timeout = "50ms"
retry_delay = "0ms..200ms"
retry_count = "forever"
[network]
delay = "0.1ms..2ms"
fifo = false
)";
  for (int i = 1; i <= 5; ++i) text += "[[node]]\nname = \"redis" + std::to_string(i) + "\"\n";
  text += R"(
[[client]]
name = "client"
count = 100
start = "0ms..100ms"
job = "hold"
hold = "1ms..10ms"
think = "0ms..100ms"
repeat = "forever"
[[fault]]
on = "client7 acquired"
kind = "pause"
target = "client7"
duration = "300ms"
)";
  return parse_scenario(text, "hundred.toml");
}

}  // namespace

TEST_CASE("with 100 clients the diagram gives lanes to the clients that matter and draws the arrows near the violations") {
  const RunResult r = run_scenario(hundred_clients());
  REQUIRE_FALSE(r.violations.empty());
  DiagramOptions o;
  o.max_arrows = 200;
  const std::string svg = svg_diagram(r, o);
  CHECK(xml_problem(svg) == "");
  // 24 clients, 5 nodes and the storage have lanes; 76 clients share one.
  CHECK(count(svg, "class=\"lane ") == 24 + 5 + 1);
  CHECK(count(svg, "class=\"lane-others\"") == 1);
  CHECK(svg.find("76 other clients") != std::string::npos);
  for (const Violation& v : r.violations)
    for (ProcId p : v.processes)
      CHECK_MESSAGE(svg.find("class=\"lane lane-client\" data-process=\"" + r.world->trace().name(p) + "\"") != std::string::npos,
                    r.world->trace().name(p));
  // Exactly N arrows, and not the first N of the run (those are all in its
  // first few milliseconds): most of them are around the violations.
  CHECK(count(svg, "<line class=\"message") == 200);
  Instant from = Instant::never(), to = Instant::zero();
  for (const Violation& v : r.violations) {
    from = std::min(from, v.at);
    to = std::max(to, v.until);
  }
  std::size_t near = 0;
  for (auto p = svg.find("<line class=\"message"); p != std::string::npos; p = svg.find("<line class=\"message", p + 1)) {
    const auto sent = svg.find("(sent ", p);
    const auto s = parse_duration(svg.substr(sent + 6, svg.find(',', sent) - sent - 6));
    REQUIRE(s);
    const Instant at = Instant::zero() + *s;
    near += at >= from - Duration::ms(100) && at <= to + Duration::ms(100);
  }
  CHECK(near >= 150);
  CHECK(svg.find("messages not drawn: the 200 drawn are the most relevant") != std::string::npos);
}

TEST_CASE("events a hundred microseconds apart are drawn apart, with ticks fine enough to tell them") {
  // get-then-set: the two clients' GETs and SETs interleave within a millisecond.
  const RunResult r = run_scenario(catalogue("scenarios/redis/get-then-set-race.toml"));
  const std::string svg = svg_diagram(r);
  const auto acquired = [&](const char* who) { return events_of(r, Ev::Acquired, who).at(0)->at; };
  REQUIRE(acquired("client2") - acquired("client1") <= Duration::ms(1));
  // The critical sections' left edges, from the bars' x.
  auto bar_x = [&](const char* who) {
    const auto p = svg.find("class=\"critical-section\" data-process=\"" + std::string(who) + "\" x=\"");
    REQUIRE(p != std::string::npos);
    const auto q = svg.find("x=\"", p) + 3;
    return std::stod(svg.substr(q, svg.find('"', q) - q));
  };
  CHECK(bar_x("client2") - bar_x("client1") >= 14);
  CHECK(svg.find("class=\"tick\"") != std::string::npos);
  CHECK(svg.find(">0.004s<") != std::string::npos);  // a millisecond tick where the run is 10 s long
  CHECK(svg.find("class=\"elided\"") != std::string::npos);
}

TEST_CASE("a lost message points at the lane it was meant for, and a retry loop's arrows are sampled over the whole run") {
  // Three of five masters down: every try loses its requests to redis3..redis5.
  const RunResult r = run_scenario(catalogue("scenarios/redis/redlock-fault-tolerance-3-down.toml"));
  DiagramOptions o;
  o.max_arrows = 200;
  const std::string svg = svg_diagram(r, o);
  REQUIRE(count(svg, "class=\"message dropped\"") > 0);
  CHECK(count(svg, "class=\"lost-mark\"") == count(svg, "class=\"message dropped\""));
  // Each lost line ends on a lane's y (its destination's), not between two lanes.
  auto lane_ys = [&] {
    std::vector<double> ys;
    for (auto p = svg.find("<g class=\"lane "); p != std::string::npos; p = svg.find("<g class=\"lane ", p + 1)) {
      const auto q = svg.find("y1=\"", p) + 4;
      ys.push_back(std::stod(svg.substr(q, svg.find('"', q) - q)));
    }
    return ys;
  }();
  double last_x = 0;
  for (auto p = svg.find("class=\"message dropped\""); p != std::string::npos; p = svg.find("class=\"message dropped\"", p + 1)) {
    const auto y2 = svg.find("y2=\"", p) + 4, x2 = svg.find("x2=\"", p) + 4;
    const double y = std::stod(svg.substr(y2, svg.find('"', y2) - y2));
    last_x = std::max(last_x, std::stod(svg.substr(x2, svg.find('"', x2) - x2)));
    CHECK(std::any_of(lane_ys.begin(), lane_ys.end(), [&](double l) { return std::abs(l - y) < 0.2; }));
  }
  // The arrows kept reach into the run's last quarter, not just its first seconds.
  const auto axis = svg.find("class=\"axis\"");
  const auto ax2 = svg.find("x2=\"", axis) + 4;
  CHECK(last_x > 0.75 * std::stod(svg.substr(ax2, svg.find('"', ax2) - ax2)));
}

TEST_CASE("crowded storage writes keep their dots but drop the labels that would overlap") {
  const RunResult r = run_scenario(catalogue("scenarios/redis/redlock-fault-tolerance.toml"));
  const std::string svg = svg_diagram(r);
  const std::size_t writes = count(svg, "class=\"write-accepted\"");
  REQUIRE(writes > 100);
  std::size_t labelled = 0;
  for (auto p = svg.find("class=\"write-accepted\""); p != std::string::npos; p = svg.find("class=\"write-accepted\"", p + 1))
    labelled += svg.compare(svg.find("/>", p) + 2, 5, "<text") == 0;
  CHECK(labelled > 10);
  CHECK(labelled < writes);
}

TEST_CASE("a clock the scenario sets fast is noted under its lane, and a lease over before its grant is drawn as such") {
  const std::string drift = svg_diagram(run_scenario(catalogue("scenarios/redis/redlock-drift.toml")));
  CHECK(drift.find("class=\"clock-note\"") != std::string::npos);
  CHECK(drift.find(">clock 5% fast<") != std::string::npos);
  CHECK(drift.find("lease-over") == std::string::npos);
  // node-redlock v5 returns a lock whose validity ran out during the pause.
  const std::string v5 = svg_diagram(run_scenario(catalogue("scenarios/kleppmann/redlock-pause-in-flight-node-v5.toml")));
  CHECK(count(v5, "class=\"lease-believed lease-over\"") == 1);
}

TEST_CASE("a stretch of the axis starts with a label as precise as its ticks, not to the nanosecond") {
  const std::string svg = svg_diagram(run_scenario(catalogue("scenarios/kleppmann/redlock-pause-in-flight.toml")));
  for (auto p = svg.find("class=\"tick\""); p != std::string::npos; p = svg.find("class=\"tick\"", p + 1)) {
    const auto a = svg.find('>', p) + 1;
    const std::string label = svg.substr(a, svg.find('<', a) - a);
    INFO(label);
    const auto dot = label.find('.');
    CHECK((dot == std::string::npos || label.size() - dot - 2 <= 4));  // at most 4 decimals here
  }
}
