#pragma once
// Small tensors for hand-computed cases (tests/core/ops_test.cpp and ops_values_test.cpp).
#include <wick/wick.h>

#include <initializer_list>

namespace wick::test {

/// A float64 tensor of `shape` holding `v` (row-major).
inline Tensor f64(std::initializer_list<double> v, IntArrayRef shape) { return tensor(v, shape, kFloat64); }

/// 0, 1, ..., n - 1 in `shape` (n its element count), of dtype `dt`.
inline Tensor seq(IntArrayRef shape, DType dt = kFloat64) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return arange(0, n, 1, dt).view(shape);
}

}  // namespace wick::test
