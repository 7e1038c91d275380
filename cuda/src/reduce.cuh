#pragma once
// Shared parts of the reduction kernels (Note [Reductions] in launch_plan.h): the combine rule,
// the plan of kept and reduced dims, the pass that combines split rows, and the launchers of the
// kernels that live in their own files (reduce_warp.cu, reduce_columns.cu). Private; CUDA only.
#include "launch.cuh"
#include "launch_plan.h"
#include "wick/core/accumulate_type.h"
#include "wick/core/backend.h"

namespace wick::cuda::detail {

static_assert(plan::kReduceBlock == kBlock, "the plan's block size is the kernels'");

// Note [Reduction rules] (wick/core/reduce_functors.h): the CPU's identity and combine.
template <typename A, ReduceOp Op>
struct Combine {
  __device__ __forceinline__ static A init() { return math::ReduceRule<A, Op>::identity(); }
  __device__ __forceinline__ static A apply(A r, A v) { return math::ReduceRule<A, Op>::combine(r, v); }
};

// Offsets of the kept (outer) dims: operand 0 = out, operand 1 = in. Inner: the reduced dims of in.
struct ReducePlan {
  DeviceLayout<2> outer;
  DeviceLayout<1> inner;
  int64_t outer_n = 1, inner_n = 1;
};

/// out[o] = the combine of partials[o * splits + 0 .. splits - 1], in slice order.
template <typename T, typename A, ReduceOp Op>
__global__ void reduce_finish_kernel(ReducePlan p, T* out, const A* partials, int64_t splits) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < p.outer_n; o += step) {
    int64_t oo[2];
    p.outer.offsets(o, oo);
    A r = Combine<A, Op>::init();
    for (int64_t s = 0; s < splits; ++s) r = Combine<A, Op>::apply(r, partials[o * splits + s]);
    out[oo[0]] = static_cast<T>(r);
  }
}

/// A warp per output (reduce_warp.cu).
template <typename T, ReduceOp Op>
void launch_reduce_warp(const ReducePlan& p, T* out, const T* in);

/// 32 outputs x 8 rows of threads per block, `l.splits` slices per row (reduce_columns.cu).
template <typename T, ReduceOp Op>
void launch_reduce_columns(const ReducePlan& p, const plan::ReduceLaunch& l, int device, T* out, const T* in);

/// Explicit instantiations of a launcher for every dtype and op (one line per kernel file).
#define WICK_REDUCE_INSTANTIATE_OPS(LAUNCH, T) \
  LAUNCH(T, ::wick::ReduceOp::Sum);            \
  LAUNCH(T, ::wick::ReduceOp::Prod);           \
  LAUNCH(T, ::wick::ReduceOp::Max);            \
  LAUNCH(T, ::wick::ReduceOp::Min)
#define WICK_REDUCE_INSTANTIATE(LAUNCH)         \
  WICK_REDUCE_INSTANTIATE_OPS(LAUNCH, float);   \
  WICK_REDUCE_INSTANTIATE_OPS(LAUNCH, double);  \
  WICK_REDUCE_INSTANTIATE_OPS(LAUNCH, int64_t); \
  WICK_REDUCE_INSTANTIATE_OPS(LAUNCH, bool)

}  // namespace wick::cuda::detail
