#pragma once
// Binary elementwise: the shared functor applied over a strided, broadcast layout
// (Note [Elementwise kernels]). Comparisons and logical ops write bool.
#include "launch.cuh"
#include "wick/core/op_dispatch.h"

namespace wick::cuda::detail {

template <typename T, typename R, typename Fn>
struct BinaryApply {
  R* out;
  const T* a;
  const T* b;
  Fn fn;
  __device__ __forceinline__ void operator()(int64_t i) const { out[i] = fn(a[i], b[i]); }
  __device__ __forceinline__ void operator()(const int64_t (&off)[3]) const { out[off[0]] = fn(a[off[1]], b[off[2]]); }
};

/// out = op(a, b) for operand type T (every op of BinaryOp).
template <typename T>
void launch_binary(BinaryOp op, const KernelTensor& out, const KernelTensor& a, const KernelTensor& b) {
  const auto L = layout_of<3>({&out, &a, &b});
  dispatch_binary_op(op, [&](auto fn) {
    using Fn = decltype(fn);
    using R = typename Fn::template result<T>;
    launch_elementwise<3>(L, BinaryApply<T, R, Fn>{reinterpret_cast<R*>(out.data), reinterpret_cast<const T*>(a.data),
                                                   reinterpret_cast<const T*>(b.data), fn});
  });
}

// Note [Scalar operands]: a tensor-scalar op reads the scalar from the kernel's arguments (one
// launch, no 0-d tensor filled first), through the same functor as the tensor-tensor op.
template <typename T, typename R, typename Fn>
struct BinaryScalarApply {
  R* out;
  const T* a;
  T b;
  Fn fn;
  __device__ __forceinline__ void operator()(int64_t i) const { out[i] = fn(a[i], b); }
  __device__ __forceinline__ void operator()(const int64_t (&off)[2]) const { out[off[0]] = fn(a[off[1]], b); }
};

/// out = op(a, b) for operand type T and a scalar b already converted to T (as fill converts).
template <typename T>
void launch_binary_scalar(BinaryOp op, const KernelTensor& out, const KernelTensor& a, T b) {
  const auto L = layout_of<2>({&out, &a});
  dispatch_binary_op(op, [&](auto fn) {
    using Fn = decltype(fn);
    using R = typename Fn::template result<T>;
    launch_elementwise<2>(
        L, BinaryScalarApply<T, R, Fn>{reinterpret_cast<R*>(out.data), reinterpret_cast<const T*>(a.data), b, fn});
  });
}

}  // namespace wick::cuda::detail
