#pragma once
// The CPU loops of the fused optimizer steps: one pass over contiguous arrays per tensor, the
// math from wick/core/optim_functors.h, its flags turned into template arguments so that the
// loop body has no branches (Note [Fused optimizer steps], docs/training.md).
#include <cstdint>

#include "wick/core/optim_functors.h"

namespace wick::optim::detail {

/// Calls f.template operator()<B0, B1, ...>() with the runtime flags as template arguments.
template <bool... Bs, typename F>
void dispatch_flags(F& f) {
  f.template operator()<Bs...>();
}
template <bool... Bs, typename F, typename... Rest>
void dispatch_flags(F& f, bool b, Rest... rest) {
  if (b) dispatch_flags<Bs..., true>(f, rest...);
  else dispatch_flags<Bs..., false>(f, rest...);
}

/// p, g, buf: n contiguous elements each (buf null without momentum).
template <typename T>
void sgd_loop(T* p, const T* g, T* buf, int64_t n, const math::SgdScalars<T>& s, bool weight_decay, bool momentum,
              bool nesterov, bool first, bool maximize) {
  auto run = [&]<bool kWd, bool kMom, bool kNest, bool kFirst, bool kMax>() {
    const math::SgdStep<T, kWd, kMom, kNest, kFirst, kMax> step{s};
    T* __restrict pp = p;
    const T* __restrict gg = g;
    T* __restrict bb = buf;
    for (int64_t i = 0; i < n; ++i) step(pp[i], gg[i], kMom ? bb + i : nullptr);
  };
  dispatch_flags(run, weight_decay, momentum, nesterov && momentum, first && momentum, maximize);
}

/// p, g, m, v (and vmax with amsgrad): n contiguous elements each.
template <typename T>
void adam_loop(T* p, const T* g, T* m, T* v, T* vmax, int64_t n, const math::AdamScalars<T>& s, bool coupled_wd,
               bool decoupled_wd, bool maximize) {
  auto run = [&]<bool kCoupled, bool kDecoupled, bool kAms, bool kMax>() {
    const math::AdamStep<T, kCoupled, kDecoupled, kAms, kMax> step{s};
    T* __restrict pp = p;
    const T* __restrict gg = g;
    T* __restrict mm = m;
    T* __restrict vv = v;
    T* __restrict xx = vmax;
    for (int64_t i = 0; i < n; ++i) step(pp[i], gg[i], mm[i], vv[i], kAms ? xx + i : nullptr);
  };
  dispatch_flags(run, coupled_wd, decoupled_wd, vmax != nullptr, maximize);
}

}  // namespace wick::optim::detail
