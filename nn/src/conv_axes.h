#pragma once
// Internal: a convolution option's per-axis sizes as one array over 1, 2 or 3 axes, and the texts
// PyTorch prints for them, shared by the convolution, transposed-convolution and pooling layers
// (modules_conv.cpp, modules_conv_transpose.cpp, modules_pooling.cpp), so that each rule is written
// once for every D.
#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "wick/nn/modules/conv_options.h"

namespace wick::nn::detail {

/// {d, h, w}, {h, w, unused} or {l, unused, unused}: an option over `dims` axes, the first `dims`
/// entries read.
using Axes = std::array<int64_t, 3>;

/// One option (conv_size_t<D>) as Axes; `fill` stands for the second axis a 1-d option lacks.
inline Axes axes(int64_t v, int64_t fill = 0) { return {v, fill, 0}; }
inline Axes axes(Int2 v, int64_t /*fill*/ = 0) { return {v.h, v.w, 0}; }
inline Axes axes(Int3 v, int64_t /*fill*/ = 0) { return {v.d, v.h, v.w}; }

/// Whether pred holds on each of the first `dims` values.
inline bool every(const Axes& v, int dims, bool (*pred)(int64_t)) {
  for (int i = 0; i < dims; ++i)
    if (!pred(v[i])) return false;
  return true;
}

/// PyTorch's tuple: "(3,)" for one axis, "(3, 2)" for two, "(3, 2, 2)" for three.
inline std::string py_tuple(const Axes& v, int dims) {
  return dims == 1 ? fmt::format("({},)", v[0]) : fmt::format("({})", fmt::join(v.begin(), v.begin() + dims, ", "));
}

/// The values in parentheses, with no 1-tuple comma: "(3)", "(3, 2)", "(3, 2, 2)".
inline std::string paren_list(const Axes& v, int dims) {
  return fmt::format("({})", fmt::join(v.begin(), v.begin() + dims, ", "));
}

/// A Python list of the first `dims` values: "[11, 11]".
inline std::string py_list(const Axes& v, int dims) {
  return fmt::format("[{}]", fmt::join(v.begin(), v.begin() + dims, ", "));
}

/// The first D values as the option type conv_size_t<D>: the inverse of axes().
template <size_t D>
conv_size_t<D> sizes_of(const Axes& v) {
  if constexpr (D == 1)
    return v[0];
  else if constexpr (D == 2)
    return Int2(v[0], v[1]);
  else
    return Int3(v[0], v[1], v[2]);
}

/// A convolution weight's shape: {first, second, kernel's first `dims` sizes...}.
inline std::vector<int64_t> weight_shape(int64_t first, int64_t second, const Axes& kernel, int dims) {
  std::vector<int64_t> shape{first, second};
  shape.insert(shape.end(), kernel.begin(), kernel.begin() + dims);
  return shape;
}

}  // namespace wick::nn::detail
