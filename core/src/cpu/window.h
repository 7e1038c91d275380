#pragma once
// Window geometry shared by the CPU im2col/col2im and max-pooling kernels.
#include <cstdint>

namespace wick::cpu {

/// The outputs [lo, hi) of one axis (out of `out`) whose input position o * stride + offset
/// lies inside [0, size): the part of a row of windows that reads the input, not the padding.
inline void valid_outputs(int64_t size, int64_t out, int64_t stride, int64_t offset, int64_t& lo, int64_t& hi) {
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  hi = size - 1 - offset < 0 ? 0 : (size - 1 - offset) / stride + 1;
  if (hi > out) hi = out;
  if (lo > hi) lo = hi;
}

}  // namespace wick::cpu
