// A warp per output for inner reductions with many outputs (Note [Reductions] in
// launch_plan.h): the lanes read the row in coalesced steps of 32 and combine through a fixed
// shuffle tree, so the result does not vary from run to run.
#include "reduce.cuh"

namespace wick::cuda::detail {

namespace {
template <typename T, typename A, ReduceOp Op>
__global__ void reduce_warp_kernel(ReducePlan p, T* out, const T* in) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = blockDim.x / 32;
  const int64_t step = static_cast<int64_t>(gridDim.x) * warps;
  // Every lane of a warp walks the same outputs, so the full-mask shuffles below are legal.
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * warps + threadIdx.x / 32; o < p.outer_n; o += step) {
    int64_t oo[2];
    p.outer.offsets(o, oo);
    A r = Combine<A, Op>::init();
    for (int64_t j = lane; j < p.inner_n; j += 32) {
      int64_t io[1];
      p.inner.offsets(j, io);
      r = Combine<A, Op>::apply(r, static_cast<A>(in[oo[1] + io[0]]));
    }
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) r = Combine<A, Op>::apply(r, __shfl_down_sync(0xffffffffu, r, s));
    if (lane == 0) out[oo[0]] = static_cast<T>(r);
  }
}
}  // namespace

template <typename T, ReduceOp Op>
void launch_reduce_warp(const ReducePlan& p, T* out, const T* in) {
  using A = math::acc_type<T>;
  constexpr int64_t kWarpsPerBlock = kBlock / 32;
  reduce_warp_kernel<T, A, Op><<<grid_for(p.outer_n, kWarpsPerBlock), kBlock, 0, current_raw_stream()>>>(p, out, in);
  WICK_CUDA_CHECK(cudaGetLastError());
}

#define WICK_LAUNCH_WARP(T, OP) template void launch_reduce_warp<T, OP>(const ReducePlan&, T*, const T*)
WICK_REDUCE_INSTANTIATE(WICK_LAUNCH_WARP);

}  // namespace wick::cuda::detail
