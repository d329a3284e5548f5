#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ostream>

namespace locksim {

namespace {

constexpr auto kRedraw = std::chrono::milliseconds(250);

std::string thousands(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// Wall time, to the second: "42s", "5m12s", "2h03m".
std::string wall(double seconds) {
  const auto s = static_cast<std::uint64_t>(std::max(0.0, seconds) + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

}  // namespace

RunProgress::RunProgress(std::ostream& out, Duration total, std::string label, std::chrono::milliseconds delay)
    : out_(out), total_(total), label_(std::move(label)), started_(std::chrono::steady_clock::now()),
      next_draw_(started_ + delay) {}

std::string RunProgress::line(const std::string& label, Duration done, Duration total, std::uint64_t events,
                              std::chrono::duration<double> elapsed) {
  const double share = total > Duration::zero()
                           ? std::clamp(static_cast<double>(done.count_ns()) / static_cast<double>(total.count_ns()), 0.0, 1.0)
                           : 0.0;
  const std::string eta = share > 0 ? wall(elapsed.count() * (1 - share) / share) : "?";
  return fmt::format("  {}simulated {} of {} ({:.1f}%), {} events, ETA {}", label.empty() ? "" : label + ": ",
                     format_duration(done), format_duration(total), 100 * share, thousands(events), eta);
}

void RunProgress::tick(Instant at) {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_draw_) return;
  next_draw_ = now + kRedraw;
  // Durations print to the millisecond; a progress line needs no more than that.
  const Duration done = Duration::ms(at.since_zero().count_ns() / 1'000'000);
  const std::string text = line(label_, done, total_, events_, now - started_);
  // Pad over a longer previous line; the line stays on one row of a narrow terminal.
  out_ << '\r' << text << std::string(drawn_width_ > text.size() ? drawn_width_ - text.size() : 0, ' ') << std::flush;
  drawn_width_ = text.size();
}

void RunProgress::finish() {
  if (drawn_width_ == 0) return;
  out_ << '\r' << std::string(drawn_width_, ' ') << '\r' << std::flush;
  drawn_width_ = 0;
}

bool progress_wanted() { return isatty(STDERR_FILENO); }

std::chrono::milliseconds progress_delay() {
  const char* ms = std::getenv("LOCKSIM_PROGRESS_DELAY_MS");
  return std::chrono::milliseconds(ms != nullptr ? std::strtoll(ms, nullptr, 10) : 1000);
}

}  // namespace locksim
