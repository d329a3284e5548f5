#include "judge/harm.hpp"

#include <algorithm>

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

std::optional<std::pair<double, double>> HarmTally::interval95() const {
  if (acknowledged() == 0) return std::nullopt;
  // The runs as one list in the map's order, by the cumulative count of each
  // pair: a draw below n picks the pair whose share of the list holds it.
  std::vector<std::uint64_t> upto;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  std::uint64_t n = 0;
  for (const auto& [pair, k] : runs) {
    n += k;
    upto.push_back(n);
    pairs.push_back(pair);
  }
  Rng rng(0x6861726d);  // "harm": fixed, so the interval is a function of the counts
  std::vector<double> ratios;
  ratios.reserve(kResamples);
  for (int b = 0; b < kResamples; ++b) {
    std::uint64_t lost = 0, acked = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t draw = rng.below(n);
      const auto at = std::upper_bound(upto.begin(), upto.end(), draw) - upto.begin();
      lost += pairs[static_cast<std::size_t>(at)].first;
      acked += pairs[static_cast<std::size_t>(at)].second;
    }
    // A resample with nothing acknowledged lost nothing of it.
    ratios.push_back(acked == 0 ? 0.0 : static_cast<double>(lost) / static_cast<double>(acked));
  }
  std::sort(ratios.begin(), ratios.end());
  // The 2.5th and 97.5th percentiles: the 25th and the 975th of 1000, from 0.
  return std::pair{ratios[kResamples * 25 / 1000], ratios[kResamples * 975 / 1000 - 1]};
}

}  // namespace locksim
