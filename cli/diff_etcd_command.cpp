#include "cli/diff_etcd_command.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>

#include "live/common.hpp"
#include "live/etcd/diff.hpp"

namespace locksim {

std::function<std::optional<int>()> add_diff_etcd_command(CLI::App& app) {
  struct Args {
    std::uint64_t sequences = 100;
    std::uint64_t seed = 1;
  };
  auto a = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand("diff-etcd", "check the simulator's etcd model against a real etcd, reply by reply");
  cmd->add_option("--sequences", a->sequences, "how many random sequences (default 100; each takes a few seconds of real time)")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{100'000'000}));
  cmd->add_option("--seed", a->seed, "the seed the sequences are drawn from (default 1)");
  return [cmd, a]() -> std::optional<int> {
    if (!*cmd) return std::nullopt;
    live::etcd::diff::RunOptions o;
    o.sequences = a->sequences;
    o.seed = a->seed;
    const auto start = std::chrono::steady_clock::now();
    live::etcd::diff::Summary sum;
    try {
      sum = live::etcd::diff::run(o, std::cout);
    } catch (const live::Error& e) {
      std::cerr << "locksim diff-etcd: " << e.what() << "\n";
      return 2;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "diff-etcd: " << sum.sequences << " sequences (seed " << o.seed << "), " << sum.steps
              << " steps compared, " << sum.mismatches << " mismatches, " << sum.reruns << " runs voided by a late step and run again, "
              << sum.void_sequences << " sequences void, " << std::fixed << std::setprecision(1) << secs << " s\n";
    return sum.mismatches ? 1 : sum.void_sequences ? 2 : 0;
  };
}

}  // namespace locksim
