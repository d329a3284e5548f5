// Fuzz target: the small parsers inside the loader — durations, ranges and
// the fault trigger on = "<process> <event>#N" — which are private to it, so
// the fuzzed text goes into a scenario built around it. The first byte picks
// the field; the rest is its text. parse_duration is also called directly,
// with its invariants: what it accepts is not "too long", and formats back
// to a text that parses to the same duration.
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common.hpp"
#include "lockalgos/redis_common.hpp"
#include "harness/scenario.hpp"
#include "sim/time.hpp"

using namespace locksim;

namespace {

// `text` as a TOML basic string; bytes outside printable ASCII as \u00XX.
std::string quoted(std::string_view text) {
  static const char* hex = "0123456789ABCDEF";
  std::string out = "\"";
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (b == '"' || b == '\\') out += {'\\', c};
    else if (b < 0x20 || b >= 0x7F) out += std::string("\\u00") + hex[b >> 4] + hex[b & 0xF];
    else out += c;
  }
  return out + "\"";
}

// A valid scenario with the fuzzed field in it.
std::string scenario_with(unsigned field, const std::string& q) {
  std::string lock = "algorithm = \"redis-single\"\nttl = \"2s\"\n", network = "delay = \"1ms\"\n";
  std::string client = "name = \"client1\"\nrepeat = \"forever\"\n", clock, fault;
  switch (field) {
    case 0: lock += "retry_delay = " + q + "\n"; break;
    case 1: network = "delay = " + q + "\n"; break;
    case 2: client += "start = " + q + "\n"; break;
    case 3: client += "think = " + q + "\n"; break;
    case 4: lock = "algorithm = \"redis-single\"\nttl = " + q + "\n"; break;
    case 5: fault = "at = " + q + "\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"1s\"\n"; break;
    case 6: clock = "clock = { offset = " + q + ", drift_ppm = 0 }\n"; break;
    case 7: fault = "on = " + q + "\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"1s\"\n"; break;
    case 8: fault = "on = " + q.substr(0, 1) + "client1 " + q.substr(1) + "\nafter = \"1ms\"\nkind = \"crash\"\ntarget = \"redis1\"\n"; break;
    default: fault = "on = " + q.substr(0, 1) + "client2 acquired#" + q.substr(1) + "\nkind = \"pause\"\ntarget = \"client1\"\nduration = \"3s\"\n"; break;
  }
  std::string s = "title = \"t\"\nabout = \"a\"\nsource = \"s\"\nduration = \"20s\"\n\n[lock]\n" + lock + "\n[network]\n" + network +
                  "\n[[node]]\nname = \"redis1\"\n\n[[client]]\n" + client + clock + "\n[[client]]\nname = \"client2\"\nrepeat = 5\n";
  if (!fault.empty()) s += "\n[[fault]]\n" + fault;
  return s;
}

void check_duration(std::string_view text) {
  const bool too_long = duration_too_long(text);
  const auto d = parse_duration(text);
  if (!d) return;
  if (too_long) fuzz::fail("\"" + std::string(text) + "\" parses, yet is 'too long'");
  const std::string again = format_duration(*d);
  const auto back = parse_duration(again);
  if (!back || *back != *d)
    fuzz::fail(fmt::format("\"{}\" is {} ns, formatted \"{}\", which parses {}", text, d->count_ns(), again,
                           back ? fmt::format("to {} ns", back->count_ns()) : "not at all"));
}

void check_range(const DurationRange& r, const char* what) {
  if (r.lo < Duration::zero() || r.hi < r.lo) fuzz::fail(std::string(what) + ": the loader accepted a range " + format_range(r));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  check_duration(text);
  if (text.size() >= 8) {  // any duration formats to a text that parses back to it
    std::int64_t n;
    std::memcpy(&n, text.data(), sizeof n);
    const std::int64_t max = Duration::max().count_ns();
    check_duration(format_duration(Duration::ns(n % (max + 1))));
  }
  const unsigned field = data[0] % 10;
  Scenario s;
  try {
    s = parse_scenario(scenario_with(field, quoted(text)), "fields.toml");
  } catch (const ScenarioError&) {
    return 0;
  }
  // redis-single's own options (lockalgos/redis_common.hpp), parsed by the algorithm.
  if (const auto* o = dynamic_cast<const SingleNodeOptions*>(s.lock.options.get())) check_range(o->retry_delay, "retry_delay");
  check_range(s.network.delay, "delay");
  check_range(s.clients.at(0).start, "start");
  check_range(s.clients.at(0).think, "think");
  for (const FaultSpec& f : s.faults)
    if (f.on_occurrence < 1 || (f.at && (*f.at < Duration::zero() || *f.at >= s.duration)))
      fuzz::fail("a fault the loader should have refused");
  fuzz::bounded_run(s);
  return 0;
}
