#pragma once
// Window geometry for the gather-style backward kernels (col2im, max_pool2d_backward): which
// outputs' windows hold a given input position (private; CUDA code only).
#include <cstdint>

#include "wick/core/backend.h"

namespace wick::cuda::detail {

/// Calls f(ki, kj, oh, ow) for every kernel tap (ki, kj) and output (oh, ow) whose window puts
/// that tap on input position (h, w), in (ki, kj) order.
template <typename F>
__device__ void for_each_covering_window(const Im2ColArgs& g, int64_t h, int64_t w, F&& f) {
  for (int64_t ki = 0; ki < g.kernel_h; ++ki) {
    const int64_t hh = h + g.pad_h - ki * g.dilation_h;
    if (hh < 0 || hh % g.stride_h != 0) continue;
    const int64_t oh = hh / g.stride_h;
    if (oh >= g.out_h) continue;
    for (int64_t kj = 0; kj < g.kernel_w; ++kj) {
      const int64_t ww = w + g.pad_w - kj * g.dilation_w;
      if (ww < 0 || ww % g.stride_w != 0) continue;
      const int64_t ow = ww / g.stride_w;
      if (ow >= g.out_w) continue;
      f(ki, kj, oh, ow);
    }
  }
}

}  // namespace wick::cuda::detail
