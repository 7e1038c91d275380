#pragma once
// Unary elementwise: the shared functor applied over a strided layout (Note [Elementwise kernels]).
#include <type_traits>

#include "launch.cuh"
#include "wick/core/error.h"
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

/// Ops whose result is floating point: core's front-end promotes integer and bool inputs to
/// float32 before calling the backend (as torch does), so they are compiled for float32 and
/// float64 only (which also halves unary_int.cu's compile time).
template <typename Fn>
inline constexpr bool kFloatOnly =
    std::is_same_v<Fn, math::Exp> || std::is_same_v<Fn, math::Log> || std::is_same_v<Fn, math::Sqrt> ||
    std::is_same_v<Fn, math::Rsqrt> || std::is_same_v<Fn, math::Tanh> || std::is_same_v<Fn, math::Sigmoid> ||
    std::is_same_v<Fn, math::Gelu> || std::is_same_v<Fn, math::Sin> || std::is_same_v<Fn, math::Cos> ||
    std::is_same_v<Fn, math::Reciprocal> || std::is_same_v<Fn, math::Erf> || std::is_same_v<Fn, math::Log1p> ||
    std::is_same_v<Fn, math::Expm1> || std::is_same_v<Fn, math::Tan> || std::is_same_v<Fn, math::Asin> ||
    std::is_same_v<Fn, math::Acos> || std::is_same_v<Fn, math::Atan> || std::is_same_v<Fn, math::Sinh> ||
    std::is_same_v<Fn, math::Cosh> || std::is_same_v<Fn, math::Asinh> || std::is_same_v<Fn, math::Acosh> ||
    std::is_same_v<Fn, math::Atanh> || std::is_same_v<Fn, math::Digamma> || std::is_same_v<Fn, math::Lgamma> ||
    std::is_same_v<Fn, math::Polygamma> || std::is_same_v<Fn, math::Erfinv> || std::is_same_v<Fn, math::Erfc> ||
    std::is_same_v<Fn, math::I0> || std::is_same_v<Fn, math::I1> || std::is_same_v<Fn, math::Sinc> ||
    std::is_same_v<Fn, math::Exp2> || std::is_same_v<Fn, math::FrexpMantissa> ||
    std::is_same_v<Fn, math::FrexpExponent>;

/// out = op(in) for element type T (every op of UnaryOp; float-only ops need a floating T).
template <typename T>
void launch_unary(UnaryOp op, const KernelTensor& out, const KernelTensor& in, double p0, double p1) {
  const auto L = layout_of<2>({&out, &in});
  dispatch_unary_op(op, [&](auto fn) {
    using Fn = decltype(fn);
    if constexpr (!std::is_floating_point_v<T> && kFloatOnly<Fn>) {
      WICK_FAIL_T(TypeError,
                  "unary op #{} on CUDA: not implemented for {} tensors (its result is floating point); convert "
                  "the input with .to(wick::kFloat32) first",
                  static_cast<int>(op), dtype_name(out.dtype));
    } else {
      launch_elementwise<2>(
          L, UnaryApply<T, Fn>{reinterpret_cast<T*>(out.data), reinterpret_cast<const T*>(in.data), fn, p0, p1});
    }
  });
}

}  // namespace wick::cuda::detail
