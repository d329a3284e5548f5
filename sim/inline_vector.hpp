// A vector whose first N elements live inside the object that holds it, and
// which moves them to the heap only past N. For a process's calls in flight
// and timers set: a handful each, read at every event of the process; kept in
// the process they share its cache lines instead of being a second miss
// behind it (bench/README.md, "Calls and timers inside the process").
//
// For trivially copyable elements only (growing and erasing copy bytes). Its
// storage may point into itself, so it is neither copied nor moved: it lives
// in an object that stays where it was made (a Process, held by pointer).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>

namespace locksim {

template <typename T, std::uint32_t N>
class InlineVector {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                "elements are copied as bytes and never destroyed");
  static_assert(N > 0);
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "the heap part comes from plain operator new");

 public:
  InlineVector() = default;
  InlineVector(const InlineVector&) = delete;
  InlineVector& operator=(const InlineVector&) = delete;
  ~InlineVector() {
    if (data_ != inline_data()) ::operator delete(data_);
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }

  // A new element, value-initialized (its default member initializers hold).
  T& emplace_back() {
    if (size_ == capacity_) grow();
    return *::new (static_cast<void*>(data_ + size_++)) T();
  }
  // REQUIRES: `x` is not one of our elements (growing would move it).
  void push_back(const T& x) {
    if (size_ == capacity_) grow();
    data_[size_++] = x;
  }
  void pop_back() { --size_; }
  // Keeps the heap storage, if any, for the elements to come.
  void clear() { size_ = 0; }
  // Removes the elements `pred` holds for, keeping the others' order.
  template <typename Pred>
  void erase_if(Pred pred) {
    T* kept = std::remove_if(begin(), end(), pred);
    size_ = static_cast<std::uint32_t>(kept - data_);
  }

 private:
  T* inline_data() { return std::launder(reinterpret_cast<T*>(inline_)); }
  void grow() {
    const std::uint32_t capacity = 2 * capacity_;
    T* bigger = static_cast<T*>(::operator new(sizeof(T) * capacity));
    std::memcpy(static_cast<void*>(bigger), static_cast<const void*>(data_), sizeof(T) * size_);
    if (data_ != inline_data()) ::operator delete(data_);
    data_ = bigger;
    capacity_ = capacity;
  }

  T* data_ = inline_data();
  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = N;
  alignas(T) std::byte inline_[N * sizeof(T)];
};

}  // namespace locksim
