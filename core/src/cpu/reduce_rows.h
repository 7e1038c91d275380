#pragma once
// The CPU reduce kernel's two inner loops (CpuBackend::reduce, core/src/cpu/cpu_backend.cpp),
// built for SSE2, AVX2 and AVX-512 (Note [CPU multiversioning]).
//
// Note [CPU reduce order]
// Every output element of a CPU reduction combines its inputs in one fixed order, which depends
// on the shape and strides alone, never on the thread count:
//  - A contiguous run of inputs that all go into one output (a row sum, a conv bias's H x W
//    plane) folds into 16 interleaved lanes: element i of the run into lane i % 16, the running
//    value into lane 0 first; the lanes then combine pairwise (lane l with lane l + 8, then
//    l + 4, l + 2, l + 1). Each lane is an ordinary sequential fold, so GCC vectorizes it
//    without reassociating anything, and every clone returns the same bits.
//  - Inputs whose outputs are contiguous too (a sum over a leading dim: row r of [R, C] into the
//    C accumulators) combine row after row into the accumulators, element by element.
//  - The work splits over the threads by output element (whole rows of outputs, or a range of a
//    kept dim), so each output is reduced by one thread in this order at every budget.
// Before the 14th session a contiguous run used 4 scalar lanes and a leading-dim sum a strided
// scalar loop on one thread: a conv bias's gradient over [128, 16, 28, 28] took 252 us against
// 142 us for a copy of the same tensor.
#include <cstdint>

#include "wick/core/cpu_multiversion.h"

namespace wick::cpu {

inline constexpr int kReduceLanes = 16;

/// Folds the n contiguous values x[0..n) into `start` with Rule's combine, in the lane order of
/// Note [CPU reduce order]. A is the accumulator type.
template <typename Rule, typename A, typename T>
WICK_CPU_MULTIVERSION A fold_row(A start, const T* x, int64_t n) {
  A lane[kReduceLanes];
  lane[0] = start;
  for (int l = 1; l < kReduceLanes; ++l) lane[l] = Rule::identity();
  int64_t i = 0;
  for (; i + kReduceLanes <= n; i += kReduceLanes)
    for (int l = 0; l < kReduceLanes; ++l) lane[l] = Rule::combine(lane[l], static_cast<A>(x[i + l]));
  for (int l = 0; i + l < n; ++l) lane[l] = Rule::combine(lane[l], static_cast<A>(x[i + l]));
  for (int w = kReduceLanes / 2; w >= 1; w /= 2)
    for (int l = 0; l < w; ++l) lane[l] = Rule::combine(lane[l], lane[l + w]);
  return lane[0];
}

/// acc[i] = combine(acc[i], x[i]) for i in [0, n): one contiguous row of inputs into a contiguous
/// row of accumulators (Note [CPU reduce order]). The two ranges must not overlap.
template <typename Rule, typename A, typename T>
WICK_CPU_MULTIVERSION void accumulate_row(A* acc, const T* x, int64_t n) {
  A* __restrict__ a = acc;
  const T* __restrict__ v = x;
  for (int64_t i = 0; i < n; ++i) a[i] = Rule::combine(a[i], static_cast<A>(v[i]));
}

}  // namespace wick::cpu
