// Reductions (sum, prod, max, min) over any set of dims (Note [Reductions] in launch_plan.h and
// docs/cuda.md): the plan, the kernel choice, and the thread- and block-per-output kernels; the
// warp and columns kernels are in reduce_warp.cu and reduce_columns.cu. Accumulation is in
// double for float32 (as on the CPU) and int64 for bool, and max/min propagate NaN.
#include <limits>

#include "caching_allocator.h"
#include "kernels.h"
#include "reduce.cuh"
#include "wick/core/dtype.h"
#include "wick/cuda/runtime.h"

namespace wick::cuda {

namespace {
using detail::Combine;
using detail::ReducePlan;

template <typename T, typename A, ReduceOp Op>
__global__ void reduce_thread_kernel(ReducePlan p, T* out, const T* in) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < p.outer_n; o += step) {
    int64_t oo[2];
    p.outer.offsets(o, oo);
    A r = Combine<A, Op>::init();
    for (int64_t j = 0; j < p.inner_n; ++j) {
      int64_t io[1];
      p.inner.offsets(j, io);
      r = Combine<A, Op>::apply(r, static_cast<A>(in[oo[1] + io[0]]));
    }
    out[oo[0]] = static_cast<T>(r);
  }
}

// Block (blockIdx.x = output, blockIdx.y = slice of the row). Writes T into out when the row is
// not split, else the slice's partial into partials[output * splits + slice].
template <typename T, typename A, ReduceOp Op>
__global__ void reduce_block_kernel(ReducePlan p, T* out, const T* in, A* partials, int64_t chunk) {
  __shared__ A shared[detail::kBlock];
  const int64_t splits = gridDim.y;
  for (int64_t o = blockIdx.x; o < p.outer_n; o += gridDim.x) {
    int64_t oo[2];
    p.outer.offsets(o, oo);
    const int64_t begin = static_cast<int64_t>(blockIdx.y) * chunk;
    const int64_t end = begin + chunk < p.inner_n ? begin + chunk : p.inner_n;
    A r = Combine<A, Op>::init();
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
      int64_t io[1];
      p.inner.offsets(j, io);
      r = Combine<A, Op>::apply(r, static_cast<A>(in[oo[1] + io[0]]));
    }
    shared[threadIdx.x] = r;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (static_cast<int>(threadIdx.x) < s)
        shared[threadIdx.x] = Combine<A, Op>::apply(shared[threadIdx.x], shared[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (partials)
        partials[o * splits + blockIdx.y] = shared[0];
      else
        out[oo[0]] = static_cast<T>(shared[0]);
    }
    __syncthreads();
  }
}

ReducePlan make_plan(const KernelTensor& out, const KernelTensor& in) {
  DimVector kept_sizes, kept_out, kept_in, red_sizes, red_in;
  for (size_t d = 0; d < in.sizes.size(); ++d) {
    if (in.sizes[d] == 1) continue;
    if (out.sizes[d] == 1) {
      red_sizes.push_back(in.sizes[d]);
      red_in.push_back(in.strides[d]);
    } else {
      kept_sizes.push_back(in.sizes[d]);
      kept_out.push_back(out.strides[d]);
      kept_in.push_back(in.strides[d]);
    }
  }
  ReducePlan p;
  const IntArrayRef outer_strides[2] = {kept_out, kept_in};
  const auto outer = make_layout<2>(kept_sizes, outer_strides);
  const IntArrayRef inner_strides[1] = {red_in};
  const auto inner = make_layout<1>(red_sizes, inner_strides);
  p.outer = detail::to_device_layout(outer);
  p.inner = detail::to_device_layout(inner);
  p.outer_n = outer.numel;
  p.inner_n = inner.numel;
  return p;
}

template <typename T, ReduceOp Op>
void launch_reduce(const ReducePlan& p, const KernelTensor& out, const KernelTensor& in) {
  using A = math::acc_type<T>;
  T* po = reinterpret_cast<T*>(out.data);
  const T* pi = reinterpret_cast<const T*>(in.data);
  cudaStream_t stream = detail::current_raw_stream();
  const int device = detail::current_device_fast();
  const int sms = get_device_properties(device).multi_processor_count;
  const bool row_contiguous = p.inner.ndim > 0 && p.inner.strides[0][0] == 1;
  const bool outputs_contiguous = p.outer.ndim > 0 && p.outer.strides[1][0] == 1;
  const plan::ReduceLaunch l = plan::choose_reduce(p.outer_n, p.inner_n, row_contiguous, outputs_contiguous, sms);
  switch (l.path) {
    case plan::ReducePath::Thread:
      reduce_thread_kernel<T, A, Op><<<detail::grid_for(p.outer_n), detail::kBlock, 0, stream>>>(p, po, pi);
      WICK_CUDA_CHECK(cudaGetLastError());
      return;
    case plan::ReducePath::Warp:
      detail::launch_reduce_warp<T, Op>(p, po, pi);
      return;
    case plan::ReducePath::Columns:
      detail::launch_reduce_columns<T, Op>(p, l, device, po, pi);
      return;
    case plan::ReducePath::Block:
      break;
  }
  const int64_t splits = l.splits, chunk = l.chunk;
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>(p.outer_n, int64_t{1} << 20)), static_cast<unsigned>(splits));
  if (splits == 1) {
    reduce_block_kernel<T, A, Op><<<grid, detail::kBlock, 0, stream>>>(p, po, pi, nullptr, chunk);
    WICK_CUDA_CHECK(cudaGetLastError());
    return;
  }
  DeviceBuffer partials(static_cast<size_t>(p.outer_n * splits) * sizeof(A), device);
  A* pp = static_cast<A*>(partials.data());
  reduce_block_kernel<T, A, Op><<<grid, detail::kBlock, 0, stream>>>(p, po, pi, pp, chunk);
  WICK_CUDA_CHECK(cudaGetLastError());
  detail::reduce_finish_kernel<T, A, Op><<<detail::grid_for(p.outer_n), detail::kBlock, 0, stream>>>(p, po, pp, splits);
  WICK_CUDA_CHECK(cudaGetLastError());
}
}  // namespace

void kernels::reduce(ReduceOp op, const KernelTensor& out, const KernelTensor& in) {
  const ReducePlan p = make_plan(out, in);
  if (p.outer_n == 0) return;
  dispatch(in.dtype, "reduce", [&]<typename T>() {
    switch (op) {
      case ReduceOp::Sum:
        launch_reduce<T, ReduceOp::Sum>(p, out, in);
        break;
      case ReduceOp::Prod:
        launch_reduce<T, ReduceOp::Prod>(p, out, in);
        break;
      case ReduceOp::Max:
        launch_reduce<T, ReduceOp::Max>(p, out, in);
        break;
      case ReduceOp::Min:
        launch_reduce<T, ReduceOp::Min>(p, out, in);
        break;
    }
  });
}

}  // namespace wick::cuda
