#pragma once
// The CPU elementwise loop: walks a coalesced StridedLayout, calling `inner(offsets, n, strides)`
// once per innermost row, or piece of a row (offsets and strides in elements, one per operand).
#include <algorithm>

#include "cpu/parallel_for.h"
#include "wick/core/backend.h"
#include "wick/core/kernel_layout.h"

namespace wick::cpu {

/// Visits the elements [begin, end) of L in row-major order: a first partial row, whole rows,
/// a last partial row.
template <int N, typename F>
void for_each_row_range(const StridedLayout<N>& L, int64_t begin, int64_t end, F&& inner) {
  if (begin >= end) return;
  int64_t off[N] = {};
  int64_t st[N] = {};
  if (L.ndim == 0) {
    inner(off, int64_t{1}, st);
    return;
  }
  const int last = L.ndim - 1;
  const int64_t n = L.sizes[last];
  for (int k = 0; k < N; ++k) st[k] = L.strides[k][last];
  // The multi-index of `begin`, and each operand's offset there.
  int64_t idx[kMaxKernelDims] = {};
  int64_t rest = begin;
  for (int d = last; d >= 0; --d) {
    idx[d] = rest % L.sizes[d];
    rest /= L.sizes[d];
    for (int k = 0; k < N; ++k) off[k] += idx[d] * L.strides[k][d];
  }
  int64_t pos = begin;
  while (pos < end) {
    const int64_t in_row = std::min(n - idx[last], end - pos);
    inner(off, in_row, st);
    pos += in_row;
    if (pos >= end) break;
    // Move to the start of the next row.
    for (int k = 0; k < N; ++k) off[k] -= idx[last] * st[k];
    idx[last] = 0;
    for (int d = last - 1; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < N; ++k) off[k] += L.strides[k][d];
      if (idx[d] < L.sizes[d]) break;
      for (int k = 0; k < N; ++k) off[k] -= L.strides[k][d] * L.sizes[d];
      idx[d] = 0;
    }
  }
}

/// Visits every element of L on the calling thread, row by row.
template <int N, typename F>
void for_each_row(const StridedLayout<N>& L, F&& inner) {
  if (L.numel == 0) return;
  for_each_row_range(L, 0, L.numel, inner);
}

/// for_each_row split across the device's intra-op threads (Note [Intra-op threads]). Only for
/// kernels whose rows are independent: each element written once, from inputs nobody writes.
template <int N, typename F>
void for_each_row_parallel(const StridedLayout<N>& L, F&& inner) {
  if (L.numel == 0) return;
  parallel_for(L.numel, kElementwiseGrain, [&](int64_t b, int64_t e) { for_each_row_range(L, b, e, inner); });
}

}  // namespace wick::cpu
