// The engine's door for JavaScript (the page's worker, Node's tests): one
// function, a JSON request in and a JSON answer out (web/api.hpp), in
// memory the caller hands back with locksim_free. A search's progress goes
// to the module's onProgress(json), when the caller has set one. The
// functions are plain C, so the native build compiles and tests them too.
#include <cstdlib>
#include <cstring>
#include <string>

#include "web/api.hpp"

#ifdef __EMSCRIPTEN__
#include <emscripten.h>
// clang-format off
EM_JS(void, locksim_progress_to_js, (const char* json), {
  if (Module["onProgress"]) Module["onProgress"](UTF8ToString(json));
});
// clang-format on
#endif

extern "C" {

char* locksim_request(const char* request) {
  const locksim::web::ProgressSink progress = [](const std::string& json) {
#ifdef __EMSCRIPTEN__
    locksim_progress_to_js(json.c_str());
#else
    (void)json;
#endif
  };
  const std::string answer = locksim::web::answer(request ? request : "", progress);
  char* out = static_cast<char*>(std::malloc(answer.size() + 1));
  if (out) std::memcpy(out, answer.c_str(), answer.size() + 1);
  return out;
}

void locksim_free(char* answer) { std::free(answer); }

}  // extern "C"
