#pragma once
// layer_norm over one contiguous row and its input gradient, written once for the CPU backend and
// CUDA kernels alike (Note [Math written once], docs/cuda.md).
//
// Note [Fused layer_norm]
// F::layer_norm over trailing dims of a contiguous input is one node: the forward makes one pass
// for the row's mean and variance (Welford-free: mean first, then the centred sum of squares, in
// math::acc_type, as native::var) and one pass that writes y, saving each row's mean and
// rstd = 1 / sqrt(var + eps); the backward computes
//     d x = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)),   gw = g * w (or g), xhat = (x - mean) * rstd
// in one row pass, and d w = sum over rows of g * xhat, d b = sum over rows of g with the
// reduction kernels. The composite (mean, var, sub, add, rsqrt, mul, mul, add) recorded eight
// nodes. With create_graph the backward is the same formula on differentiable ops, so double
// backward works. Non-contiguous inputs and backends without the kernel take the composite,
// which is also the tests' reference (nn/src/functional_norm.cpp).
#include <cmath>
#include <cstdint>

#include "wick/core/accumulate_type.h"
#include "wick/core/host_device.h"

namespace wick::math {

/// y = (x - mean) * rstd * w + b over n elements (n > 0); w and b may be null (no affine).
/// Writes the row's mean and rstd = 1 / sqrt(biased var + eps) to *mean_out, *rstd_out. A NaN
/// input makes the row NaN. x and y may be the same array.
template <typename T>
WICK_HOST_DEVICE void layer_norm_row(const T* x, const T* w, const T* b, T* y, int64_t n, double eps, T* mean_out,
                                     T* rstd_out) {
  using Acc = acc_type<T>;
  Acc s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<Acc>(x[i]);
  const Acc mean = s / static_cast<Acc>(n);
  Acc ss = 0;
  for (int64_t i = 0; i < n; ++i) {
    const Acc c = static_cast<Acc>(x[i]) - mean;
    ss += c * c;
  }
  const Acc var = ss / static_cast<Acc>(n);
  const T m = static_cast<T>(mean);
  const T r = static_cast<T>(Acc(1) / std::sqrt(var + static_cast<Acc>(eps)));
  *mean_out = m;
  *rstd_out = r;
  for (int64_t i = 0; i < n; ++i) {
    T v = (x[i] - m) * r;
    if (w) v = v * w[i];
    if (b) v = v + b[i];
    y[i] = v;
  }
}

/// d x for one row (n > 0) from the upstream gradient g, the input x, the row's saved mean and
/// rstd, and w (null: no affine): rstd * (gw - mean(gw) - xhat * mean(gw * xhat)).
template <typename T>
WICK_HOST_DEVICE void layer_norm_backward_row(const T* g, const T* x, const T* w, T mean, T rstd, T* dx, int64_t n) {
  using Acc = acc_type<T>;
  Acc s_gw = 0, s_gw_xhat = 0;
  for (int64_t i = 0; i < n; ++i) {
    const T gw = w ? g[i] * w[i] : g[i];
    const T xhat = (x[i] - mean) * rstd;
    s_gw += static_cast<Acc>(gw);
    s_gw_xhat += static_cast<Acc>(gw * xhat);
  }
  const T a = static_cast<T>(s_gw / static_cast<Acc>(n));
  const T c = static_cast<T>(s_gw_xhat / static_cast<Acc>(n));
  for (int64_t i = 0; i < n; ++i) {
    const T gw = w ? g[i] * w[i] : g[i];
    const T xhat = (x[i] - mean) * rstd;
    dx[i] = rstd * (gw - a - xhat * c);
  }
}

}  // namespace wick::math
