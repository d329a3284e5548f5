#pragma once
// A map kept as a vector sorted by key: for the handful of keys a lock
// scenario's Redis node holds, cheaper to search and to change than a tree
// (no node allocated per key, no pointers to chase), and iterated in key
// order as std::map is. Unlike std::map's, an insertion or an erasure moves
// the entries after it: iterators, pointers and references into the map
// last until its next change.
#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

namespace locksim {

template <typename Key, typename Value>
class FlatMap {
 public:
  using value_type = std::pair<Key, Value>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  std::size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  void clear() { items_.clear(); }

  iterator find(const Key& k) {
    if (items_.size() <= kScanUpTo) {  // a few keys: compared for equality, the length first
      for (iterator it = items_.begin(); it != items_.end(); ++it)
        if (it->first == k) return it;
      return items_.end();
    }
    const iterator it = lower_bound(k);
    return it != items_.end() && it->first == k ? it : items_.end();
  }
  const_iterator find(const Key& k) const { return const_cast<FlatMap&>(*this).find(k); }
  std::size_t count(const Key& k) const { return find(k) != end() ? 1 : 0; }
  // The value at `k`; throws std::out_of_range if there is none.
  const Value& at(const Key& k) const {
    const const_iterator it = find(k);
    if (it == end()) throw std::out_of_range("FlatMap::at: no such key");
    return it->second;
  }
  // The value at `k`, made (value-initialised) if there is none.
  Value& operator[](const Key& k) {
    if (const iterator it = find(k); it != items_.end()) return it->second;
    return items_.emplace(lower_bound(k), k, Value{})->second;
  }
  iterator erase(const_iterator it) { return items_.erase(it); }
  std::size_t erase(const Key& k) {
    const iterator it = find(k);
    if (it == items_.end()) return 0;
    items_.erase(it);
    return 1;
  }

 private:
  static constexpr std::size_t kScanUpTo = 8;
  iterator lower_bound(const Key& k) {
    return std::lower_bound(items_.begin(), items_.end(), k,
                            [](const value_type& item, const Key& key) { return item.first < key; });
  }
  std::vector<value_type> items_;
};

}  // namespace locksim
