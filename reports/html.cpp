// The self-contained HTML page of a run (reports/diagram.hpp, html_report).
#include <fmt/format.h>

#include "reports/diagram.hpp"
#include "reports/markup.hpp"
#include "reports/report.hpp"
#include "reports/words.hpp"

namespace locksim {

using markup::esc;

std::string html_report(const RunResult& r, const DiagramOptions& o) {
  const Scenario& sc = *r.scenario;
  // The story as the text tells it, folded; a folded line opens on its steps.
  const Lang lang = o.lang;
  const Story story = tell_story(r, lang);
  const StoryClock& clock = story.clock;
  const std::vector<Step>& told = story.steps;
  std::string steps;
  for (const StoryLine& l : fold_story(r.world->trace(), told, told_violations(r.violations), clock, lang)) {
    if (l.steps.size() == 1) {
      steps += fmt::format("<li><span class=\"t\">{}</span> {}</li>\n", clock(l.at), esc(l.text));
      continue;
    }
    std::string inner;
    for (std::size_t i : l.steps) inner += fmt::format("<li><span class=\"t\">{}</span> {}</li>", clock(told[i].at), esc(told[i].text));
    steps += fmt::format("<li class=\"folded\"><details><summary><span class=\"t\">{}</span> {}</summary><ol>{}</ol></details></li>\n",
                         clock(l.at), esc(l.text), inner);
  }
  std::string verdict;
  for (ViolationKind k : r.verdict) verdict += (verdict.empty() ? "" : std::string(word(lang, W::KindSeparator))) + kind_words(lang, k);
  if (verdict.empty()) verdict = say(lang, W::NoViolation);
  std::string details;
  for (const Violation& v : r.violations)
    details += fmt::format("<li><b>{}</b> {}</li>\n", esc(kind_words(lang, v.kind)), esc(violation_words(lang, v)));
  return fmt::format(R"~(<!DOCTYPE html>
<html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 24px; color: #222; }}
.about {{ white-space: pre-wrap; background: #f7f7f7; padding: 12px; border-left: 4px solid #4a90d9; }}
.verdict {{ font-size: 1.2em; font-weight: bold; color: {vcolour}; }}
.diagram {{ overflow-x: auto; border: 1px solid #ddd; margin: 16px 0; }}
.diagram svg *:hover {{ opacity: 0.7; }}
ol li {{ margin: 2px 0; }} .t {{ font-family: monospace; color: #555; }}
code {{ background: #f0f0f0; padding: 2px 4px; }}
</style></head>
<body>
<h1>{title}</h1>
<p>{path} · {source}</p>
<p class="about">{about}</p>
<p class="verdict" id="verdict">{verdict}{expected}</p>
<ul class="violations">{details}</ul>
<div class="diagram">{svg}</div>
<p>{hover}</p>
<h2>{what_happened}</h2>
<ol class="narrative">{steps}</ol>
<p>{footer}<code>{replay}</code></p>
</body></html>
)~",
                     fmt::arg("lang", say(lang, W::HtmlLang)), fmt::arg("title", esc(sc.title)), fmt::arg("path", esc(sc.path)),
                     fmt::arg("source", esc(say(lang, W::SourceLine, {{"source", sc.source}}))), fmt::arg("about", esc(sc.about)),
                     fmt::arg("verdict", esc(say(lang, W::VerdictLine, {{"kinds", verdict}}))),
                     fmt::arg("expected", sc.expect.present ? say(lang, r.as_expected() ? W::AsExpected : W::NotAsExpected) : ""),
                     fmt::arg("hover", say(lang, W::HtmlHover)), fmt::arg("what_happened", say(lang, W::HtmlWhatHappened)),
                     fmt::arg("footer", esc(say(lang, W::HtmlFooter, {{"seed", std::to_string(r.seed)}, {"hash", r.trace_hash}}))),
                     fmt::arg("vcolour", r.verdict.empty() ? "#2a2" : "#c00"), fmt::arg("details", details),
                     fmt::arg("svg", svg_diagram(r, o)), fmt::arg("steps", steps), fmt::arg("replay", esc(replay_command(r))));
}

}  // namespace locksim
