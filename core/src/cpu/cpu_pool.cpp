// CPU 2-d max pooling with indices (Backend::max_pool2d): values and positions in one pass, with
// PyTorch's selection rule (first maximum in window order; a NaN always wins); and its backward.
//
// The loops run tap by tap over a whole output row (for each window tap (ki, kj), update every
// output column whose window holds that tap), not window by window, and select through masks,
// not branches: a branch on random data mispredicts half the time (a branchy window-at-a-time
// loop was 3x slower), and across a row the updates are independent and pipeline. The result is
// the same because each output still sees its taps in window order.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "cpu/cpu_backend.h"
#include "cpu/parallel_for.h"
#include "cpu/window.h"
#include "wick/core/error.h"

namespace wick::cpu {

namespace {
// The first tap of output o's window that lies in [0, size) (the caller guarantees one exists).
int64_t first_valid_tap(int64_t o, int64_t stride, int64_t pad, int64_t dilation) {
  const int64_t start = o * stride - pad;
  return start >= 0 ? 0 : (-start + dilation - 1) / dilation;
}

template <typename T>
void max_pool_planes(const Im2ColArgs& g, const T* image, T* out, int64_t* indices) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const int64_t H = g.height, W = g.width, OH = g.out_h, OW = g.out_w;
  const int64_t KH = g.kernel_h, KW = g.kernel_w, SH = g.stride_h, SW = g.stride_w;
  const int64_t PH = g.pad_h, PW = g.pad_w, DH = g.dilation_h, DW = g.dilation_w;
  // Per column tap kj: the output columns it is valid for. Per output column: its first valid tap.
  std::vector<int64_t> col_lo(static_cast<size_t>(KW)), col_hi(static_cast<size_t>(KW)),
      first_w(static_cast<size_t>(OW));
  for (int64_t kj = 0; kj < KW; ++kj)
    valid_outputs(W, OW, SW, kj * DW - PW, col_lo[static_cast<size_t>(kj)], col_hi[static_cast<size_t>(kj)]);
  for (int64_t ow = 0; ow < OW; ++ow)
    first_w[static_cast<size_t>(ow)] = ow * SW - PW + first_valid_tap(ow, SW, PW, DW) * DW;

  // Planes are independent: split them across the intra-op threads (Note [Intra-op threads]).
  parallel_for(g.channels, items_per_piece(OH * OW * KH * KW), [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      const T* plane = image + c * H * W;
      for (int64_t oh = 0; oh < OH; ++oh) {
        T* __restrict best = out + (c * OH + oh) * OW;
        int64_t* __restrict at = indices + (c * OH + oh) * OW;
        const int64_t h0 = oh * SH - PH;
        const int64_t ki_lo = first_valid_tap(oh, SH, PH, DH);
        int64_t ki_hi = h0 >= H ? 0 : (H - 1 - h0) / DH + 1;
        if (ki_hi > KH) ki_hi = KH;
        // Seed every output with its first valid tap.
        const int64_t seed_row = (h0 + ki_lo * DH) * W;
        for (int64_t ow = 0; ow < OW; ++ow) {
          const int64_t p = seed_row + first_w[static_cast<size_t>(ow)];
          best[ow] = plane[p];
          at[ow] = p;
        }
        for (int64_t ki = ki_lo; ki < ki_hi; ++ki) {
          const int64_t row = (h0 + ki * DH) * W;
          for (int64_t kj = 0; kj < KW; ++kj) {
            const int64_t base = row + kj * DW - PW;  // output column 0's tap (may lie left of the row)
            for (int64_t ow = col_lo[static_cast<size_t>(kj)], e = col_hi[static_cast<size_t>(kj)]; ow < e; ++ow) {
              // Branch-free select through masks: on random data `take` is unpredictable, and a
              // branch there costs more than the whole update.
              const T v = plane[base + ow * SW], b = best[ow];
              const Bits take = -static_cast<Bits>(math::pool_take(b, v));  // Note [Reduction rules]
              best[ow] = std::bit_cast<T>((std::bit_cast<Bits>(v) & take) | (std::bit_cast<Bits>(b) & ~take));
              const int64_t m = -static_cast<int64_t>(take & 1);
              at[ow] = ((base + ow * SW) & m) | (at[ow] & ~m);
            }
          }
        }
      }
    }
  });
}
}  // namespace

void CpuBackend::max_pool2d(const Im2ColArgs& g, const void* image, void* out, int64_t* indices) {
  dispatch_floating(g.dtype, "max_pool2d", [&]<typename T>() {
    max_pool_planes<T>(g, static_cast<const T*>(image), static_cast<T*>(out), indices);
  });
}

void CpuBackend::max_pool2d_backward(const Im2ColArgs& g, const void* grad_out, const int64_t* indices,
                                     void* grad_image) {
  dispatch_floating(g.dtype, "max_pool2d_backward", [&]<typename T>() {
    const T* go = static_cast<const T*>(grad_out);
    T* gi = static_cast<T*>(grad_image);
    const int64_t plane_in = g.height * g.width, plane_out = g.out_h * g.out_w;
    // Plane by plane, so each plane is zeroed and scattered into while it is in cache; planes
    // are independent, so they split across the intra-op threads.
    parallel_for(g.channels, items_per_piece(plane_in + plane_out), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        T* dst = gi + c * plane_in;
        const T* src = go + c * plane_out;
        const int64_t* at = indices + c * plane_out;
        std::fill(dst, dst + plane_in, T(0));
        for (int64_t i = 0; i < plane_out; ++i) dst[at[i]] += src[i];
      }
    });
  });
}

}  // namespace wick::cpu
