#pragma once
// The CPU loops of the fused optimizer steps: one pass over contiguous arrays per tensor, the
// math from wick/core/optim_functors.h, its flags turned into template arguments so that the
// loop body has no branches (Note [Fused optimizer steps], docs/training.md).
#include <cstdint>

#include "wick/core/cpu_multiversion.h"
#include "wick/core/optim_functors.h"

namespace wick::optim::detail {

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

/// One pass of SgdStep over n contiguous elements (SSE2 and AVX2 builds, Note [CPU multiversioning]).
template <typename T, bool kWd, bool kMom, bool kNest, bool kFirst, bool kMax>
WICK_CPU_MULTIVERSION void sgd_pass(T* __restrict p, const T* __restrict g, T* __restrict buf, int64_t n,
                                    math::SgdScalars<T> s) {
  const math::SgdStep<T, kWd, kMom, kNest, kFirst, kMax> step{s};
  for (int64_t i = 0; i < n; ++i) step(p[i], g[i], kMom ? buf + i : nullptr);
}

/// p, g, buf: n contiguous elements each (buf null without momentum).
template <typename T>
void sgd_loop(T* p, const T* g, T* buf, int64_t n, const math::SgdScalars<T>& s, bool weight_decay, bool momentum,
              bool nesterov, bool first, bool maximize) {
  auto run = [&]<bool kWd, bool kMom, bool kNest, bool kFirst, bool kMax>() {
    sgd_pass<T, kWd, kMom, kNest, kFirst, kMax>(p, g, buf, n, s);
  };
  dispatch_flags(run, weight_decay, momentum, nesterov && momentum, first && momentum, maximize);
}

/// One pass of AdamStep over n contiguous elements (SSE2 and AVX2 builds).
template <typename T, bool kCoupled, bool kDecoupled, bool kAms, bool kMax>
WICK_CPU_MULTIVERSION void adam_pass(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v,
                                     T* __restrict vmax, int64_t n, math::AdamScalars<T> s) {
  const math::AdamStep<T, kCoupled, kDecoupled, kAms, kMax> step{s};
  for (int64_t i = 0; i < n; ++i) step(p[i], g[i], m[i], v[i], kAms ? vmax + i : nullptr);
}

/// p, g, m, v (and vmax with amsgrad): n contiguous elements each.
template <typename T>
void adam_loop(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, const math::AdamScalars<T>& s, bool coupled_wd,
               bool decoupled_wd, bool maximize) {
  auto run = [&]<bool kCoupled, bool kDecoupled, bool kAms, bool kMax>() {
    adam_pass<T, kCoupled, kDecoupled, kAms, kMax>(p, g, m, v, vmax, n, s);
  };
  dispatch_flags(run, coupled_wd, decoupled_wd, vmax != nullptr, maximize);
}

}  // namespace wick::optim::detail
