// The diagrams: well-formed SVG for every catalogue scenario, a lane per
// process, every violation marked; one self-contained HTML page.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "reports/diagram.hpp"
#include "reports/markup.hpp"
#include "tests/support.hpp"

namespace diagram_test {

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

// A <text>'s box as the layout estimates it (markup::text_width, the font
// size, the anchor): from a little above its baseline to a little below.
struct TextBox {
  double x0, y0, x1, y1, size;
  std::string text;
};

std::string attribute(const std::string& tag, const std::string& name) {
  const auto at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return "";
  const auto from = at + name.size() + 3;
  return tag.substr(from, tag.find('"', from) - from);
}

std::string unescaped(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    bool entity = false;
    for (const auto& [name, c] : {std::pair{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&#39;", '\''}})
      if (s.compare(i, std::string_view(name).size(), name) == 0) {
        out += c;
        i += std::string_view(name).size() - 1;
        entity = true;
        break;
      }
    if (!entity) out += s[i];
  }
  return out;
}

// The words written on a picture (not its tooltips, nor a text drawn turned,
// nor a one-glyph mark: a ✕ where a message was lost, a ↻ of a restart).
std::vector<TextBox> text_boxes(const std::string& svg) {
  const double base = std::stod(attribute(svg.substr(0, svg.find('>')), "font-size"));
  std::vector<TextBox> out;
  for (auto at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) {
    const auto close = svg.find('>', at);
    const std::string tag = svg.substr(at, close - at);
    const std::string text = unescaped(svg.substr(close + 1, svg.find("</text>", close) - close - 1));
    if (!attribute(tag, "transform").empty() || markup::text_width(text, 1) <= 1.2) continue;
    const std::string fs = attribute(tag, "font-size"), anchor = attribute(tag, "text-anchor");
    const double size = fs.empty() ? base : std::stod(fs), w = markup::text_width(text, size);
    const double x = std::stod(attribute(tag, "x")), y = std::stod(attribute(tag, "y"));
    const double x0 = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x;
    out.push_back({x0, y - 0.75 * size, x0 + w, y + 0.2 * size, size, text});
  }
  return out;
}

}  // namespace

TEST_CASE("the text-box measure sees two labels that overlap, and not two that only touch") {
  const std::string svg = R"(<svg font-size="11"><text x="0" y="20">write 1</text><text x="30" y="22">=1 t34</text>)"
                          R"(<text x="0" y="60" font-size="12">apart</text><text x="0" y="40" text-anchor="end">left</text></svg>)";
  const auto boxes = text_boxes(svg);
  REQUIRE(boxes.size() == 4);
  CHECK(boxes[0].x1 > boxes[1].x0);  // overlapping in x, and in y (20 and 22)
  CHECK(boxes[1].y1 > boxes[0].y0);
  CHECK(boxes[2].size == 12);
  CHECK(boxes[3].x1 == doctest::Approx(0));
}

TEST_CASE("on a catalogue scenario's HTML page, no two of the diagram's words overlap and none is under 11 px") {
  // The page's diagram as `run --html` draws it, 1,200 px of axis: what a
  // 1,400 px window shows at its own size (issue 38: "=1 t34" under an
  // arrow, 9 px labels).
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::filesystem::path(LOCKSIM_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    const RunResult r = run_scenario(load_scenario(entry.path().string()));
    const std::string svg = svg_diagram(r, DiagramOptions{});
    INFO(entry.path().string());
    const std::vector<TextBox> boxes = text_boxes(svg);
    for (const TextBox& b : boxes) {
      INFO(b.text);
      CHECK(b.size >= 11);
    }
    for (std::size_t i = 0; i < boxes.size(); ++i)
      for (std::size_t j = i + 1; j < boxes.size(); ++j) {
        const TextBox &a = boxes[i], &b = boxes[j];
        const bool overlap = a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
        CHECK_MESSAGE(!overlap, "\"" << a.text << "\" overlaps \"" << b.text << "\"");
      }
  }
}

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
  CHECK(svg.find("class=\"elided\"") == std::string::npos);  // drawn to scale
  // Compressed on request: the long quiet stretches are squeezed.
  DiagramOptions o;
  o.axis = AxisChoice::Compressed;
  const std::string compressed = svg_diagram(r, o);
  CHECK(compressed.find("class=\"elided\"") != std::string::npos);
  CHECK(compressed.find("class=\"axis-caption axis-compressed\"") != std::string::npos);
  CHECK(compressed.find("not to scale") != std::string::npos);
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
  CHECK(svg.find("<title>76 clients share this lane: their critical sections are drawn here, their messages are not</title>") != std::string::npos);
  // In Chinese, the shared lane's name and its tooltip too.
  DiagramOptions zh = o;
  zh.lang = Lang::Zh;
  const std::string zh_svg = svg_diagram(r, zh);
  CHECK(zh_svg.find(">其余 76 个客户端<") != std::string::npos);
  CHECK(zh_svg.find("<title>76 个客户端共用这条泳道：这里画出它们的临界区，不画它们的消息</title>") != std::string::npos);
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
  // Most of them (a retry loop's messages are one mark now, not candidates).
  CHECK_MESSAGE(near > 100, near);
  CHECK(svg.find("class=\"retries\"") != std::string::npos);
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

namespace {

// The x (or another attribute) of the first element after `from` that has it.
double attr(const std::string& svg, std::size_t from, const std::string& name) {
  const auto a = svg.find(" " + name + "=\"", from);
  REQUIRE(a != std::string::npos);
  const auto q = a + name.size() + 3;
  return std::stod(svg.substr(q, svg.find('"', q) - q));
}

std::vector<std::string> texts_of(const std::string& svg, const std::string& cls) {
  std::vector<std::string> out;
  for (auto p = svg.find("class=\"" + cls + "\""); p != std::string::npos; p = svg.find("class=\"" + cls + "\"", p + 1)) {
    const auto a = svg.find('>', p) + 1;
    std::string text = svg.substr(a, svg.find('<', a) - a);
    for (auto q = text.find("&#39;"); q != std::string::npos; q = text.find("&#39;")) text.replace(q, 5, 1, '\'');
    out.push_back(text);
  }
  return out;
}

}  // namespace

TEST_CASE("the GC pause is drawn to scale: forty times as wide as the overlap, and the picture says so") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  CHECK(linear_axis(r, {}));
  const std::string svg = svg_diagram(r);
  CHECK(svg.find("class=\"axis-caption axis-linear\"") != std::string::npos);
  CHECK(svg.find(">time to scale: ") != std::string::npos);
  const double pause = attr(svg, svg.find("class=\"pause\""), "width");
  const double overlap = attr(svg, svg.find("class=\"violation violation-overlap\""), "width");
  CHECK(pause / overlap == doctest::Approx(40.0 / 1.004).epsilon(0.02));
  // One precision on the linear axis: whole seconds every 5 s.
  for (const std::string& label : texts_of(svg, "tick")) {
    INFO(label);
    CHECK(label.find('.') == std::string::npos);
  }
}

TEST_CASE("the axis is linear when every interval is 12 px wide at the page width, and compressed when two grants race") {
  // get-then-set: the two clients are granted the lock a millisecond apart in a 10 s run.
  const RunResult race = run_scenario(catalogue("scenarios/redis/get-then-set-race.toml"));
  CHECK(shortest_interval(race) <= Duration::ms(1));
  CHECK_FALSE(linear_axis(race, {}));
  CHECK(svg_diagram(race).find("class=\"axis-caption axis-compressed\"") != std::string::npos);
  DiagramOptions linear;
  linear.axis = AxisChoice::Linear;
  CHECK(svg_diagram(race, linear).find("class=\"axis-caption axis-linear\"") != std::string::npos);
  // The clock-jump story's shortest interval is its one-second overlap: to scale.
  const RunResult jump = run_scenario(catalogue("scenarios/kleppmann/redlock-clock-jump.toml"));
  CHECK(shortest_interval(jump) == Duration::ms(1004));
  CHECK(linear_axis(jump, {}));
  // The same rule on a page too narrow for it.
  DiagramOptions narrow;
  narrow.width = 50;
  CHECK_FALSE(linear_axis(jump, narrow));
}

TEST_CASE("the moments the verdict turns on are written on the picture") {
  const std::string gc = svg_diagram(run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml")));
  const auto gc_moments = texts_of(gc, "moment");
  for (const char* m : {"client1's key expires", "lease ends (its clock)", "paused 40s"})
    CHECK_MESSAGE(std::find(gc_moments.begin(), gc_moments.end(), m) != gc_moments.end(), m);
  const auto zk = texts_of(svg_diagram(run_scenario(catalogue("scenarios/zookeeper/session-expiry-pause.toml"))), "moment");
  CHECK(std::find(zk.begin(), zk.end(), "client1's session expires") != zk.end());
  const auto etcd = texts_of(svg_diagram(run_scenario(catalogue("scenarios/etcd/pause-after-lock.toml"))), "moment");
  CHECK(std::find(etcd.begin(), etcd.end(), "client1's lease expires") != etcd.end());
}

TEST_CASE("the arrows that matter are labelled: the grants, the release, the write with its token") {
  const std::string svg = svg_diagram(run_scenario(catalogue("scenarios/kleppmann/gc-pause-fenced.toml")));
  const auto labels = texts_of(svg, "arrow-label");
  CHECK(std::count(labels.begin(), labels.end(), "grant") >= 1);
  CHECK(std::find(labels.begin(), labels.end(), "write 1, token 34") != labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "write 1, token 33") != labels.end());
  // Redlock: each node's OK of the winning attempt is a grant; the refusals are not.
  const std::string jump = svg_diagram(run_scenario(catalogue("scenarios/kleppmann/redlock-clock-jump.toml")));
  const auto jl = texts_of(jump, "arrow-label");
  CHECK(std::count(jl.begin(), jl.end(), "grant") >= 2);
  // A release is labelled where it does not sit on a write's label.
  const auto herd = texts_of(svg_diagram(run_scenario(catalogue("scenarios/zookeeper/herd-effect.toml"))), "arrow-label");
  CHECK(std::count(herd.begin(), herd.end(), "release") == 20);
  CHECK(std::count(herd.begin(), herd.end(), "grant") == 20);
}

TEST_CASE("a lease line stops at the release, and runs to its end only when the end comes first") {
  const std::string svg = svg_diagram(run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml")));
  // client2 released at 32.006s, long before its lease's end at 61s: the line ends at its bar's end.
  const auto bar = svg.find("class=\"critical-section\" data-process=\"client2\"");
  const double bar_end = attr(svg, bar, "x") + attr(svg, bar, "width");
  std::vector<double> ends;
  for (auto p = svg.find("class=\"lease-believed\""); p != std::string::npos; p = svg.find("class=\"lease-believed\"", p + 1))
    ends.push_back(attr(svg, p, "x2"));
  REQUIRE(ends.size() == 2);
  CHECK(std::any_of(ends.begin(), ends.end(), [&](double x) { return std::abs(x - bar_end) < 0.2; }));
  // client1's lease ran out (30s) before its release (41s): the line ends there, with its tick and label.
  CHECK(std::any_of(ends.begin(), ends.end(), [&](double x) { return x < bar_end - 10; }));
}

TEST_CASE("a partition is drawn as who is cut off from whom, on the lanes cut off") {
  const std::string svg = svg_diagram(run_scenario(catalogue("scenarios/kleppmann/redlock-clock-jump.toml")));
  CHECK(count(svg, "class=\"partition\"") == 2);
  CHECK(svg.find("class=\"partition\" data-process=\"client1\"") != std::string::npos);
  CHECK(svg.find("class=\"partition\" data-process=\"client2\"") != std::string::npos);
  CHECK(svg.find(">✂ cut off from redis4 and redis5<") != std::string::npos);
  CHECK(svg.find(">✂ cut off from redis1 and redis2<") != std::string::npos);
  CHECK(svg.find("class=\"network-fault\"") == std::string::npos);  // no line across every lane
}

TEST_CASE("a Redlock node's strip shows whose value it holds: during the overlap two nodes hold client1's and three client2's") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/redlock-clock-jump.toml"));
  const std::string svg = svg_diagram(r);
  const Violation& overlap = r.violations.at(0);
  REQUIRE(overlap.kind == ViolationKind::Overlap);
  const double ox = attr(svg, svg.find("class=\"violation violation-overlap\""), "x") + 3;
  std::map<std::string, std::string> holder_during;  // node -> whose value covers the overlap's start
  for (auto p = svg.find("class=\"holds\""); p != std::string::npos; p = svg.find("class=\"holds\"", p + 1)) {
    const auto node = svg.find("data-process=\"", p) + 14, holder = svg.find("data-holder=\"", p) + 13;
    const double x = attr(svg, p, "x"), w = attr(svg, p, "width");
    if (x <= ox && ox <= x + w)
      holder_during[svg.substr(node, svg.find('"', node) - node)] = svg.substr(holder, svg.find('"', holder) - holder);
  }
  CHECK(holder_during == std::map<std::string, std::string>{
                             {"redis1", "client1"}, {"redis2", "client1"}, {"redis3", "client2"}, {"redis4", "client2"}, {"redis5", "client2"}});
  // A ZooKeeper lock has no such strip (its node is an ephemeral znode, not a value).
  CHECK(svg_diagram(run_scenario(catalogue("scenarios/zookeeper/session-expiry-pause.toml"))).find("class=\"holds\"") == std::string::npos);
}

TEST_CASE("a retry loop of hundreds of lost messages is one mark with its count") {
  const std::string svg = svg_diagram(run_scenario(catalogue("scenarios/redis/redlock-restart-delayed.toml")));
  CHECK(count(svg, "class=\"retries\"") == 1);
  CHECK(svg.find(">67 tries failed: too few nodes, 400 messages lost<") != std::string::npos);
  CHECK(count(svg, "<line class=\"message") < 80);
  CHECK(svg.find("messages of retry loops not drawn") != std::string::npos);
}

TEST_CASE("a picture for slides has larger type and no tooltips, everything written on it") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/redlock-clock-jump.toml"));
  DiagramOptions o;
  o.slides = true;
  const std::string slide = svg_diagram(r, o);
  CHECK(xml_problem(slide) == "");
  CHECK(slide.find("<title>") == std::string::npos);
  CHECK(slide.find("class=\"locksim-diagram slides\"") != std::string::npos);
  CHECK(attr(slide, slide.find("class=\"title\""), "font-size") > attr(svg_diagram(r), 0, "font-size") * 1.5);
  for (const char* words : {">✂ cut off from redis4 and redis5<", ">client1&#39;s key expires<", ">◆ clock +15s<", ">grant<"})
    CHECK_MESSAGE(slide.find(words) != std::string::npos, words);
}

}  // namespace diagram_test
