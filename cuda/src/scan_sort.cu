// sort_indices and cumsum along one dim: one thread per line. A line is walked sequentially,
// so cumsum accumulates in the CPU's order (math::acc_type) and equals its result bit for bit,
// and sort is a stable bottom-up merge sort in math::sorts_before's order (Note [Sort order]),
// giving the CPU's indices. Lines run in parallel; one very long line runs on one thread (a
// segmented device-wide sort is the next step if a benchmark asks for it).
#include <cstdint>

#include "caching_allocator.h"
#include "kernels.h"
#include "launch.cuh"
#include "wick/core/accumulate_type.h"
#include "wick/core/dtype.h"
#include "wick/core/int_math.h"
#include "wick/core/sort_order.h"

namespace wick::cuda {

namespace {
template <typename T>
__global__ void cumsum_kernel(detail::DeviceLayout<2> L, int64_t lines, int64_t len, int64_t st_out, int64_t st_in,
                              T* out, const T* in, bool reverse) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines; line += step) {
    int64_t off[2];
    L.offsets(line, off);
    math::acc_type<T> acc{};
    for (int64_t k = 0; k < len; ++k) {
      const int64_t j = reverse ? len - 1 - k : k;
      // int64 wraps (Note [Integer overflow and conversions])
      acc = math::wrapping_add(acc, static_cast<math::acc_type<T>>(in[off[1] + j * st_in]));
      out[off[0] + j * st_out] = static_cast<T>(acc);
    }
  }
}

// Each line owns 2 * len scratch indices; runs of `width` are merged from one half to the other.
template <typename T>
__global__ void sort_kernel(detail::DeviceLayout<2> L, int64_t lines, int64_t len, int64_t st_out, int64_t st_in,
                            int64_t* out, const T* in, int64_t* scratch, bool descending) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t line = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; line < lines; line += step) {
    int64_t off[2];
    L.offsets(line, off);
    const T* x = in + off[1];
    int64_t* src = scratch + line * 2 * len;
    int64_t* dst = src + len;
    for (int64_t j = 0; j < len; ++j) src[j] = j;
    for (int64_t width = 1; width < len; width *= 2) {
      for (int64_t lo = 0; lo < len; lo += 2 * width) {
        const int64_t mid = lo + width < len ? lo + width : len;
        const int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;
        int64_t a = lo, b = mid, o = lo;
        while (a < mid && b < hi) {
          // Take the right run's element only when it goes strictly first: stable.
          if (math::sorts_before(x[src[b] * st_in], x[src[a] * st_in], descending))
            dst[o++] = src[b++];
          else
            dst[o++] = src[a++];
        }
        while (a < mid) dst[o++] = src[a++];
        while (b < hi) dst[o++] = src[b++];
      }
      int64_t* t = src;
      src = dst;
      dst = t;
    }
    for (int64_t j = 0; j < len; ++j) out[off[0] + j * st_out] = src[j];
  }
}

// The layout of the lines: both operands with size 1 along dim, so each position is a line.
StridedLayout<2> line_layout(const KernelTensor& out, const KernelTensor& in, int64_t dim) {
  KernelTensor o = out, i = in;
  o.sizes[static_cast<size_t>(dim)] = 1;
  i.sizes[static_cast<size_t>(dim)] = 1;
  return layout_of<2>({&o, &i});
}
}  // namespace

void kernels::cumsum(const KernelTensor& out, const KernelTensor& in, int64_t dim, bool reverse) {
  const auto L = line_layout(out, in, dim);
  if (L.numel == 0) return;
  const auto d = static_cast<size_t>(dim);
  const auto D = detail::to_device_layout(L);
  cudaStream_t stream = detail::current_raw_stream();
  dispatch(in.dtype, "cumsum", [&]<typename T>() {
    cumsum_kernel<T><<<detail::grid_for(L.numel), detail::kBlock, 0, stream>>>(
        D, L.numel, in.sizes[d], out.strides[d], in.strides[d], reinterpret_cast<T*>(out.data),
        reinterpret_cast<const T*>(in.data), reverse);
    WICK_CUDA_CHECK(cudaGetLastError());
  });
}

void kernels::sort_indices(const KernelTensor& indices, const KernelTensor& in, int64_t dim, bool descending) {
  const auto L = line_layout(indices, in, dim);
  if (L.numel == 0) return;
  const auto d = static_cast<size_t>(dim);
  const int64_t len = in.sizes[d];
  const auto D = detail::to_device_layout(L);
  cudaStream_t stream = detail::current_raw_stream();
  DeviceBuffer scratch(static_cast<size_t>(L.numel * 2 * len) * sizeof(int64_t), detail::current_device_fast());
  dispatch(in.dtype, "sort", [&]<typename T>() {
    sort_kernel<T><<<detail::grid_for(L.numel), detail::kBlock, 0, stream>>>(
        D, L.numel, len, indices.strides[d], in.strides[d], reinterpret_cast<int64_t*>(indices.data),
        reinterpret_cast<const T*>(in.data), static_cast<int64_t*>(scratch.data()), descending);
    WICK_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace wick::cuda
