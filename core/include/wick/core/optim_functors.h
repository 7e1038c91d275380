#pragma once
// The per-element math of the fused optimizer steps (SGD, Adam, AdamW), written once for the CPU
// loops (nn/src/optim) and CUDA kernels alike (Note [Math written once], docs/cuda.md; Note
// [Fused optimizer steps] in docs/training.md). Each functor updates one element in place, reading
// and writing each state value once; its scalars are computed once per tensor and step on the
// host. The flags are template parameters, so that the CPU loop over a tensor has no branches
// and vectorises. The formulas are PyTorch 1.13's _single_tensor_sgd and _single_tensor_adam.
#include <cmath>

#include "wick/core/host_device.h"

namespace wick::math {

/// SGD: d = g (+ wd * p); with momentum b = first ? d : momentum * b + (1 - dampening) * d,
/// d = nesterov ? d + momentum * b : b; p -= lr * d. maximize negates g.
template <typename T>
struct SgdScalars {
  T weight_decay, momentum, one_minus_dampening, neg_lr;
};
template <typename T, bool kWeightDecay, bool kMomentum, bool kNesterov, bool kFirst, bool kMaximize>
struct SgdStep {
  SgdScalars<T> s;
  WICK_HOST_DEVICE void operator()(T& p, T g, T* buf) const {
    T d = kMaximize ? -g : g;
    if constexpr (kWeightDecay) d = d + s.weight_decay * p;
    if constexpr (kMomentum) {
      T b;
      if constexpr (kFirst) {
        b = d;
      } else {
        b = *buf * s.momentum;
        b = b + s.one_minus_dampening * d;
      }
      *buf = b;
      d = kNesterov ? d + s.momentum * b : b;
    }
    p = p + s.neg_lr * d;
  }
};

/// Adam/AdamW: m = beta1 m + (1 - beta1) g, v = beta2 v + (1 - beta2) g^2 (v_max = max(v_max, v)
/// with amsgrad), p -= step_size * m / (sqrt(v) / sqrt(1 - beta2^t) + eps), where
/// step_size = lr / (1 - beta1^t). Weight decay: coupled (Adam) adds wd * p to g, decoupled
/// (AdamW) scales p by 1 - lr * wd first.
template <typename T>
struct AdamScalars {
  T weight_decay, decay, beta1, beta2, one_minus_beta1, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size;
};
template <typename T, bool kCoupledWd, bool kDecoupledWd, bool kAmsgrad, bool kMaximize>
struct AdamStep {
  AdamScalars<T> s;
  WICK_HOST_DEVICE void operator()(T& p, T g, T& m, T& v, T* vmax) const {
    T gi = kMaximize ? -g : g;
    T pi = p;
    if constexpr (kDecoupledWd) pi = pi * s.decay;
    if constexpr (kCoupledWd) gi = gi + s.weight_decay * pi;
    T mi = m * s.beta1;
    mi = mi + s.one_minus_beta1 * gi;
    T vi = v * s.beta2;
    vi = vi + s.one_minus_beta2 * (gi * gi);
    m = mi;
    v = vi;
    T denom;
    if constexpr (kAmsgrad) {
      const T mx = *vmax > vi ? *vmax : vi;
      *vmax = mx;
      denom = std::sqrt(mx) / s.bias_correction2_sqrt + s.eps;
    } else {
      denom = std::sqrt(vi) / s.bias_correction2_sqrt + s.eps;
    }
    p = pi + s.neg_step_size * (mi / denom);
  }
};

}  // namespace wick::math
