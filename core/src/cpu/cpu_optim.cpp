// CPU backend: the fused optimizer steps (Note [Fused optimizer steps]). One pass over all the
// parameters of a step with the shared per-element functor (wick/core/optim_functors.h), in SSE2,
// AVX2 and AVX-512 builds (Note [CPU multiversioning]), their elements split as one range across the
// intra-op threads (Note [Intra-op threads]). Every element is updated on its own, so the bits
// do not depend on the split.
#include <algorithm>
#include <vector>

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

// Calls f(tensor, begin, end) over the elements of every tensor as one range [0, sum of n),
// split across the intra-op threads: a piece may span the end of one tensor and the start of
// the next, so small parameters share a piece and one wake-up serves them all.
template <typename Tensor, typename F>
void for_each_range(const Tensor* ts, int64_t count, F&& f) {
  std::vector<int64_t> start(static_cast<size_t>(count) + 1, 0);
  for (int64_t i = 0; i < count; ++i) start[static_cast<size_t>(i + 1)] = start[static_cast<size_t>(i)] + ts[i].n;
  parallel_for(start.back(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    // The last tensor that starts at or before b holds element b (empty ones before it are skipped).
    auto i = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), b) - start.begin()) - 1;
    for (; b < e; ++i) {
      const int64_t end = std::min(e, start[i + 1]);
      if (end > b) f(ts[i], b - start[i], end - start[i]);
      b = std::max(b, end);
    }
  });
}

void sgd_step(DType dtype, const stubs::SgdStepTensor* ts, int64_t count) {
  dispatch_floating(dtype, "SGD.step", [&]<typename T>() {
    for_each_range(ts, count, [](const stubs::SgdStepTensor& t, int64_t b, int64_t e) {
      T* bp = static_cast<T*>(t.momentum_buffer);
      math::with_sgd_step<T>(t.args, [&](auto step) {
        sgd_pass<T>(step, static_cast<T*>(t.p) + b, static_cast<const T*>(t.g) + b, bp ? bp + b : nullptr, e - b);
      });
    });
  });
}

void adam_step(DType dtype, const stubs::AdamStepTensor* ts, int64_t count) {
  dispatch_floating(dtype, "Adam.step", [&]<typename T>() {
    for_each_range(ts, count, [](const stubs::AdamStepTensor& t, int64_t b, int64_t e) {
      T* xp = static_cast<T*>(t.max_exp_avg_sq);
      math::with_adam_step<T>(t.args, xp != nullptr, [&](auto step) {
        adam_pass<T>(step, static_cast<T*>(t.p) + b, static_cast<const T*>(t.g) + b, static_cast<T*>(t.exp_avg) + b,
                     static_cast<T*>(t.exp_avg_sq) + b, xp ? xp + b : nullptr, e - b);
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
