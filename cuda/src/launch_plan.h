#pragma once
// Host-side launch decisions of the CUDA kernels: plain C++ (no CUDA header), so that
// tests/cuda/host unit-tests them on a machine without a GPU.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

#include "wick/core/kernel_layout.h"

namespace wick::cuda::plan {

// Note [32-bit index math]
// The strided elementwise kernel turns a linear index into one element offset per operand with a
// div/mod per dim. In 64 bits that is a slow multi-instruction sequence per dim on the GPU; in 32
// bits a few instructions. So launch_elementwise compiles both and takes the 32-bit kernel when
// every index and every operand's offset fits: numel <= INT32_MAX and, per operand, the sums of
// (size - 1) * stride over the positive and over the negative strides stay within int32. Both
// kernels call the same apply object, so the choice changes speed, never values (the GPU tests
// force each and compare).

/// Which index width launch_elementwise uses; Auto picks by fits_32bit_index. Tests force one.
enum class IndexWidth { Auto, Force32, Force64 };

/// The process-wide override (tests only; Auto otherwise).
inline std::atomic<IndexWidth>& forced_index_width() {
  static std::atomic<IndexWidth> w{IndexWidth::Auto};
  return w;
}

/// True when every linear index of L and every element offset of each operand fits in int32.
template <int N>
bool fits_32bit_index(const StridedLayout<N>& L) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (L.numel > kMax) return false;
  for (int k = 0; k < N; ++k) {
    int64_t hi = 0, lo = 0;  // largest and smallest offset of operand k
    for (int d = 0; d < L.ndim; ++d) {
      if (L.sizes[d] <= 1) continue;
      const int64_t s = L.strides[k][d];
      // (size - 1) * |stride| overflows int64 only beyond any real tensor; check before adding.
      if (s > kMax || s < -kMax) return false;
      const int64_t span = (L.sizes[d] - 1) * s;
      (s > 0 ? hi : lo) += span;
      if (hi > kMax || lo < -kMax) return false;
    }
  }
  return true;
}

/// The width launch_elementwise uses for L under the current override.
template <int N>
bool use_32bit_index(const StridedLayout<N>& L) {
  switch (forced_index_width().load(std::memory_order_relaxed)) {
    case IndexWidth::Force32:
      return fits_32bit_index(L);  // never a wrong kernel, even when forced
    case IndexWidth::Force64:
      return false;
    case IndexWidth::Auto:
      break;
  }
  return fits_32bit_index(L);
}

// Note [Reductions]
// reduce.cu splits the input's dims into kept dims (the outputs) and reduced dims (each output's
// row), each side coalesced. It picks a kernel by shape:
// - Thread: one thread per output, the row read in order. For short rows (<= 32), or many
//   outputs (>= 2 x 256 per SM) whose rows are not contiguous (consecutive threads then read
//   consecutive outputs when the kept dims hold the contiguous one).
// - Warp: a warp per output, lanes across the row, a shuffle tree: many outputs with contiguous
//   rows (an inner reduction such as a row sum of a big matrix), read coalesced.
// - Block: a block per output (and per slice of its row when there are few outputs), a
//   shared-memory tree; for contiguous rows, and as the general fallback.
// - Columns: an outer (strided) reduction whose kept dims hold the contiguous one (a sum over
//   dim 0 of a [rows, cols] matrix): a block of 32 x 8 threads covers 32 consecutive outputs
//   (coalesced reads), its 8 rows of threads split the reduced dim and combine in shared memory
//   in a fixed order (row 0's partial, then row 1's, ...); long rows also split across blockIdx.y.
// A split row writes one partial per slice; a second kernel combines them in slice order. Every
// path combines in an order fixed by the shape and the device's SM count, so a result is the
// same from run to run. Accumulation is in double for float32 (as on the CPU), int64 for bool.

enum class ReducePath { Thread, Warp, Block, Columns };

struct ReduceLaunch {
  ReducePath path = ReducePath::Thread;
  int64_t splits = 1;  ///< slices per row (grid.y); > 1 needs the partials pass
  int64_t chunk = 0;   ///< reduced elements per slice (Block, Columns)
};

inline constexpr int kReduceBlock = 256;
inline constexpr int kColumnsX = 32;  ///< outputs per Columns block
inline constexpr int kColumnsY = 8;   ///< rows of threads per Columns block

/// The kernel and its split for `outer_n` outputs of `inner_n` elements each. `row_contiguous`:
/// the innermost reduced dim has stride 1; `outputs_contiguous`: the innermost kept dim has input
/// stride 1. `sms`: the device's multiprocessor count.
inline ReduceLaunch choose_reduce(int64_t outer_n, int64_t inner_n, bool row_contiguous, bool outputs_contiguous,
                                  int sms) {
  ReduceLaunch r;
  const int64_t wide = static_cast<int64_t>(sms) * 2 * kReduceBlock;
  const int64_t target_blocks = static_cast<int64_t>(sms) * 4;
  if (inner_n <= 32) return r;  // Thread
  if (row_contiguous) {
    if (outer_n >= wide) {
      r.path = ReducePath::Warp;
      return r;
    }
  } else if (outputs_contiguous) {
    if (outer_n >= wide) return r;  // Thread, coalesced across outputs
    r.path = ReducePath::Columns;
    const int64_t column_blocks = (outer_n + kColumnsX - 1) / kColumnsX;
    // About 4 blocks per SM, each slice at least 64 elements per row of threads.
    const int64_t want = (target_blocks + column_blocks - 1) / column_blocks;
    const int64_t most = (inner_n + kColumnsY * 64 - 1) / (kColumnsY * 64);
    r.splits = std::max<int64_t>(1, std::min<int64_t>({want, most, 65535}));
    r.chunk = (inner_n + r.splits - 1) / r.splits;
    return r;
  } else if (outer_n >= wide) {
    return r;  // Thread: neither side is contiguous
  }
  // Block: about 4 blocks per SM, each slice over at least 4096 elements.
  r.path = ReducePath::Block;
  const int64_t want = (target_blocks + outer_n - 1) / outer_n;
  const int64_t most = (inner_n + 4095) / 4096;
  r.splits = std::max<int64_t>(1, std::min<int64_t>({want, most, 65535}));
  r.chunk = (inner_n + r.splits - 1) / r.splits;
  return r;
}

}  // namespace wick::cuda::plan
