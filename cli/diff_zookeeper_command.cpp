// `locksim diff-zookeeper`: the ZooKeeper server model against a real
// ZooKeeper, reply by reply (live/zookeeper/diff.hpp).
#include <CLI/CLI.hpp>
#include <chrono>
#include <iomanip>
#include <iostream>

#include "cli/live_commands.hpp"
#include "live/common.hpp"
#include "live/zookeeper/diff.hpp"

namespace locksim {

std::function<std::optional<int>()> add_diff_zookeeper_command(CLI::App& app) {
  struct Args {
    std::uint64_t sequences = 2000;
    std::uint64_t seed = 1;
    std::uint64_t from = 0;
    std::string keep;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "diff-zookeeper", "check the simulator's ZooKeeper model against a real ZooKeeper server, reply by reply");
  cmd->add_option("--sequences", a->sequences, "how many random sequences of the recipes' requests (default 2000)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  cmd->add_option("--seed", a->seed, "the seed the sequences are drawn from (default 1)");
  cmd->add_option("--from", a->from, "start at this sequence of the seed's (default 0): with --sequences 1, one sequence alone")
      ->check(CLI::Range(std::uint64_t{0}, std::uint64_t{100'000'000}));
  cmd->add_option("--keep", a->keep, "keep the server's directory (zoo.cfg, data, its log) in DIR");
  return [cmd, a]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    live::zkdiff::RunOptions o;
    o.sequences = a->sequences;
    o.seed = a->seed;
    o.from = a->from;
    o.keep = a->keep;
    const auto start = std::chrono::steady_clock::now();
    live::zkdiff::Summary sum;
    try {
      sum = live::zkdiff::run(o, std::cout);
    } catch (const live::Error& e) {
      std::cerr << "locksim diff-zookeeper: " << e.what() << "\n";
      return 2;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "diff-zookeeper: " << sum.sequences << " sequences compared (seed " << o.seed << "), " << sum.ops
              << " requests, " << sum.mismatches << " mismatches; " << sum.rerun << " runs repeated and "
              << sum.skipped << " sequences left out because their timing stayed ambiguous; " << std::fixed
              << std::setprecision(1) << secs << " s\n";
    return sum.mismatches ? 1 : 0;
  };
}

}  // namespace locksim
