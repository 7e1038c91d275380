#pragma once
// Window geometry shared by the CPU im2col/col2im and max-pooling kernels.
#include <cstdint>

#include "wick/core/backend.h"

namespace wick::cpu {

/// The sizes of one channel's windows, by value. Kernels take it as a by-value argument, not
/// through a lambda's captured reference to the Im2ColArgs: read through a reference, every
/// field would be reloaded after each store into the output (the compiler cannot prove the
/// stores leave it alone), which made the max-pool and im2col loops a third slower.
struct WindowGeometry {
  int64_t H, W, OH, OW, KH, KW, SH, SW, PH, PW, DH, DW;
  explicit WindowGeometry(const Im2ColArgs& g)
      : H(g.height),
        W(g.width),
        OH(g.out_h),
        OW(g.out_w),
        KH(g.kernel_h),
        KW(g.kernel_w),
        SH(g.stride_h),
        SW(g.stride_w),
        PH(g.pad_h),
        PW(g.pad_w),
        DH(g.dilation_h),
        DW(g.dilation_w) {}
};

/// The outputs [lo, hi) of one axis (out of `out`) whose input position o * stride + offset
/// lies inside [0, size): the part of a row of windows that reads the input, not the padding.
inline void valid_outputs(int64_t size, int64_t out, int64_t stride, int64_t offset, int64_t& lo, int64_t& hi) {
  lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  hi = size - 1 - offset < 0 ? 0 : (size - 1 - offset) / stride + 1;
  if (hi > out) hi = out;
  if (lo > hi) lo = hi;
}

}  // namespace wick::cpu
