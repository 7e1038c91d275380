#pragma once
// Unary elementwise: the shared functor applied over a strided layout (Note [Elementwise kernels]).
#include "launch.cuh"
#include "wick/core/op_dispatch.h"

namespace wick::cuda::detail {

template <typename T, typename Fn>
struct UnaryApply {
  T* out;
  const T* in;
  Fn fn;
  double p0, p1;
  __device__ __forceinline__ void operator()(int64_t i) const { out[i] = fn(in[i], p0, p1); }
  __device__ __forceinline__ void operator()(const int64_t (&off)[2]) const { out[off[0]] = fn(in[off[1]], p0, p1); }
};

/// out = op(in) for element type T (every op of UnaryOp).
template <typename T>
void launch_unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  const auto L = layout_of<2>({&out, &in});
  dispatch_unary_op(op, [&](auto fn) {
    using Fn = decltype(fn);
    launch_elementwise<2>(L, UnaryApply<T, Fn>{reinterpret_cast<T*>(out.data), reinterpret_cast<const T*>(in.data),
                                               fn, p0, p1});
  });
}

}  // namespace wick::cuda::detail
