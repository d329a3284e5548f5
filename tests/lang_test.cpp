// `--lang zh`: the word tables agree with each other, the Chinese story of
// gc-pause says what happened in Chinese and nothing in English, every
// catalogue scenario's Chinese report and diagram renders with no English
// sentence left, the diagram's legend is Chinese in a font with CJK glyphs,
// and English stays the default.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/faults/kind.hpp"
#include "reports/diagram.hpp"
#include "reports/markup.hpp"
#include "reports/report.hpp"
#include "reports/words.hpp"
#include "tests/command_support.hpp"
#include "tests/support.hpp"

namespace lang_test {

using namespace locksim;
using namespace locksim::testing;
namespace fs = std::filesystem;

namespace {

std::set<std::string> placeholders(std::string_view text) {
  std::set<std::string> out;
  for (auto open = text.find('{'); open != std::string_view::npos; open = text.find('{', open + 1))
    out.insert(std::string(text.substr(open + 1, text.find('}', open) - open - 1)));
  return out;
}

std::vector<std::string> catalogue_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(LOCKSIM_SOURCE_DIR) / "scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".toml") files.push_back(fs::relative(e.path(), LOCKSIM_SOURCE_DIR).string());
  std::sort(files.begin(), files.end());
  return files;
}

// The English words left in a Chinese report: every ASCII word of four or
// more letters that is not one the report must keep as it is. Kept: the
// lines that quote the scenario file (its title, path, `source` and lock
// set-up: the user's words and identifiers) and the replay command; process
// names; what is quoted ('lock', "…", “SET lock 9925… NX PX 10000”: keys and
// message contents); code assignments (counter = 1, owner = 9925…); commands
// and states in capitals (GET, SUSPENDED); identifiers in camel case
// (KeepAlive, ErrSessionExpired); hex values; and an English term in
// parentheses after its Chinese one (重叠持有 (overlap), 停顿 (stop-the-world)),
// up to three words. Whatever else is left is an untranslated sentence.
std::vector<std::string> english_words(const std::string& report, const RunResult& r, std::size_t header_lines = 4,
                                       const std::set<std::string>& more_names = {}) {
  std::set<std::string> names = more_names;
  for (const auto& p : r.world->trace().processes()) names.insert(p.name);
  const std::regex kept(R"re('[^']*'|"[^"]*"|\w+ = |\((?:[A-Za-z-]+ ?){1,3}\))re");
  const std::regex word(R"([A-Za-z][A-Za-z0-9_]*)");
  std::vector<std::string> left;
  std::istringstream in(report);
  std::size_t line_no = 0;
  for (std::string line; std::getline(in, line); ++line_no) {
    if (line_no < header_lines || line.rfind("重放：", 0) == 0) continue;  // the scenario's header; the replay command
    // “…” by hand: a regex over bytes cannot tell “ and ” from the "…" inside.
    for (auto open = line.find("“"); open != std::string::npos; open = line.find("“", open)) {
      const auto close = line.find("”", open);
      if (close == std::string::npos) break;
      line.replace(open, close + std::string("”").size() - open, 1, ' ');
    }
    const std::string text = std::regex_replace(line, kept, " ");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), word); it != std::sregex_iterator(); ++it) {
      const std::string w = it->str();
      const auto letters = std::count_if(w.begin(), w.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
      const bool capitals = std::none_of(w.begin(), w.end(), [](char c) { return std::islower(static_cast<unsigned char>(c)); });
      const bool camel = std::any_of(w.begin() + 1, w.end(), [](char c) { return std::isupper(static_cast<unsigned char>(c)); });
      const bool hex = w.find_first_not_of("0123456789abcdef") == std::string::npos;
      if (letters >= 4 && !capitals && !camel && !hex && !names.count(w)) left.push_back(w + "  in: " + line);
    }
  }
  return left;
}

// What a Chinese diagram says to a person, one line each: every tooltip
// (<title>) and every text on the picture but the scenario's title (the
// user's words). A message's tooltip keeps its contents as the protocol
// says them ("READONLY You can't write…", as the story quotes them): they are
// cut out, the words around them (sent, delivered, why it was lost) kept.
std::string diagram_words(const std::string& svg) {
  std::string out;
  const std::regex said(R"(<title>([^<]*)</title>|<text(?![^>]*class="title")[^>]*>(.*?)</text>)"), tag("<[^>]*>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), said); it != std::sregex_iterator(); ++it) {
    std::string line = (*it)[1].matched ? (*it)[1].str() : std::regex_replace((*it)[2].str(), tag, "");
    // By hand: a regex over bytes cannot tell （ from the bytes of ，.
    const auto arrow = line.find(" → "), colon = line.find("：", arrow), sent = line.find(" 发出，");
    if (arrow != std::string::npos && colon != std::string::npos && sent != std::string::npos) {
      const auto open = line.rfind("（", sent);
      if (open != std::string::npos && open > colon) line.erase(colon + std::string("：").size(), open - colon - std::string("：").size());
    }
    for (auto [entity, c] : {std::pair{"&#39;", "'"}, std::pair{"&quot;", "\""}, std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"}, std::pair{"&amp;", "&"}})
      for (auto at = line.find(entity); at != std::string::npos; at = line.find(entity, at)) line.replace(at, std::string(entity).size(), c);
    out += line + "\n";
  }
  return out;
}

// `text` with each `path` in it replaced by a space (by hand: GCC 12 warns,
// wrongly, of replace() here).
std::string without_path(const std::string& text, const std::string& path) {
  std::string without;
  std::size_t from = 0;
  for (auto at = text.find(path); at != std::string::npos; at = text.find(path, from)) {
    without.append(text, from, at - from);
    without += ' ';
    from = at + path.size();
  }
  return without + text.substr(from);
}

// The lower-case words of an identifier ("stale-write": stale, write), added to `ids`.
void add_words(std::set<std::string>& ids, const std::string& name) {
  static const std::regex part("[a-z]+");
  for (auto it = std::sregex_iterator(name.begin(), name.end(), part); it != std::sregex_iterator(); ++it) ids.insert(it->str());
}

// The English words left in a search's Chinese summary (explore, its
// --exhaustive mode). Kept as they are: the replay commands (to the end of
// their line), the file's path, and identifiers: the algorithm's, the fault
// kinds' (as --faults takes them), the event names in a label.
std::vector<std::string> search_english(std::string text, const RunResult& r, const std::string& file) {
  // The exit line's "locksim explore:" names the program and the command.
  static const std::regex command("locksim explore( [^\n]*|:)");
  text = std::regex_replace(text, command, " ");
  text = without_path(text, file);
  static const std::regex doc("docs/[a-z.-]+\\.md");  // a document's path
  text = std::regex_replace(text, doc, " ");
  std::set<std::string> ids{"redis", "single", "expect"};  // the algorithm; the file's [expect] table
  for (const FaultKindInfo* k : fault_kinds()) add_words(ids, std::string(k->name));
  for (std::size_t e = 0; e <= static_cast<std::size_t>(kLastEvent); ++e) add_words(ids, std::string(event_name(static_cast<Ev>(e))));
  return english_words(text, r, 0, ids);
}

}  // namespace

TEST_CASE("every message id has an entry in English and in Chinese, with the same arguments") {
  for (std::size_t i = 0; i < kWordCount; ++i) {
    const W id = static_cast<W>(i);
    INFO(word_id_name(id));
    CHECK_FALSE(word(Lang::En, id).empty());
    CHECK_FALSE(word(Lang::Zh, id).empty());
    CHECK(placeholders(word(Lang::En, id)) == placeholders(word(Lang::Zh, id)));
  }
}

TEST_CASE("the languages are named, an unknown one is refused in words, and English is the default") {
  CHECK(parse_lang("en") == Lang::En);
  CHECK(parse_lang("zh") == Lang::Zh);
  CHECK_FALSE(parse_lang("fr"));
  CHECK(unknown_lang_message("fr") == "--lang: \"fr\" is not a language locksim speaks (en, zh)");
  CHECK(TextOptions{}.lang == Lang::En);
  CHECK(DiagramOptions{}.lang == Lang::En);
  for (ViolationKind k : kAllViolationKinds) CHECK(kind_words(Lang::En, k) == violation_name(k));
  CHECK(kind_words(Lang::Zh, ViolationKind::StaleWrite) == "过期写入 (stale-write)");
}

TEST_CASE("a template is filled by name, and a wide character takes two columns") {
  CHECK(fill("{who} asks for {what}", {{"who", "client1"}, {"what", "the lock"}}) == "client1 asks for the lock");
  CHECK(fill("{who} and {nobody}", {{"who", "a"}}) == "a and {nobody}");
  CHECK(say_list(Lang::En, {"a", "b", "c"}) == "a, b and c");
  CHECK(say_list(Lang::Zh, {"a", "b", "c"}) == "a、b 和 c");
  CHECK(display_width("overlap") == 7);
  CHECK(display_width("重叠持有 (overlap)") == 18);
  CHECK(display_width("…✕") == 2);
}

TEST_CASE("the phrasebook turns a detail the layers below write in English into Chinese, arguments and all") {
  // Each pattern, filled with sample arguments, comes back as its Chinese entry filled with the same ones.
  for (std::size_t i = 0; i < kWordCount; ++i) {
    const W id = static_cast<W>(i);
    if (word_id_name(id).substr(0, 6) != "Detail") continue;
    if (id == W::DetailForDuration || id == W::DetailAtMost) continue;  // they wrap only a detail it knows: below
    INFO(word_id_name(id));
    const std::set<std::string> names = placeholders(word(Lang::En, id));  // the args' names point into it
    std::vector<WordArg> args;
    for (const std::string& name : names) args.push_back({name, fmt::format("x{}9", args.size())});
    std::string en(word(Lang::En, id)), zh(word(Lang::Zh, id));
    for (const WordArg& a : args) {
      const std::string slot = fmt::format("{{{}}}", a.name);
      for (auto at = en.find(slot); at != std::string::npos; at = en.find(slot)) en.replace(at, slot.size(), a.value);
      for (auto at = zh.find(slot); at != std::string::npos; at = zh.find(slot)) zh.replace(at, slot.size(), a.value);
    }
    CHECK(translate_detail(Lang::Zh, en) == zh);
    CHECK(translate_detail(Lang::En, en) == en);
  }
  CHECK(translate_detail(Lang::Zh, "a detail nobody wrote a pattern for") == "a detail nobody wrote a pattern for");
  // A link fault's suffixes wrap the detail before them, and only a detail the phrasebook knows.
  CHECK(translate_detail(Lang::Zh, "drop messages on redis1 -> client2 (at most 3) for 9.5s") == "丢弃 redis1 -> client2 上的消息（最多 3 条），持续 9.5s");
  // The wrapper does not take a sentence the phrasebook does not know ("{what} for {d}" would match it).
  CHECK(translate_detail(Lang::Zh, "nobody waited for the lock long after every fault was healed") ==
        "nobody waited for the lock long after every fault was healed");
  // That sentence is a fact the liveness phase states, said from its id.
  CHECK(say(Lang::Zh, Phrase(W::LivenessNobody)) == "所有故障恢复之后，没有客户端长时间等待锁");
}

TEST_CASE("gc-pause told in Chinese: the grant, the pause, the expiry and the verdict, with no English sentence left") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  const std::string zh = text_report(r, {.lang = Lang::Zh});
  INFO(zh);
  for (const char* said : {
           "经过（按真实时间，任何进程都读不到它；必要处给出本地时钟读数）：",
           "client1 请求获取锁",
           "client1 在 redis1 上获取了锁；它认为锁在其单调时钟的 30.000s 之前有效（当前为 0.002s）",
           "client1 停顿 40s（全停顿 (stop-the-world)：其中什么都不运行，连定时器也不）",
           "redis1 上的 'lock'（client1 的锁）过期",
           "client1 恢复运行，并不知道自己停顿过",
           "storage 接受了 client1 的写入：counter = 1",
           "判定：重叠持有 (overlap)、过期写入 (stale-write)、更新丢失 (lost-update)——符合预期",
           "client1 和 client2 都持有锁，从 31.002s 到 32.006s",
       })
    CHECK_MESSAGE(zh.find(said) != std::string::npos, said);
  CHECK(english_words(zh, r).empty());
  // The check finds English where there is some: the same report in English.
  CHECK(english_words(text_report(r), r).size() > 50);
}

TEST_CASE("English stays the default and is what it was: the Chinese tables change nothing of it") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  CHECK(text_report(r) == text_report(r, {.lang = Lang::En}));
  CHECK(text_report(r).find("Verdict: overlap, stale-write, lost-update — as expected") != std::string::npos);
  CHECK(svg_diagram(r) == svg_diagram(r, {.lang = Lang::En}));
}

TEST_CASE("every catalogue scenario's Chinese report renders, with no English sentence left and no id unfilled") {
  const std::vector<std::string> files = catalogue_files();
  CHECK(files.size() >= 50);
  for (const std::string& file : files) {
    INFO(file);
    const RunResult r = run_scenario(catalogue(file));
    const std::string zh = text_report(r, {.full = true, .lang = Lang::Zh});
    const std::string told = text_report(r, {.lang = Lang::Zh});
    for (const std::string& left : english_words(zh, r)) CHECK_MESSAGE(false, left);
    for (const std::string& text : {zh, told}) {
      CHECK(text.find("判定：") != std::string::npos);
      CHECK(std::regex_search(text, std::regex(R"(\{[a-z]+\})")) == false);  // every argument filled
    }
    DiagramOptions d;
    d.lang = Lang::Zh;
    const std::string svg = svg_diagram(r, d);
    CHECK(std::regex_search(svg, std::regex(R"(\{[a-z]+\})")) == false);
    // Its tooltips and labels: no English sentence left either.
    for (const std::string& left : english_words(diagram_words(svg), r, 0)) {
      const std::string said = "diagram: " + left;
      CHECK_MESSAGE(false, said);
    }
  }
}

TEST_CASE("the Chinese diagram: its legend and labels in Chinese, a font with CJK glyphs, well-formed") {
  const RunResult r = run_scenario(catalogue("scenarios/kleppmann/gc-pause.toml"));
  DiagramOptions d;
  d.lang = Lang::Zh;
  const std::string svg = svg_diagram(r, d);
  // The legend is wrapped text (a Chinese line may break between any two
  // characters): read as one, its lines joined and spaces aside.
  std::string legend_text;
  const std::regex legend_line(R"re(<text x="[0-9.]+" y="[0-9.]+" fill="#555">([^<]*)</text>)re");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), legend_line); it != std::sregex_iterator(); ++it) legend_text += (*it)[1].str();
  auto spaceless = [](std::string t) {
    t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
    return t;
  };
  for (W legend : {W::LegendCriticalSection, W::LegendLeaseBelieved, W::LegendKeyExpired, W::LegendPause})
    CHECK(spaceless(legend_text).find(spaceless(std::string(word(Lang::Zh, legend)))) != std::string::npos);
  CHECK(svg.find(">授予<") != std::string::npos);       // the grant's arrow
  CHECK(svg.find(">停顿 40s<") != std::string::npos);   // the pause's length
  CHECK(svg.find("bar: critical section") == std::string::npos);
  CHECK(svg.find("font-family=\"WenQuanYi Micro Hei, Noto Sans CJK SC, sans-serif\"") != std::string::npos);
  const ScratchDir dir("locksim-lang-svg");
  const fs::path path = dir.path() / "gc-pause.zh.svg";
  std::ofstream(path) << svg;
  if (run_command("command -v xmllint >/dev/null").status == 0) CHECK(run_command("xmllint --noout " + path.string() + " 2>&1").output == "");
  // The font is installed where scripts/install-deps has run.
  if (run_command("command -v fc-list >/dev/null").status == 0)
    CHECK(run_command("fc-list :lang=zh family | grep -c -i -e 'WenQuanYi Micro Hei' -e 'Noto Sans CJK SC'").output != "0\n");
}

TEST_CASE("locksim run --lang zh tells the story in Chinese, and --lang fr is refused with exit 2") {
  const auto zh = locksim_in_source("run scenarios/kleppmann/gc-pause.toml --lang zh");
  CHECK(zh.status == 0);
  CHECK(zh.output.find("判定：重叠持有 (overlap)") != std::string::npos);
  const auto fr = locksim_in_source("run scenarios/kleppmann/gc-pause.toml --lang fr");
  CHECK(fr.status == 2);
  CHECK(fr.output == "locksim: --lang: \"fr\" is not a language locksim speaks (en, zh)\n");
  CHECK(locksim_in_source("explore scenarios/kleppmann/gc-pause.toml --replay 11 --lang fr").status == 2);
  CHECK(locksim_in_source("check scenarios/kleppmann/gc-pause.toml --lang fr").status == 2);
  const auto check = locksim_in_source("check scenarios/kleppmann/gc-pause.toml --lang zh");
  CHECK(check.status == 0);
  CHECK(check.output.find("1 个场景：1 个符合预期，0 个不符合预期") != std::string::npos);
  // The scenario's own line too: the mark and the kinds in Chinese, the path as it is.
  CHECK(check.output.find("符合 scenarios/kleppmann/gc-pause.toml") != std::string::npos);
  CHECK(check.output.find("(stale-write)") != std::string::npos);
  CHECK(check.output.find("ok ") == std::string::npos);
  CHECK(locksim_in_source("check scenarios/kleppmann/gc-pause.toml").output.find("ok   scenarios/kleppmann/gc-pause.toml") !=
        std::string::npos);
  // The environment chooses nothing: English, whatever LANG says.
  const auto env = run_command("cd " + std::string(LOCKSIM_SOURCE_DIR) + " && LANG=zh_CN.UTF-8 LC_ALL=zh_CN.UTF-8 " + LOCKSIM_BINARY +
                               " run scenarios/kleppmann/gc-pause.toml 2>&1");
  CHECK(env.output.find("Verdict: overlap") != std::string::npos);
  const auto replay = locksim_in_source("explore scenarios/kleppmann/gc-pause.toml --replay 11 --lang zh");
  CHECK(replay.output.find("判定：") != std::string::npos);
}

TEST_CASE("explore --replay --lang zh: the faults, the story and the liveness line in Chinese, no English sentence left") {
  // Not stuck (the lock granted again after the heal), and stuck (a lock with no TTL held by a crashed client).
  for (auto [file, seed, liveness] : {std::tuple{std::string("scenarios/kleppmann/gc-pause.toml"), "11", "活性：锁在 60.002s 再次被授予，距所有故障恢复 2ms"},
                                      std::tuple{std::string("scenarios/redis/setnx-no-ttl-crash.toml"), "4021071077779581908", "活性：卡死：所有故障在 "}}) {
    INFO(file);
    const auto zh = locksim_in_source("explore " + file + " --replay " + seed + " --liveness --lang zh");
    INFO(zh.output);
    CHECK(zh.output.find(liveness) != std::string::npos);
    CHECK(zh.output.find("liveness:") == std::string::npos);
    const RunResult r = run_scenario(catalogue(file));  // the process names (and the liveness phase's probe)
    // The replay's own lines (its header, the faults drawn: the path aside), then the report as `run` tells it.
    const auto report_at = zh.output.find("\n\n");
    REQUIRE(report_at != std::string::npos);
    std::string head = zh.output.substr(0, report_at);
    head.replace(head.find(file), file.size(), 1, ' ');
    for (const std::string& left : english_words(head, r, 0)) CHECK_MESSAGE(false, left);
    for (const std::string& left : english_words(zh.output.substr(report_at + 2), r, 4, {"probe"})) CHECK_MESSAGE(false, left);
    // The check finds the English line where there is one.
    const auto en = locksim_in_source("explore " + file + " --replay " + seed + " --liveness");
    CHECK(en.output.find("\nliveness: ") != std::string::npos);
    CHECK_FALSE(english_words(en.output.substr(en.output.find("\nliveness: ")), r, 0).empty());
  }
}

TEST_CASE("locksim explore --lang zh: the summary, what found each kind and the liveness line, no English sentence left") {
  const std::string file = "scenarios/kleppmann/gc-pause.toml";
  const RunResult r = run_scenario(catalogue(file));
  const std::string args = "explore " + file + " --runs 300 --liveness";
  const auto zh = locksim_in_source(args + " --lang zh");
  INFO(zh.output);
  CHECK(zh.output.find("是什么找到了它们") != std::string::npos);
  CHECK(zh.output.find("活性：") != std::string::npos);
  CHECK(zh.output.find("某一时刻") != std::string::npos);  // a fault at a time, said as a label
  auto words_of = [&](const std::string& text) { return search_english(text, r, file); };
  for (const std::string& left : words_of(zh.output)) CHECK_MESSAGE(false, left);
  // The check finds the English where there is some; the figures are the same runs'.
  const auto en = locksim_in_source(args);
  CHECK(en.status == zh.status);
  CHECK(words_of(en.output).size() > 20);
  CHECK(en.output.find("what found them") != std::string::npos);
}

TEST_CASE("locksim explore --exhaustive --lang zh: the space searched, the findings, what is shown, no English sentence left") {
  const std::string file = "scenarios/kleppmann/gc-pause-fenced.toml";
  const RunResult r = run_scenario(catalogue(file));
  const std::string args = "explore " + file + " --exhaustive --depth 1";
  const auto zh = locksim_in_source(args + " --lang zh");
  INFO(zh.output);
  CHECK(zh.output.find("穷举搜索，深度 1") != std::string::npos);
  CHECK(zh.output.find("已证明：") != std::string::npos);  // a kind no schedule shows
  CHECK(zh.output.find("停顿") != std::string::npos);      // a finding's fault, said from its Phrase
  for (const std::string& left : search_english(zh.output, r, file)) CHECK_MESSAGE(false, left);
  const auto en = locksim_in_source(args);
  CHECK(en.status == zh.status);
  CHECK(search_english(en.output, r, file).size() > 20);
  CHECK(en.output.find("exhaustive search, depth 1") != std::string::npos);
}

TEST_CASE("locksim explore --matrix --lang zh: the head, the column and the foot in Chinese, the same shares, no English sentence left") {
  const std::string file = "scenarios/kleppmann/gc-pause.toml";
  const RunResult r = run_scenario(catalogue(file));
  const std::string args = "explore " + file + " --runs 40 --matrix redis-single,redlock";
  const auto zh = locksim_in_source(args + " --lang zh");
  INFO(zh.output);
  CHECK(zh.status == 0);
  CHECK(zh.output.find("每个算法 40 次运行") != std::string::npos);
  CHECK(zh.output.find("  算法 ") != std::string::npos);
  // Its columns line up on a terminal: 算法 is as wide as four letters.
  std::istringstream lines(zh.output);
  std::vector<std::size_t> widths;
  for (std::string line; std::getline(lines, line);)
    if (line.ends_with('%') || line.starts_with("  算法 ")) widths.push_back(display_width(line));
  CHECK(widths.size() == 3);
  CHECK(std::adjacent_find(widths.begin(), widths.end(), std::not_equal_to<>()) == widths.end());
  // Kept as they are: the file's path, and the variants and the kinds'
  // names heading rows and columns, as --matrix and [expect] take them.
  std::set<std::string> ids{"redis", "single", "redlock", "explore"};  // and the command, `explore`
  for (ViolationKind k : kAllViolationKinds) add_words(ids, std::string(violation_name(k)));
  auto words_of = [&](const std::string& text) { return english_words(without_path(text, file), r, 0, ids); };
  for (const std::string& left : words_of(zh.output)) CHECK_MESSAGE(false, left);
  const auto en = locksim_in_source(args);
  INFO(en.output);
  CHECK(en.output.find("40 runs from seed") != std::string::npos);
  CHECK(words_of(en.output).size() > 10);
  // The same runs: every share, row by row, is the same in both.
  static const std::regex share(R"(\d+\.\d\d%)");
  auto shares = [&](const std::string& text) {
    std::vector<std::string> all;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), share); it != std::sregex_iterator(); ++it) all.push_back(it->str());
    return all;
  };
  CHECK(shares(zh.output).size() == 2 * std::size(kAllViolationKinds));
  CHECK(shares(zh.output) == shares(en.output));
}

TEST_CASE("locksim explore --boundary --lang zh: the range, each flip and what each edge needs, no English sentence left") {
  const std::string file = "scenarios/kleppmann/gc-pause.toml";
  const RunResult r = run_scenario(catalogue(file));
  // Kept as they are: the file's path, the parameter moved and the fault kind, as --boundary and [[fault]] name them.
  const std::set<std::string> ids{"fault", "duration", "lock", "pause"};
  auto words_of = [&](const std::string& text) { return english_words(without_path(text, file), r, 0, ids); };
  for (const std::string parameter : {"fault[1].duration", "lock.ttl"}) {
    CAPTURE(parameter);
    const std::string args = "explore " + file + " --boundary " + parameter;
    const auto zh = locksim_in_source(args + " --lang zh");
    INFO(zh.output);
    CHECK(zh.status == 0);
    CHECK(zh.output.find("判定在何处翻转") != std::string::npos);
    CHECK(zh.output.find("精确到纳秒") != std::string::npos);
    for (const std::string& left : words_of(zh.output)) CHECK_MESSAGE(false, left);
    const auto en = locksim_in_source(args);
    CHECK(words_of(en.output).size() > 20);
  }
  // The English is as it was: each edge's sentence names what moves in words.
  const auto en = locksim_in_source("explore " + file + " --boundary fault[1].duration");
  CHECK(en.output.find("\n  The failure (overlap, stale-write, lost-update) needs a pause of at least 30.002s (the file has 40s).\n") !=
        std::string::npos);
  const auto zh = locksim_in_source("explore " + file + " --boundary fault[1].duration --lang zh");
  CHECK(zh.output.find("需要 pause 故障的时长至少 30.002s（文件中为 40s）。") != std::string::npos);
}

TEST_CASE("locksim sweep --lang zh: the grid, its numbers and where safe and unsafe meet, in Chinese, no English sentence left") {
  const std::string file = "scenarios/kleppmann/gc-pause.toml";
  const RunResult r = run_scenario(catalogue(file));
  for (const char* sets : {"--set 'fault[1].duration=1s..40s:4'", "--set 'fault[1].duration=1s..40s:3' --set lock.ttl=5s,20s"}) {
    INFO(sets);
    const auto zh = locksim_in_source("sweep " + file + " " + std::string(sets) + " --lang zh");
    INFO(zh.output);
    CHECK(zh.output.find("扫描 fault[1].duration") != std::string::npos);
    CHECK(zh.output.find("fault[1]，1s 时：client1 停顿 40s") != std::string::npos);  // the fault, said from its Phrase
    CHECK(zh.output.find("起不安全") != std::string::npos);
    // The header's two lines: the file's path and its title (the user's
    // words); the parameters swept are identifiers (fault[1].duration, lock.ttl).
    const std::set<std::string> parameters{"fault", "duration", "lock", "ttl"};
    for (const std::string& left : english_words(zh.output, r, 2, parameters)) CHECK_MESSAGE(false, left);
    // The check finds the English where there is some.
    const auto en = locksim_in_source("sweep " + file + " " + std::string(sets));
    CHECK(en.status == zh.status);
    CHECK(english_words(en.output, r, 2, parameters).size() > 10);
  }
}

TEST_CASE("locksim sweep --svg --lang zh: the picture's subtitle, axes, tooltips and legend in Chinese, no English sentence left") {
  const std::string file = "scenarios/kleppmann/gc-pause.toml";
  const RunResult r = run_scenario(catalogue(file));
  const ScratchDir dir("locksim-lang-sweep-svg");
  const std::string sweep = "sweep " + file + " --set 'fault[1].duration=1s..40s:3' --set lock.ttl=5s,20s --svg ";
  REQUIRE(locksim_in_source(sweep + (dir.path() / "zh.svg").string() + " --lang zh").status <= 1);
  REQUIRE(locksim_in_source(sweep + (dir.path() / "en.svg").string()).status <= 1);
  const std::string zh = read_text((dir.path() / "zh.svg").string()), en = read_text((dir.path() / "en.svg").string());
  INFO(zh);
  CHECK(zh.find("违规比例") != std::string::npos);
  CHECK(zh.find("文件中：fault[1]，1s 时：client1 停顿 40s") != std::string::npos);
  // Kept as they are: the file's path and title (the user's words), the
  // parameters swept and the kinds' names in the tooltips and the legend.
  std::set<std::string> ids{"fault", "duration", "lock", "ttl", "locksim", "sweep"};
  for (ViolationKind k : kAllViolationKinds) add_words(ids, std::string(violation_name(k)));
  auto words_of = [&](const std::string& svg) {
    return english_words(without_path(diagram_words(svg), file), r, 1, ids);  // line 1: the file's title
  };
  for (const std::string& left : words_of(zh)) CHECK_MESSAGE(false, left);
  CHECK(words_of(en).size() > 20);
  CHECK(en.find(">violation rate<") != std::string::npos);
  CHECK(en.find(">kinds seen:</text><text x=") != std::string::npos);  // and each kind found, by name
  CHECK(zh.find(">出现的违规：</text>") != std::string::npos);
  CHECK(en.find(": 0 of 1 runs violated") != std::string::npos);
}

TEST_CASE("locksim shrink --lang zh: what it found and what it could not shrink, in Chinese, and --lang fr refused") {
  const ScratchDir dir("locksim-lang-shrink");
  const std::string shrink = "shrink scenarios/kleppmann/gc-pause-fenced.toml --seed 7505579150628244444 --out " + dir.path().string();
  const auto zh = locksim_in_source(shrink + " --faults pause,clock-jump --lang zh");
  INFO(zh.output);
  CHECK(zh.status == 0);
  CHECK(zh.output.find("  重叠持有 (overlap)、过期写入 (stale-write)、更新丢失 (lost-update)：缩减为 ") != std::string::npos);
  CHECK(zh.output.find(" 个故障，用了 ") != std::string::npos);
  CHECK(zh.output.find("shrunk to") == std::string::npos);
  // English as it was.
  CHECK(locksim_in_source(shrink + " --faults pause,clock-jump").output.find("  overlap, stale-write, lost-update: shrunk to ") !=
        std::string::npos);
  // Drawn from every kind, the run shows nothing: said in Chinese, the flags named as they are typed.
  const auto nothing = locksim_in_source(shrink + " --lang zh");
  INFO(nothing.output);
  CHECK(nothing.status == 1);
  CHECK(nothing.output.find("种子为 7505579150628244444 的运行，按 默认选项 抽取故障，没有违规：没有可缩减的。") != std::string::npos);
  CHECK(nothing.output.find("--max-drift-ppm") != std::string::npos);
  CHECK(nothing.output.find("nothing to shrink") == std::string::npos);
  CHECK(locksim_in_source(shrink + " --lang fr").status == 2);
}

// Each text of an SVG whose estimated extent (markup::text_width, as the
// layout estimates it; its anchor) leaves the picture's width: "x0..x1 of W: text".
std::vector<std::string> texts_outside(const std::string& svg) {
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex(R"re(<svg [^>]*width="([0-9.]+)"[^>]*font-size="([0-9.]+)")re")));
  const double width = std::stod(m[1].str()), root_font = std::stod(m[2].str());
  const std::regex text(R"re(<text([^>]*)>(.*?)</text>)re"), tag("<[^>]*>"), x_at(R"re( x="([-0-9.]+)")re"),
      size(R"re( font-size="([0-9.]+)")re"), anchor(R"re( text-anchor="([a-z]+)")re");
  std::vector<std::string> outside;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
    const std::string attrs = (*it)[1].str();
    std::string words = std::regex_replace((*it)[2].str(), tag, "");
    for (auto [entity, c] : {std::pair{"&#39;", "'"}, std::pair{"&quot;", "\""}, std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"}, std::pair{"&amp;", "&"}})
      for (auto at = words.find(entity); at != std::string::npos; at = words.find(entity, at)) words.replace(at, std::string(entity).size(), c);
    std::smatch a;
    if (!std::regex_search(attrs, a, x_at)) continue;
    const double x = std::stod(a[1].str());
    const double font = std::regex_search(attrs, a, size) ? std::stod(a[1].str()) : root_font;
    const std::string how = std::regex_search(attrs, a, anchor) ? a[1].str() : "start";
    const double w = markup::text_width(words, font);
    const double x0 = how == "middle" ? x - w / 2 : how == "end" ? x - w : x;
    if (x0 < 0 || x0 + w > width)
      outside.push_back(fmt::format("{:.0f}..{:.0f} of {:.0f}: {}", x0, x0 + w, width, words));
  }
  return outside;
}

TEST_CASE("every text of every catalogue diagram, in English and in Chinese, for the page and for slides, lies inside the picture's width") {
  for (const std::string& file : catalogue_files()) {
    INFO(file);
    const RunResult r = run_scenario(catalogue(file));
    for (Lang lang : kAllLangs)
      for (bool slides : {false, true}) {
        DiagramOptions d;
        d.lang = lang;
        d.slides = slides;
        for (const std::string& out : texts_outside(svg_diagram(r, d))) {
          const std::string said = std::string(lang_name(lang)) + (slides ? " slides: " : ": ") + out;
          CHECK_MESSAGE(false, said);
        }
      }
  }
}

}  // namespace lang_test
