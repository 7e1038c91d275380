#pragma once
// softmax and log_softmax along one contiguous row and their backwards, written once for the CPU backend and
// CUDA kernels (one row per thread or block) alike (Note [Math written once], docs/cuda.md).
// Sums accumulate in math::acc_type (double for float32), as the reduce kernels; the results
// agree with the composite amax/exp/sum/log formula (native::log_softmax's fallback and the
// tests' reference) to rounding.
#include <cmath>
#include <cstdint>

#include "wick/core/accumulate_type.h"
#include "wick/core/float32_math.h"
#include "wick/core/host_device.h"

namespace wick::math {

// The rows' exps are exp_of's: float32's vectorisable exp, so that the exp loops below
// vectorise (Note [Vectorisable float32 exp and erf]); float64 libm's.

/// out[i] = (in[i] - max) - log(sum_j exp(in[j] - max)) over n elements (n > 0). A NaN input
/// makes the row NaN, as the composite; in and out may be the same array.
template <typename T>
WICK_HOST_DEVICE void log_softmax_row(const T* in, T* out, int64_t n) {
  using Acc = acc_type<T>;
  T m = in[0];
  for (int64_t i = 1; i < n; ++i) m = (in[i] > m || in[i] != in[i]) ? in[i] : m;
  Acc s = 0;
  if (in != out) {  // the exps go through out first: that loop vectorises, the in-order sum does not
    for (int64_t i = 0; i < n; ++i) out[i] = exp_of(in[i] - m);
    for (int64_t i = 0; i < n; ++i) s += static_cast<Acc>(out[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) s += static_cast<Acc>(exp_of(in[i] - m));
  }
  const T lse = static_cast<T>(std::log(static_cast<T>(s)));
  for (int64_t i = 0; i < n; ++i) out[i] = (in[i] - m) - lse;
}

/// grad_in[i] = grad_out[i] - exp(out[i]) * sum_j grad_out[j]: log_softmax's backward from its
/// output, over n elements.
template <typename T>
WICK_HOST_DEVICE void log_softmax_backward_row(const T* grad_out, const T* out, T* grad_in, int64_t n) {
  using Acc = acc_type<T>;
  Acc s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<Acc>(grad_out[i]);
  const T st = static_cast<T>(s);
  for (int64_t i = 0; i < n; ++i) grad_in[i] = grad_out[i] - exp_of(out[i]) * st;
}

/// out[i] = exp(in[i] - max) / sum_j exp(in[j] - max) over n elements (n > 0). A NaN input
/// makes the row NaN, as the composite; in and out may be the same array.
template <typename T>
WICK_HOST_DEVICE void softmax_row(const T* in, T* out, int64_t n) {
  using Acc = acc_type<T>;
  T m = in[0];
  for (int64_t i = 1; i < n; ++i) m = (in[i] > m || in[i] != in[i]) ? in[i] : m;
  for (int64_t i = 0; i < n; ++i) out[i] = exp_of(in[i] - m);  // vectorises
  Acc s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<Acc>(out[i]);
  const T st = static_cast<T>(s);
  for (int64_t i = 0; i < n; ++i) out[i] = out[i] / st;
}

/// grad_in[i] = out[i] * (grad_out[i] - sum_j grad_out[j] * out[j]): softmax's backward from its
/// output, over n elements.
template <typename T>
WICK_HOST_DEVICE void softmax_backward_row(const T* grad_out, const T* out, T* grad_in, int64_t n) {
  using Acc = acc_type<T>;
  Acc s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<Acc>(grad_out[i] * out[i]);
  const T st = static_cast<T>(s);
  for (int64_t i = 0; i < n; ++i) grad_in[i] = out[i] * (grad_out[i] - st);
}

}  // namespace wick::math
