// `locksim matrix [DIR]`: each library × each attack, simulated and live.
// DIR (default scenarios/matrix) holds one folder per library id, one
// scenario per attack in it (<library>/<attack>.toml). Each cell is the
// scenario run by the simulator once and live --reps times (the real library
// as an external client, live/external/), the verdicts compared. One table on
// stdout, as Markdown to --md and as JSON to --json.
#pragma once

#include <functional>
#include <optional>

namespace CLI {
class App;
}

namespace locksim {

// Adds `matrix` to `app`. The returned function, after parsing, runs it if
// it was chosen: its exit status (0: every cell run live agrees with the
// simulator, 1: one does not, 2: bad input), else nullopt.
std::function<std::optional<int>()> add_matrix_command(CLI::App& app);

}  // namespace locksim
