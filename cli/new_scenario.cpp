#include "cli/new_scenario.hpp"

#include <fmt/format.h>

#include "cli/version.hpp"
#include "harness/faults/kind.hpp"
#include "sim/servers/table.hpp"

namespace locksim {

namespace {

std::string node_name(const AlgorithmInfo& a, int i, int n) {
  const ServerModel& model = server_model(a.server);
  if (n == 1 && !model.replicates) return std::string(model.node_prefix);
  return fmt::format("{}{}", model.node_prefix, i);
}

// Text as "# " comment lines of at most 80 columns.
std::string comment_lines(const std::string& text) {
  std::string out, line;
  std::size_t from = 0;
  while (from < text.size()) {
    std::size_t end = text.find(' ', from);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(from, end - from);
    if (!line.empty() && line.size() + 1 + word.size() > 78) {
      out += "# " + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    from = end + 1;
  }
  return line.empty() ? out : out + "# " + line + "\n";
}

void lock_table(std::string& out, const AlgorithmInfo& a) {
  out += fmt::format("\n[lock]\nalgorithm = \"{}\"\n# {}\n# (after {})\n", a.name, a.help, a.source);
  if (a.needs_ttl) out += "ttl = \"10s\"                 # the lease: the lock expires this long after it is set\n";
  else if (a.takes_ttl) out += "# ttl = \"10s\"               # optional: the lease\n";
  else out += fmt::format("# (no ttl: {} sets no expiry of its own; its lease, if any, is among the keys below)\n", a.name);
  if (!a.flavours.empty()) {
    out += "# flavour: where the reference libraries differ; the first is the default.\n";
    for (const OptionInfo& f : a.flavours) out += fmt::format("# flavour = {:<20} # {}\n", fmt::format("\"{}\"", f.key), f.help);
  }
  out += "# fencing = \"none\" (the default): the storage takes every write.\n";
  if (a.monotonic_token)
    out += "# fencing = \"token\"         # the storage refuses a write whose token is lower than the highest it has seen\n";
  else
    out += fmt::format("# (fencing = \"token\" is refused: {} issues no monotonic token)\n", a.name);
  out += "# fencing = \"lock-value\"    # the client claims the storage with its lock value (check-and-set)\n";
  if (!a.options.empty()) {
    out += fmt::format("# The other keys {} accepts, each with its default (add one to change it):\n", a.name);
    for (const OptionInfo& o : a.options) out += fmt::format("#   {:<18} {}\n", o.key, o.help);
  }
}

void service(std::string& out, const AlgorithmInfo& a) {
  const int n = a.starting_nodes;
  out += fmt::format("\n# The lock service: {}.\n", n == 1 ? "one node" : fmt::format("{} independent nodes", n));
  out += "# A node may have clock = { offset = \"2s\", drift_ppm = 50000 }; Redis nodes also\n"
         "# persistence = \"aof-always\", restart_delay, replica_of (with a [sentinel]).\n";
  for (int i = 1; i <= n; ++i) out += fmt::format("[[node]]\nname = \"{}\"\n", node_name(a, i, n));
}

void clients_and_faults(std::string& out) {
  out += R"(
# The resource the lock protects: a counter each client increments.
[storage]
initial = 0

# Each client: acquire; read the counter; work; write the counter + 1; release.
# Also: job = "hold", repeat, think, check_before_write, clock, count.
[[client]]
name = "client1"
start = "0s"
work = "1s"

[[client]]
name = "client2"
start = "15s"
work = "1s"

# A fault: uncomment it to freeze client1 for 40 s from 1 s on, longer than
# any lease above, and predict what happens before you run it again.
)";
  out += comment_lines("Kinds: " + fault_kind_names(", ") + " (`locksim list` says which keys each takes).");
  out += R"(# [[fault]]
# at = "1s"
# kind = "pause"
# target = "client1"
# duration = "40s"

)";
  std::string kinds;
  for (ViolationKind k : kAllViolationKinds) kinds += (kinds.empty() ? "" : ", ") + std::string(violation_name(k));
  out += comment_lines("What the run should show. Without [expect], `locksim run` expects no violation. Kinds: " + kinds + ".");
  out += "# [expect]\n# violations = [\"overlap\", \"stale-write\", \"lost-update\"]\n";
}

}  // namespace

std::string new_scenario(const AlgorithmInfo& a) {
  std::string out = fmt::format(
      "# A starting scenario for {}, written by `locksim new {}` (locksim {}).\n"
      "# Run it with `locksim run FILE`. Every key: `locksim list`, and docs/scenarios.md\n"
      "# (share/doc/locksim/scenarios.md where locksim is installed).\n"
      "# Durations are strings with a unit (\"250ms\", \"10s\", \"2m\"); a range \"1ms..5ms\" draws one.\n\n",
      a.name, a.name, kVersion);
  out += fmt::format("title = \"{}: two clients, one lock\"\n", a.name);
  out += "source = \"locksim new: say where your story comes from\"\n";
  out += R"(about = """
Two clients take the lock in turn: each acquires it, reads a counter from the
storage, works for a second, writes the counter plus one and releases. As
written nothing goes wrong. Uncomment the [[fault]] at the end, predict, run.
Then say here what your scenario shows, and why.
"""
seed = 1
duration = "60s"
)";
  lock_table(out, a);
  out += "\n[network]\ndelay = \"1ms\"                # one-way, per message; a range draws each\n";
  service(out, a);
  clients_and_faults(out);
  return out;
}

}  // namespace locksim
