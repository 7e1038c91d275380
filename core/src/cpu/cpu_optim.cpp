// CPU backend: the fused optimizer steps (Note [Fused optimizer steps]). One pass over each
// tensor with the shared per-element functor (wick/core/optim_functors.h), in SSE2 and AVX2 builds
// (Note [CPU multiversioning]), split across the intra-op threads (Note [Intra-op threads]).
// Every element is updated on its own, so the bits do not depend on the split.
#include "cpu/parallel_for.h"
#include "wick/core/cpu_multiversion.h"
#include "wick/core/dtype.h"
#include "wick/core/optim_functors.h"
#include "wick/core/stubs.h"

namespace wick::cpu {

namespace {

template <typename T, typename Step>
WICK_CPU_MULTIVERSION void sgd_pass(Step step, T* __restrict p, const T* __restrict g, T* __restrict buf, int64_t n) {
  for (int64_t i = 0; i < n; ++i) step(p[i], g[i], Step::kUsesBuffer ? buf + i : nullptr);
}

template <typename T, typename Step>
WICK_CPU_MULTIVERSION void adam_pass(Step step, T* __restrict p, const T* __restrict g, T* __restrict m,
                                     T* __restrict v, T* __restrict vmax, int64_t n) {
  for (int64_t i = 0; i < n; ++i) step(p[i], g[i], m[i], v[i], Step::kUsesMax ? vmax + i : nullptr);
}

void sgd_step(DType dtype, int64_t n, void* p, const void* g, void* buf, const math::SgdStepArgs& args) {
  dispatch_floating(dtype, "SGD.step", [&]<typename T>() {
    T* pp = static_cast<T*>(p);
    const T* gp = static_cast<const T*>(g);
    T* bp = static_cast<T*>(buf);
    math::with_sgd_step<T>(args, [&](auto step) {
      parallel_for(n, kElementwiseGrain,
                   [&](int64_t b, int64_t e) { sgd_pass<T>(step, pp + b, gp + b, bp ? bp + b : nullptr, e - b); });
    });
  });
}

void adam_step(DType dtype, int64_t n, void* p, const void* g, void* m, void* v, void* vmax,
               const math::AdamStepArgs& args) {
  dispatch_floating(dtype, "Adam.step", [&]<typename T>() {
    T* pp = static_cast<T*>(p);
    const T* gp = static_cast<const T*>(g);
    T* mp = static_cast<T*>(m);
    T* vp = static_cast<T*>(v);
    T* xp = static_cast<T*>(vmax);
    math::with_adam_step<T>(args, xp != nullptr, [&](auto step) {
      parallel_for(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
        adam_pass<T>(step, pp + b, gp + b, mp + b, vp + b, xp ? xp + b : nullptr, e - b);
      });
    });
  });
}

}  // namespace

void register_cpu_optim_stubs() {
  stubs::sgd_step.set(DeviceType::CPU, &sgd_step);
  stubs::adam_step.set(DeviceType::CPU, &adam_step);
}

}  // namespace wick::cpu
