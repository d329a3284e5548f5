// The playground's engine: what the page asks of locksim, one JSON request
// in, one JSON answer out. The page's worker calls it through
// web/exports.cpp (WebAssembly); the native tests call it directly, so the
// page's answers are the command line's, computed by the same code.
//
// Every request has "op" and, but for "score", the scenario: "toml" (its
// text) and "path" (the name it goes by in the story and in messages:
// "scenarios/kleppmann/gc-pause.toml"), and "lang" ("en", default, or "zh").
//
//   describe  title, source, about, expected verdict, the sliders (web/numbers.hpp)
//   run       the run as `locksim run` tells it: the text report, the story
//             told line by line, the verdict, the violations, the trace hash,
//             the space-time diagram (SVG); "seed" overrides the file's;
//             "predict": [kinds] scores a prediction (run --predict);
//             "json": true adds `--format json`'s report
//   quiz      the set-up without its story (run --quiz) and the kinds to choose from
//   set       the text with one number moved: "parameter", "value" (an
//             integer in the unit's base, or text as `sweep --set` takes it: "20s")
//   explore   random fault schedules (locksim explore): "runs", "seed",
//             "faults": [kinds], "max_faults"; progress as it goes
//   replay    one explored run (explore --replay): "run_seed" and explore's
//             options; the run's answer, its faults and its scenario as TOML
//   shrink    an explored run shrunk for one "kind" (locksim shrink): the
//             smallest scenario that still shows it, as TOML
//   sweep     one number over "values" (integers in its unit's base), each
//             point run as the slider would run it (harness/sweep.hpp's
//             sweep_point, the scenario's seed): per value, the verdict
//
// An answer is {"error": {"message", "line"}} for bad input (the loader's
// words: "FILE:LINE: ...", "line" its LINE or null) and {"error":
// {"message", "internal": true}} for a bug in locksim.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace locksim::web {

// Called with a progress record ({"done", "total", "violating"}) as a
// search goes, at most about a hundred times per search.
using ProgressSink = std::function<void(const std::string& json)>;

std::string answer(std::string_view request, const ProgressSink& progress = {});

}  // namespace locksim::web
