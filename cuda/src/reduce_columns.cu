// Outer (strided) reductions whose kept dims hold the contiguous one, e.g. a sum over dim 0 of a
// [rows, cols] matrix (Note [Reductions] in launch_plan.h). A block of 32 x 8 threads covers 32
// consecutive outputs, so each warp reads 32 consecutive elements; its 8 rows of threads take
// every 8th row of the block's slice, and row 0 then combines the 8 partials in row order.
#include "caching_allocator.h"
#include "reduce.cuh"

namespace wick::cuda::detail {

namespace {
using plan::kColumnsX;
using plan::kColumnsY;

// blockIdx.y is the slice of the reduced dim [y * chunk, (y + 1) * chunk). Writes T into out
// when the row is not split, else the slice's partial into partials[o * splits + slice].
template <typename T, typename A, ReduceOp Op>
__global__ void reduce_columns_kernel(ReducePlan p, T* out, const T* in, A* partials, int64_t chunk) {
  __shared__ A shared[kColumnsY][kColumnsX];
  const int64_t splits = gridDim.y;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * chunk;
  const int64_t end = begin + chunk < p.inner_n ? begin + chunk : p.inner_n;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kColumnsX;
  for (int64_t first = static_cast<int64_t>(blockIdx.x) * kColumnsX; first < p.outer_n; first += step) {
    const int64_t o = first + threadIdx.x;
    int64_t oo[2] = {0, 0};
    A r = Combine<A, Op>::init();
    if (o < p.outer_n) {
      p.outer.offsets(o, oo);
      for (int64_t j = begin + threadIdx.y; j < end; j += kColumnsY) {
        int64_t io[1];
        p.inner.offsets(j, io);
        r = Combine<A, Op>::apply(r, static_cast<A>(in[oo[1] + io[0]]));
      }
    }
    shared[threadIdx.y][threadIdx.x] = r;
    __syncthreads();
    if (threadIdx.y == 0 && o < p.outer_n) {
      A t = shared[0][threadIdx.x];
#pragma unroll
      for (int y = 1; y < kColumnsY; ++y) t = Combine<A, Op>::apply(t, shared[y][threadIdx.x]);
      if (partials)
        partials[o * splits + blockIdx.y] = t;
      else
        out[oo[0]] = static_cast<T>(t);
    }
    __syncthreads();
  }
}
}  // namespace

template <typename T, ReduceOp Op>
void launch_reduce_columns(const ReducePlan& p, const plan::ReduceLaunch& l, int device, T* out, const T* in) {
  using A = math::acc_type<T>;
  cudaStream_t stream = current_raw_stream();
  const dim3 block(kColumnsX, kColumnsY);
  const dim3 grid(grid_for(p.outer_n, kColumnsX), static_cast<unsigned>(l.splits));
  if (l.splits == 1) {
    reduce_columns_kernel<T, A, Op><<<grid, block, 0, stream>>>(p, out, in, nullptr, l.chunk);
    WICK_CUDA_CHECK(cudaGetLastError());
    return;
  }
  DeviceBuffer partials(static_cast<size_t>(p.outer_n * l.splits) * sizeof(A), device);
  A* pp = static_cast<A*>(partials.data());
  reduce_columns_kernel<T, A, Op><<<grid, block, 0, stream>>>(p, out, in, pp, l.chunk);
  WICK_CUDA_CHECK(cudaGetLastError());
  reduce_finish_kernel<T, A, Op><<<grid_for(p.outer_n), kBlock, 0, stream>>>(p, out, pp, l.splits);
  WICK_CUDA_CHECK(cudaGetLastError());
}

#define WICK_LAUNCH_COLUMNS(T, OP) \
  template void launch_reduce_columns<T, OP>(const ReducePlan&, const plan::ReduceLaunch&, int, T*, const T*)
WICK_REDUCE_INSTANTIATE(WICK_LAUNCH_COLUMNS);

}  // namespace wick::cuda::detail
