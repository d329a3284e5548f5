#include "judge/harm.hpp"

#include <algorithm>
#include <cmath>

#include "sim/rng.hpp"

namespace locksim {

void HarmMeter::restart(const Trace& t) {
  trace_ = &t;
  writes_.clear();
  clients_.clear();
  current_ = kInitial;
}

HarmMeter::ClientState& HarmMeter::client(ProcId p) {
  if (p >= clients_.size()) clients_.resize(std::max<std::size_t>(p + 1, trace_->processes().size()));
  return clients_[p];
}

void HarmMeter::observe(const TraceEvent& e) {
  switch (e.kind) {
    case Ev::StorageRead:  // peer: the reader; it will write what it read plus one
      if (e.peer != kNoProc) client(e.peer).read = current_;
      break;
    case Ev::StorageWrite: {  // peer: the writer; accepted
      const ProcId who = e.peer;
      const std::uint32_t parent = who != kNoProc ? client(who).read : kInitial;
      writes_.push_back({parent, who});
      current_ = static_cast<std::uint32_t>(writes_.size() - 1);
      if (who != kNoProc) client(who).last_write = current_;
      break;
    }
    case Ev::Wrote: {  // the client heard its write was accepted
      if (e.process >= clients_.size()) break;
      ClientState& c = clients_[e.process];
      if (c.last_write == kInitial) break;
      writes_[c.last_write].acknowledged = true;
      c.last_write = kInitial;
      break;
    }
    default: break;
  }
}

Harm HarmMeter::finish() const {
  Harm h;
  h.accepted = writes_.size();
  std::vector<bool> held(writes_.size(), false);
  // A parent is always an earlier write: the chain ends at the initial value.
  for (std::uint32_t w = current_; w != kInitial; w = writes_[w].parent) held[w] = true;
  for (std::size_t i = 0; i < writes_.size(); ++i) {
    if (!writes_[i].acknowledged) continue;
    ++h.acknowledged;
    if (!held[i]) ++h.lost;
  }
  return h;
}

Harm measure_harm(const Trace& trace) {
  HarmMeter meter(trace);
  for (const TraceEvent& e : trace.events())
    if (HarmMeter::kReads.has(e.kind)) meter.observe(e);
  return meter.finish();
}

std::uint64_t HarmTally::run_count() const {
  std::uint64_t n = 0;
  for (const auto& [pair, k] : runs) n += k;
  return n;
}
std::uint64_t HarmTally::lost() const {
  std::uint64_t n = 0;
  for (const auto& [pair, k] : runs) n += pair.first * k;
  return n;
}
std::uint64_t HarmTally::acknowledged() const {
  std::uint64_t n = 0;
  for (const auto& [pair, k] : runs) n += pair.second * k;
  return n;
}
double HarmTally::fraction() const {
  const std::uint64_t a = acknowledged();
  return a == 0 ? 0.0 : static_cast<double>(lost()) / static_cast<double>(a);
}

namespace {

// Every draw below is made of integer draws and IEEE-754's basic operations
// (+, -, *, /, sqrt, floor), each correctly rounded: the interval has the
// same bits on every platform (x86-64 and the browser's WebAssembly alike),
// which log or exp from a C library would not promise.

// A uniform double in [0, 1): 53 random bits, exactly.
double uniform(Rng& rng) { return static_cast<double>(rng.next() >> 11) * 0x1p-53; }

// x^m by squaring.
double power(double x, std::uint64_t m) {
  double r = 1;
  for (; m; m >>= 1, x *= x)
    if (m & 1) r *= x;
  return r;
}

// Below this mean (of the count or of its complement) a binomial count is
// drawn exactly, by inversion; above it its normal approximation, whose
// error there is well under the bootstrap's own sampling noise.
constexpr double kExactBelow = 100;

// Binomial(m, p), a mean m*p under kExactBelow: inversion from 0, each
// probability from the one before, P(k+1) = P(k) (m-k)/(k+1) p/(1-p).
// P(0) = (1-p)^m is above 1e-44 there, far from underflow; the walk stops
// when the probabilities do (the cdf may round to just under 1).
std::uint64_t binomial_by_inversion(Rng& rng, std::uint64_t m, double p) {
  const double odds = p / (1 - p), u = uniform(rng);
  double pk = power(1 - p, m), cdf = pk;
  std::uint64_t k = 0;
  while (u >= cdf && k < m && pk > 0) {
    pk *= static_cast<double>(m - k) / static_cast<double>(k + 1) * odds;
    ++k;
    cdf += pk;
  }
  return k;
}

// Binomial(m, p), both means at least kExactBelow: the normal
// approximation, its deviate the sum of twelve uniforms less six
// (Irwin-Hall: mean 0, variance 1), summed as integers, so exactly.
std::uint64_t binomial_by_normal(Rng& rng, std::uint64_t m, double p) {
  std::uint64_t sum = 0;
  for (int i = 0; i < 12; ++i) sum += rng.next() >> 32;
  const double z = static_cast<double>(sum) * 0x1p-32 - 6;
  const double n = static_cast<double>(m);
  const double x = std::floor(n * p + std::sqrt(n * p * (1 - p)) * z + 0.5);
  if (x <= 0) return 0;
  if (x >= n) return m;
  return static_cast<std::uint64_t>(x);
}

// How many of m draws fall on a category that holds `part` of `whole` runs.
std::uint64_t binomial(Rng& rng, std::uint64_t m, std::uint64_t part, std::uint64_t whole) {
  if (part == 0 || m == 0) return 0;
  if (part == whole) return m;
  const double p = static_cast<double>(part) / static_cast<double>(whole);
  const double q = static_cast<double>(whole - part) / static_cast<double>(whole);
  const double n = static_cast<double>(m);
  if (n * p < kExactBelow) return binomial_by_inversion(rng, m, p);
  if (n * q < kExactBelow) return m - binomial_by_inversion(rng, m, q);
  return binomial_by_normal(rng, m, p);
}

}  // namespace

std::optional<std::pair<double, double>> HarmTally::interval95() const {
  if (acknowledged() == 0) return std::nullopt;
  const std::uint64_t n = run_count();
  // A resample draws n runs with replacement; all it keeps of them is how
  // many came from each (lost, acknowledged) pair, a multinomial count. It
  // is drawn as one binomial per pair, in the map's order, each of the
  // draws not yet placed, over the runs not yet passed: the cost is the
  // number of pairs, not of runs (drawing each of the n runs cost a million
  // draws per thousand runs: 35% of a 10,000-run explore).
  Rng rng(0x6861726d);  // "harm": fixed, so the interval is a function of the counts
  std::vector<double> ratios;
  ratios.reserve(kResamples);
  for (int b = 0; b < kResamples; ++b) {
    std::uint64_t left = n, behind = n;  // draws not yet placed; runs in the pairs not yet passed
    double lost = 0, acked = 0;
    for (const auto& [pair, k] : runs) {
      const std::uint64_t drawn = binomial(rng, left, k, behind);
      left -= drawn;
      behind -= k;
      lost += static_cast<double>(drawn) * static_cast<double>(pair.first);
      acked += static_cast<double>(drawn) * static_cast<double>(pair.second);
    }
    // A resample with nothing acknowledged lost nothing of it.
    ratios.push_back(acked == 0 ? 0.0 : lost / acked);
  }
  std::sort(ratios.begin(), ratios.end());
  // The 2.5th and 97.5th percentiles: the 25th and the 975th of 1000, from 0.
  return std::pair{ratios[kResamples * 25 / 1000], ratios[kResamples * 975 / 1000 - 1]};
}

}  // namespace locksim
