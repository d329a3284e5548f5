// Delta debugging (Zeller's ddmin, complements only): a shortest sequence,
// by removing elements, for which `fails` still holds. REQUIRES: fails(seq).
// What the differential tests (diff-redis, diff-zookeeper, diff-etcd) shrink a mismatch with.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace locksim::live {

template <typename T>
std::vector<T> ddmin(std::vector<T> seq, const std::function<bool(const std::vector<T>&)>& fails) {
  std::size_t parts = 2;
  while (seq.size() >= 2) {
    const std::size_t chunk = (seq.size() + parts - 1) / parts;
    bool reduced = false;
    for (std::size_t start = 0; start < seq.size(); start += chunk) {
      std::vector<T> without(seq.begin(), seq.begin() + static_cast<std::ptrdiff_t>(start));
      const std::size_t end = std::min(seq.size(), start + chunk);
      without.insert(without.end(), seq.begin() + static_cast<std::ptrdiff_t>(end), seq.end());
      if (!without.empty() && fails(without)) {
        seq = std::move(without);
        parts = std::max<std::size_t>(parts - 1, 2);
        reduced = true;
        break;
      }
    }
    if (reduced) continue;
    if (chunk == 1) break;
    parts = std::min(seq.size(), parts * 2);
  }
  return seq;
}

}  // namespace locksim::live
