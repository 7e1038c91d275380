#pragma once
// The CPU elementwise loop: walks a coalesced StridedLayout, calling `inner(offsets, n, strides)`
// once per innermost row (offsets and strides in elements, one per operand).
#include "wick/core/backend.h"
#include "wick/core/kernel_layout.h"

namespace wick::cpu {

template <int N, typename F>
void for_each_row(const StridedLayout<N>& L, F&& inner) {
  if (L.numel == 0) return;
  int64_t off[N] = {};
  int64_t st[N] = {};
  if (L.ndim == 0) {
    inner(off, int64_t{1}, st);
    return;
  }
  const int last = L.ndim - 1;
  const int64_t n = L.sizes[last];
  for (int k = 0; k < N; ++k) st[k] = L.strides[k][last];
  const int64_t outer = L.numel / n;
  int64_t idx[kMaxKernelDims] = {};
  for (int64_t o = 0; o < outer; ++o) {
    inner(off, n, st);
    for (int d = last - 1; d >= 0; --d) {
      ++idx[d];
      for (int k = 0; k < N; ++k) off[k] += L.strides[k][d];
      if (idx[d] < L.sizes[d]) break;
      for (int k = 0; k < N; ++k) off[k] -= L.strides[k][d] * L.sizes[d];
      idx[d] = 0;
    }
  }
}

}  // namespace wick::cpu
