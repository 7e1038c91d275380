#pragma once
// The per-element math of the fused optimizer steps (SGD, Adam, AdamW), written once for the CPU
// loops (core/src/cpu/cpu_optim.cpp) and CUDA kernels alike (Note [Math written once], docs/cuda.md; Note
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
  static constexpr bool kUsesBuffer = kMomentum;  // buf is read and written (else it may be null)
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
  static constexpr bool kUsesMax = kAmsgrad;  // vmax is read and written (else it may be null)
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

// ---- Host side: one update's settings as the stubs receive them (wick::stubs::sgd_step and
// adam_step), and the functor they select. Each backend's loop or launch calls with_sgd_step /
// with_adam_step and gets the functor whose template flags match the settings, so the scalars
// and the flag logic are written here once.

/// The settings of one SGD update of one tensor (PyTorch's SGD arguments; first: the momentum
/// buffer is uninitialised and takes d as it is).
struct SgdStepArgs {
  double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false, first = false;
};

/// The settings of one Adam/AdamW update of one tensor at step t: step_size = lr / (1 - beta1^t),
/// bias_correction2_sqrt = sqrt(1 - beta2^t), decay = 1 - lr * weight_decay (AdamW only).
struct AdamStepArgs {
  double beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0, decay = 1, step_size = 0, bias_correction2_sqrt = 1;
  bool decoupled = false, maximize = false;
};

/// Calls f.template operator()<B0, B1, ...>() with the runtime flags as template arguments.
template <bool... Bs, typename F>
void dispatch_flags(F& f) {
  f.template operator()<Bs...>();
}
template <bool... Bs, typename F, typename... Rest>
void dispatch_flags(F& f, bool b, Rest... rest) {
  if (b)
    dispatch_flags<Bs..., true>(f, rest...);
  else
    dispatch_flags<Bs..., false>(f, rest...);
}

/// Calls loop(step) with the SgdStep<T, ...> that `a` selects (the buffer is used only with
/// momentum != 0; nesterov and first only count with momentum).
template <typename T, typename Loop>
void with_sgd_step(const SgdStepArgs& a, Loop&& loop) {
  const SgdScalars<T> s{static_cast<T>(a.weight_decay), static_cast<T>(a.momentum), static_cast<T>(1 - a.dampening),
                        static_cast<T>(-a.lr)};
  const bool momentum = a.momentum != 0;
  auto run = [&]<bool kWd, bool kMom, bool kNest, bool kFirst, bool kMax>() {
    loop(SgdStep<T, kWd, kMom, kNest, kFirst, kMax>{s});
  };
  dispatch_flags(run, a.weight_decay != 0, momentum, a.nesterov && momentum, a.first && momentum, a.maximize);
}

/// Calls loop(step) with the AdamStep<T, ...> that `a` selects; amsgrad: a max_exp_avg_sq
/// tensor takes part.
template <typename T, typename Loop>
void with_adam_step(const AdamStepArgs& a, bool amsgrad, Loop&& loop) {
  const AdamScalars<T> s{static_cast<T>(a.weight_decay),
                         static_cast<T>(a.decay),
                         static_cast<T>(a.beta1),
                         static_cast<T>(a.beta2),
                         static_cast<T>(1 - a.beta1),
                         static_cast<T>(1 - a.beta2),
                         static_cast<T>(a.bias_correction2_sqrt),
                         static_cast<T>(a.eps),
                         static_cast<T>(-a.step_size)};
  const bool wd = a.weight_decay != 0;
  auto run = [&]<bool kCoupled, bool kDecoupled, bool kAms, bool kMax>() {
    loop(AdamStep<T, kCoupled, kDecoupled, kAms, kMax>{s});
  };
  dispatch_flags(run, wd && !a.decoupled, wd && a.decoupled, amsgrad, a.maximize);
}

}  // namespace wick::math
