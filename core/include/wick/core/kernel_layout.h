#pragma once
// StridedLayout: the plain-old-data description of an elementwise loop that both the CPU loops
// and the CUDA kernels consume. Operand 0 is the output; all operands share `sizes` (inputs are
// already broadcast, with stride 0 in broadcast dims). make_layout coalesces adjacent dims that
// are contiguous in every operand, so most loops run over one dim.
#include <cstdint>

#include "wick/core/dim_vector.h"
#include "wick/core/host_device.h"

namespace wick {

inline constexpr int kMaxKernelDims = 12;

template <int N>
struct StridedLayout {
  int ndim = 0;
  int64_t numel = 1;
  int64_t sizes[kMaxKernelDims] = {};
  int64_t strides[N][kMaxKernelDims] = {};  ///< in elements

  /// Element offsets of linear index `i` (row-major over sizes) for every operand.
  WICK_HOST_DEVICE void offsets(int64_t i, int64_t (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      int64_t idx = i % sizes[d];
      i /= sizes[d];
      for (int k = 0; k < N; ++k) out[k] += idx * strides[k][d];
    }
  }
};

/// True when `strides` are the row-major contiguous strides of `sizes` (size-1 dims ignored).
bool is_contiguous_layout(IntArrayRef sizes, IntArrayRef strides);

/// Builds a coalesced layout for operands that all have shape `sizes`. Throws wick::NotImplementedError when
/// the tensors have more than kMaxKernelDims dims after coalescing.
template <int N>
StridedLayout<N> make_layout(IntArrayRef sizes, const IntArrayRef (&strides)[N]);

}  // namespace wick
