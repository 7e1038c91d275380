#pragma once
// Small tensors for hand-computed cases, and their values back as host vectors.
#include <wick/wick.h>

#include <concepts>
#include <cstdint>
#include <vector>

namespace wick::test {

/// A float64 tensor of `shape` holding `v` (row-major), on `dev`.
inline Tensor f64(const std::vector<double>& v, IntArrayRef shape, Device dev = kCPU) {
  return tensor(v, shape, kFloat64).to(dev);
}
/// A 1-d float64 tensor holding `v`.
inline Tensor f64(const std::vector<double>& v) { return tensor(v, {static_cast<int64_t>(v.size())}, kFloat64); }
/// The same on `dev`. A template so that a braced shape (`f64(v, {})`, `{0}`) never converts to a
/// Device: only a Device argument selects it.
template <std::same_as<Device> D>
Tensor f64(const std::vector<double>& v, D dev) {
  return f64(v).to(dev);
}
/// An int64 tensor of `shape` holding `v` (row-major), on `dev`.
inline Tensor i64(const std::vector<int64_t>& v, IntArrayRef shape, Device dev = kCPU) {
  return tensor(v, shape, kInt64).to(dev);
}
/// A 1-d int64 tensor holding `v`.
inline Tensor i64(const std::vector<int64_t>& v) { return tensor(v, {static_cast<int64_t>(v.size())}, kInt64); }
/// The same on `dev` (a template for the reason of f64's).
template <std::same_as<Device> D>
Tensor i64(const std::vector<int64_t>& v, D dev) {
  return i64(v).to(dev);
}

/// The values of `t`, converted to float64 on the host, in row-major order.
inline std::vector<double> doubles(const Tensor& t) { return t.to(kCPU, kFloat64).contiguous().to_vector<double>(); }
/// The values of `t`, converted to int64 on the host, in row-major order.
inline std::vector<int64_t> longs(const Tensor& t) { return t.to(kCPU, kInt64).contiguous().to_vector<int64_t>(); }

/// 0, 1, ..., n - 1 in `shape` (n its element count), of dtype `dt`.
inline Tensor seq(IntArrayRef shape, DType dt = kFloat64) {
  int64_t n = 1;
  for (auto s : shape) n *= s;
  return arange(0, n, 1, dt).view(shape);
}

}  // namespace wick::test
