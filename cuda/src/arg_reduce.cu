// argmax / argmin along one dim: one warp per output; each lane scans a strided share of the
// row, then the warp combines (value, index) pairs. NaN wins, and among equal values the first
// index wins, exactly as the CPU's sequential scan.
#include <cstdint>

#include "kernels.h"
#include "launch.cuh"
#include "wick/core/dtype.h"

namespace wick::cuda {

namespace {
constexpr int64_t kEmpty = INT64_MAX;

template <typename T, bool IsMax>
__device__ __forceinline__ void combine(T& bv, int64_t& bi, T v, int64_t i) {
  if (i == kEmpty) return;
  if (bi == kEmpty) {
    bv = v;
    bi = i;
    return;
  }
  if (math::arg_take<T, IsMax>(bv, bi, v, i)) {  // Note [Reduction rules]
    bv = v;
    bi = i;
  }
}

template <typename T, bool IsMax>
__global__ void arg_reduce_kernel(detail::DeviceLayout<2> L, int64_t n_out, int64_t len, int64_t st_in, int64_t* out,
                                  const T* in) {
  constexpr int kWarps = detail::kBlock / 32;
  __shared__ T sv[detail::kBlock];
  __shared__ int64_t si[detail::kBlock];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kWarps;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kWarps; base < n_out; base += step) {
    const int64_t o = base + warp;
    T bv{};
    int64_t bi = kEmpty;
    int64_t off[2] = {0, 0};
    if (o < n_out) {
      L.offsets(o, off);
      const T* x = in + off[1];
      for (int64_t j = lane; j < len; j += 32) combine<T, IsMax>(bv, bi, x[j * st_in], j);
    }
    sv[threadIdx.x] = bv;
    si[threadIdx.x] = bi;
    __syncwarp();
    for (int s = 16; s > 0; s >>= 1) {
      if (lane < s) {
        T v2 = sv[threadIdx.x + s];
        int64_t i2 = si[threadIdx.x + s];
        combine<T, IsMax>(bv, bi, v2, i2);
        sv[threadIdx.x] = bv;
        si[threadIdx.x] = bi;
      }
      __syncwarp();
    }
    if (lane == 0 && o < n_out) out[off[0]] = bi == kEmpty ? 0 : bi;
    __syncwarp();
  }
}
}  // namespace

void kernels::arg_reduce(ArgReduceOp op, const KernelTensor& out, const KernelTensor& in, int64_t dim) {
  KernelTensor in0 = in;
  in0.sizes = out.sizes;
  const auto L = layout_of<2>({&out, &in0});
  if (L.numel == 0) return;
  const int64_t len = in.sizes[static_cast<size_t>(dim)], st_in = in.strides[static_cast<size_t>(dim)];
  const auto D = detail::to_device_layout(L);
  const unsigned grid = detail::grid_for(L.numel, detail::kBlock / 32);
  cudaStream_t stream = detail::current_raw_stream();
  dispatch(in.dtype, "argmax", [&]<typename T>() {
    const T* pi = reinterpret_cast<const T*>(in.data);
    int64_t* po = reinterpret_cast<int64_t*>(out.data);
    if (op == ArgReduceOp::ArgMax)
      arg_reduce_kernel<T, true><<<grid, detail::kBlock, 0, stream>>>(D, L.numel, len, st_in, po, pi);
    else
      arg_reduce_kernel<T, false><<<grid, detail::kBlock, 0, stream>>>(D, L.numel, len, st_in, po, pi);
    WICK_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace wick::cuda
