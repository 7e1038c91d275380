#pragma once
// DimVector: sizes and strides, stored inline up to 8 dims (no heap allocation for the common
// case, which keeps op overhead low), and IntArrayRef, a non-owning view of a list of int64.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <vector>

namespace wick {

class IntArrayRef {
 public:
  constexpr IntArrayRef() = default;
  constexpr IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  // Like c10::ArrayRef: valid for the full-expression that created the list (function arguments).
#if defined(__GNUC__) && !defined(__clang__)  // GCC's warning; clang has none of that name
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  IntArrayRef(std::initializer_list<int64_t> l) : data_(l.begin()), size_(l.size()) {}  // NOLINT
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  IntArrayRef(const int64_t& single) : data_(&single), size_(1) {}                  // NOLINT

  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t back() const { return data_[size_ - 1]; }
  std::vector<int64_t> vec() const { return {begin(), end()}; }
  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class DimVector {
 public:
  static constexpr size_t kInline = 8;
  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { resize(n, value); }
  DimVector(IntArrayRef r) { assign(r.begin(), r.size()); }  // NOLINT
  DimVector(std::initializer_list<int64_t> l) { assign(l.begin(), l.size()); }
  DimVector(const std::vector<int64_t>& v) { assign(v.data(), v.size()); }  // NOLINT
  DimVector(const DimVector& o) { assign(o.data(), o.size()); }
  DimVector(DimVector&& o) noexcept { *this = std::move(o); }
  DimVector& operator=(const DimVector& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  DimVector& operator=(DimVector&& o) noexcept {
    if (this == &o) return *this;
    if (o.heap_) {
      heap_ = std::move(o.heap_);
      cap_ = o.cap_;
      size_ = o.size_;
      o.cap_ = kInline;
      o.size_ = 0;
    } else {
      assign(o.data(), o.size());
    }
    return *this;
  }

  int64_t* data() { return heap_ ? heap_.get() : inline_; }
  const int64_t* data() const { return heap_ ? heap_.get() : inline_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& operator[](size_t i) { return data()[i]; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t* begin() { return data(); }
  int64_t* end() { return data() + size_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t& back() { return data()[size_ - 1]; }
  int64_t back() const { return data()[size_ - 1]; }
  operator IntArrayRef() const { return {data(), size_}; }  // NOLINT
  std::vector<int64_t> vec() const { return {begin(), end()}; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    auto p = std::make_unique<int64_t[]>(n);
    std::copy(begin(), end(), p.get());
    heap_ = std::move(p);
    cap_ = n;
  }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void push_back(int64_t v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data()[size_++] = v;
  }
  void insert(size_t pos, int64_t v) {
    push_back(0);
    for (size_t i = size_ - 1; i > pos; --i) data()[i] = data()[i - 1];
    data()[pos] = v;
  }
  void erase(size_t pos) {
    for (size_t i = pos; i + 1 < size_; ++i) data()[i] = data()[i + 1];
    --size_;
  }
  void clear() { size_ = 0; }
  friend bool operator==(const DimVector& a, const DimVector& b) { return IntArrayRef(a) == IntArrayRef(b); }

 private:
  void assign(const int64_t* p, size_t n) {
    reserve(n);
    // A plain loop, not memmove: n is almost always tiny, and this sits on every op's hot path
    // (a libc call per copy cost more than the copy). Overlap is impossible: p is another
    // vector's storage or the caller's array.
    int64_t* d = data();
    for (size_t i = 0; i < n; ++i) d[i] = p[i];
    size_ = n;
  }
  // Deliberately not zero-initialised: only [0, size_) is ever read, and zeroing 64 bytes for
  // every sizes/strides vector (several per op) showed up in the per-op overhead profile.
  int64_t inline_[kInline];
  std::unique_ptr<int64_t[]> heap_;
  size_t size_ = 0;
  size_t cap_ = kInline;
};

}  // namespace wick
