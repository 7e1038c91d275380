#include "wick/core/kernel_layout.h"

#include "wick/core/error.h"

namespace wick {

bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

template <int N>
StridedLayout<N> make_layout(IntArrayRef sizes, const IntArrayRef (&strides)[N]) {
  StridedLayout<N> L;
  // Fast paths for the common case of small ops: one element, or every operand row-major
  // contiguous. The general walk below would drop every dim, or merge them all into one; doing
  // it directly saves most of a small op's layout cost (the walk copies 64-entry arrays).
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  if (numel == 1) {  // every dim has size 1: no dim is left (what the walk below gives)
    L.numel = 1;
    L.ndim = 0;
    return L;
  }
  if (numel > 1) {
    bool all_contiguous = true;
    for (int k = 0; k < N && all_contiguous; ++k) all_contiguous = is_contiguous_layout(sizes, strides[k]);
    if (all_contiguous) {
      L.numel = numel;
      L.ndim = 1;
      L.sizes[0] = numel;
      for (int k = 0; k < N; ++k) L.strides[k][0] = 1;
      return L;
    }
  }
  // Drop size-1 dims, then merge dim d into d+1 when contiguous for every operand.
  int64_t sz[64];
  int64_t st[N][64];
  int nd = 0;
  WICK_CHECK_NOT_IMPLEMENTED(sizes.size() <= 64,
                             "elementwise: tensors with more than 64 dims are not supported (got {})", sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    L.numel *= sizes[d];
    if (sizes[d] == 1) continue;
    sz[nd] = sizes[d];
    for (int k = 0; k < N; ++k) st[k][nd] = strides[k][d];
    ++nd;
  }
  // Coalesce from the innermost dim outwards.
  int out = 0;
  for (int d = 0; d < nd; ++d) {
    if (out > 0) {
      bool can = true;
      for (int k = 0; k < N; ++k) {
        if (st[k][out - 1] != st[k][d] * sz[d]) {
          can = false;
          break;
        }
      }
      if (can) {
        sz[out - 1] *= sz[d];
        for (int k = 0; k < N; ++k) st[k][out - 1] = st[k][d];
        continue;
      }
    }
    sz[out] = sz[d];
    for (int k = 0; k < N; ++k) st[k][out] = st[k][d];
    ++out;
  }
  WICK_CHECK_NOT_IMPLEMENTED(
      out <= kMaxKernelDims,
      "elementwise: tensors whose layout needs more than {} dims after merging contiguous dims are "
      "not supported (got {}); call .contiguous() first",
      kMaxKernelDims, out);
  L.ndim = out;
  for (int d = 0; d < out; ++d) {
    L.sizes[d] = sz[d];
    for (int k = 0; k < N; ++k) L.strides[k][d] = st[k][d];
  }
  return L;
}

template StridedLayout<1> make_layout<1>(IntArrayRef, const IntArrayRef (&)[1]);
template StridedLayout<2> make_layout<2>(IntArrayRef, const IntArrayRef (&)[2]);
template StridedLayout<3> make_layout<3>(IntArrayRef, const IntArrayRef (&)[3]);
template StridedLayout<4> make_layout<4>(IntArrayRef, const IntArrayRef (&)[4]);

}  // namespace wick
