#pragma once
// Launch helpers shared by the kernel files (private; CUDA code only).
//
// Note [Elementwise kernels]
// An elementwise op is a functor from functors.h (the same object the CPU loop calls) wrapped in
// a small "apply" struct that reads and writes the operands. launch_elementwise picks one of two
// kernels: a contiguous one (every operand dense: plain indices, 4 elements per thread) or a
// strided one (per-operand element offsets computed from a coalesced StridedLayout, innermost
// dim first), in 32-bit index math when every offset fits (Note [32-bit index math] in
// launch_plan.h). All use grid-stride loops, so any size works with any grid.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_check.h"
#include "launch_plan.h"
#include "stream_internal.h"
#include "wick/core/backend.h"
#include "wick/core/kernel_layout.h"

namespace wick::cuda::detail {

constexpr int kBlock = 256;
constexpr int kUnroll = 4;

/// Blocks for `n` work items of `per_block` items each, capped (kernels loop over the rest).
inline unsigned grid_for(int64_t n, int64_t per_block = kBlock) {
  int64_t g = (n + per_block - 1) / per_block;
  if (g < 1) g = 1;
  constexpr int64_t kMaxGrid = int64_t{1} << 20;
  return static_cast<unsigned>(g < kMaxGrid ? g : kMaxGrid);
}

/// A StridedLayout with dims reversed (innermost first), so device loops index it with
/// compile-time positions (no local-memory arrays).
template <int N>
struct DeviceLayout {
  int ndim = 0;
  int64_t sizes[kMaxKernelDims] = {};
  int64_t strides[N][kMaxKernelDims] = {};

  __device__ __forceinline__ void offsets(int64_t i, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
    if (ndim == 1) {
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] = i * strides[k][0];
      return;
    }
#pragma unroll
    for (int d = 0; d < kMaxKernelDims; ++d) {
      if (d == ndim) break;
      const int64_t idx = i % sizes[d];
      i /= sizes[d];
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * strides[k][d];
    }
  }
};

/// DeviceLayout in 32-bit math (Note [32-bit index math]): unsigned div/mod of the index, signed
/// 32-bit offsets, widened only at the end. Only for layouts that plan::fits_32bit_index accepts.
template <int N>
struct DeviceLayout32 {
  int ndim = 0;
  uint32_t sizes[kMaxKernelDims] = {};
  int32_t strides[N][kMaxKernelDims] = {};

  __device__ __forceinline__ void offsets(uint32_t i, int64_t (&out)[N]) const {
    int32_t off[N];
    if (ndim == 1) {
#pragma unroll
      for (int k = 0; k < N; ++k) out[k] = static_cast<int32_t>(i) * strides[k][0];
      return;
    }
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
    for (int d = 0; d < kMaxKernelDims; ++d) {
      if (d == ndim) break;
      const uint32_t q = i / sizes[d];
      const int32_t idx = static_cast<int32_t>(i - q * sizes[d]);
      i = q;
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * strides[k][d];
    }
#pragma unroll
    for (int k = 0; k < N; ++k) out[k] = off[k];
  }
};

template <int N>
DeviceLayout32<N> to_device_layout32(const StridedLayout<N>& L) {
  DeviceLayout32<N> D;
  D.ndim = L.ndim;
  for (int d = 0; d < L.ndim; ++d) {
    D.sizes[d] = static_cast<uint32_t>(L.sizes[L.ndim - 1 - d]);
    for (int k = 0; k < N; ++k) D.strides[k][d] = static_cast<int32_t>(L.strides[k][L.ndim - 1 - d]);
  }
  return D;
}

template <int N>
DeviceLayout<N> to_device_layout(const StridedLayout<N>& L) {
  DeviceLayout<N> D;
  D.ndim = L.ndim;
  for (int d = 0; d < L.ndim; ++d) {
    D.sizes[d] = L.sizes[L.ndim - 1 - d];
    for (int k = 0; k < N; ++k) D.strides[k][d] = L.strides[k][L.ndim - 1 - d];
  }
  return D;
}

/// True when every operand walks memory densely in the layout's order.
template <int N>
bool is_dense(const StridedLayout<N>& L) {
  if (L.ndim == 0) return true;
  if (L.ndim != 1) return false;
  for (int k = 0; k < N; ++k)
    if (L.strides[k][0] != 1) return false;
  return true;
}

template <typename Apply>
__global__ void contiguous_kernel(int64_t n, Apply f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x * kUnroll;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x * kUnroll + threadIdx.x; base < n; base += step) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int64_t i = base + static_cast<int64_t>(u) * blockDim.x;
      if (i < n) f(i);
    }
  }
}

template <int N, typename Apply>
__global__ void strided_kernel(DeviceLayout<N> L, int64_t n, Apply f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[N];
    L.offsets(i, off);
    f(off);
  }
}

// numel <= INT32_MAX and a grid of at most 2^20 x 256 threads: i + step never wraps.
template <int N, typename Apply>
__global__ void strided_kernel32(DeviceLayout32<N> L, uint32_t n, Apply f) {
  const uint32_t step = gridDim.x * blockDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[N];
    L.offsets(i, off);
    f(off);
  }
}

/// Runs `f` over every element of layout L on the current stream. `f` provides
/// `operator()(int64_t i)` (dense operands, element i of each) and
/// `operator()(const int64_t (&off)[N])` (element offsets per operand).
template <int N, typename Apply>
void launch_elementwise(const StridedLayout<N>& L, const Apply& f) {
  const int64_t n = L.numel;
  if (n == 0) return;
  cudaStream_t stream = current_raw_stream();
  if (is_dense(L)) {
    contiguous_kernel<<<grid_for(n, kBlock * kUnroll), kBlock, 0, stream>>>(n, f);
  } else if (plan::use_32bit_index(L)) {
    strided_kernel32<N><<<grid_for(n), kBlock, 0, stream>>>(to_device_layout32(L), static_cast<uint32_t>(n), f);
  } else {
    strided_kernel<N><<<grid_for(n), kBlock, 0, stream>>>(to_device_layout(L), n, f);
  }
  WICK_CUDA_CHECK(cudaGetLastError());
}

}  // namespace wick::cuda::detail
