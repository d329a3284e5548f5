// `locksim diff-etcd`: the etcd model against a real etcd (live/etcd/diff.hpp).
#pragma once

#include <functional>
#include <optional>

namespace CLI {
class App;
}

namespace locksim {

// Adds `diff-etcd` to `app`. The returned function, after parsing, runs it if
// it was chosen: its exit status (0: no mismatch, 1: mismatches, 2: cannot
// run), else nullopt.
std::function<std::optional<int>()> add_diff_etcd_command(CLI::App& app);

}  // namespace locksim
