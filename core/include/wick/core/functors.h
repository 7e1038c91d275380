#pragma once
// The scalar math of every elementwise op, written once and compiled for the CPU loops and the
// CUDA kernels alike (Note [Math written once], docs/cuda.md).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "wick/core/float32_math.h"
#include "wick/core/host_device.h"
#include "wick/core/int_math.h"
#include "wick/core/special_math.h"

namespace wick::math {

template <typename T>
WICK_HOST_DEVICE T sigmoid(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return sigmoid_f32(x);  // vectorisable (Note [Vectorisable float32 exp and erf])
  } else {
    // Stable for large |x|: never computes exp of a large positive number.
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    T e = std::exp(x);
    return e / (T(1) + e);
  }
}

// gelu, its backward and tanh take erf_of, exp_of and tanh_of: float32's vectorisable functions
// (Note [Vectorisable float32 exp and erf]; gelu was a quarter of a transformer step with
// libm's), libm's for float64.

template <typename T>
WICK_HOST_DEVICE T gelu(T x) {  // exact (erf) form, as torch.nn.functional.gelu's default
  if constexpr (std::is_same_v<T, bool>) {
    return x;  // never called: the front-end computes gelu of bool/int64 inputs in float32
  } else {
    return T(0.5) * x * (T(1) + erf_of(x * T(0.70710678118654752440)));
  }
}

// gelu's backward, exact form: g * (Phi(x) + x phi(x)) with Phi(x) = (1 + erf(x / sqrt 2)) / 2 and
// phi(x) = exp(-x^2 / 2) / sqrt(2 pi), as PyTorch's gelu_backward; one pass instead of the dozen
// ops of the composite. Only floating types reach it (the front-end's gradients are floats).
template <typename T>
WICK_HOST_DEVICE T gelu_backward(T g, T x) {
  if constexpr (!std::is_floating_point_v<T>) {
    return g;  // never called
  } else {
    const T cdf = T(0.5) * (T(1) + erf_of(x * T(0.70710678118654752440)));
    const T pdf = exp_of(x * x * T(-0.5)) * T(0.39894228040143267794);
    return g * (cdf + x * pdf);
  }
}

template <typename T>
WICK_HOST_DEVICE T sign(T x) {
  return static_cast<T>((T(0) < x) - (x < T(0)));
}

// x ** e: libm's pow in double for floating x; for integers PyTorch's exact integer power
// (Note [Integer overflow and conversions]; a floating e reaches integer x only when integral,
// the front-end promotes otherwise). bool is the int64 power's truth.
template <typename T, typename E>
WICK_HOST_DEVICE T pow_of(T x, E e) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(e)));
  } else {
    const int64_t r = int_pow(static_cast<int64_t>(x), convert<int64_t>(e));
    if constexpr (std::is_same_v<T, bool>) {
      return r != 0;
    } else {
      return static_cast<T>(r);
    }
  }
}

// floor(x): the identity on integers (a round trip through double would round above 2^53).
template <typename T>
WICK_HOST_DEVICE T floor_of(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::floor(x));
  } else {
    return x;
  }
}

// ceil, round (half to even, as PyTorch's nearbyint) and trunc: the identity on integers too.
template <typename T>
WICK_HOST_DEVICE T ceil_of(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::ceil(x));
  } else {
    return x;
  }
}
template <typename T>
WICK_HOST_DEVICE T round_of(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::nearbyint(x));  // the default rounding mode: to nearest, ties to even
  } else {
    return x;
  }
}
template <typename T>
WICK_HOST_DEVICE T trunc_of(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::trunc(x));
  } else {
    return x;
  }
}

// fmod (the sign of a, as C's) and remainder (the sign of b, as Python's %). Integers: a zero
// divisor gives 0 here (the front-end refuses it first) and b == -1 gives 0, so INT64_MIN % -1
// never runs (undefined in C++).
template <typename T>
WICK_HOST_DEVICE T fmod_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::fmod(a, b));
  } else if constexpr (std::is_same_v<T, bool>) {
    return false;  // a % true is 0
  } else {
    return (b == T(0) || b == T(-1)) ? T(0) : static_cast<T>(a % b);
  }
}
template <typename T>
WICK_HOST_DEVICE T remainder_of(T a, T b) {
  T m = fmod_of(a, b);
  if constexpr (std::is_same_v<T, bool>) {
    return m;
  } else {
    return (m != T(0) && ((b < T(0)) != (m < T(0)))) ? static_cast<T>(m + b) : m;
  }
}
// atan2 of floats; integer operands are promoted by the front-end (never called with them).
template <typename T>
WICK_HOST_DEVICE T atan2_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(std::atan2(a, b));
  } else {
    return T(0);
  }
}

// The integer-only and float-only helpers of the special32 ops (Note [Special functions]): each
// compiles for every dtype, and the front-end sends only the dtypes named.
template <typename T>
WICK_HOST_DEVICE T bitwise_not_of(T x) {
  if constexpr (std::is_same_v<T, bool>) {
    return !x;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(~x);
  } else {
    return x;  // never called: floats are refused
  }
}
// op 0: and, 1: or, 2: xor (bool and int64).
template <int Op, typename T>
WICK_HOST_DEVICE T bitwise_of(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (Op == 0) return static_cast<T>(a & b);
    if constexpr (Op == 1) return static_cast<T>(a | b);
    if constexpr (Op == 2) return static_cast<T>(a ^ b);
  } else {
    return a;  // never called: floats are refused
  }
}
template <typename T>
WICK_HOST_DEVICE T floor_divide_any(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(floor_divide_of(a, b));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return floor_divide_int(a, b);
  } else {
    return a;  // never called: bool is refused
  }
}
// gcd (Lcm false) or lcm of int64; bool is refused, floats never reach it.
template <bool Lcm, typename T>
WICK_HOST_DEVICE T gcd_lcm(T a, T b) {
  if constexpr (std::is_same_v<T, int64_t>) {
    return Lcm ? lcm_of(a, b) : gcd_of(a, b);
  } else {
    return a;
  }
}
// frexp's mantissa (Exponent false) or its exponent as a T; both 0 exponent for inf and NaN, whose
// mantissa is themselves.
template <bool Exponent, typename T>
WICK_HOST_DEVICE T frexp_part(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    int e = 0;
    const T m = std::frexp(x, &e);
    if (!std::isfinite(x)) return Exponent ? T(0) : x;
    return Exponent ? static_cast<T>(e) : m;
  } else {
    return x;  // never called: integers are refused
  }
}
template <typename T>
WICK_HOST_DEVICE T copysign_of(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::copysign(a, b);
  } else {
    return a;  // never called: integers are promoted
  }
}

/// Unary functors: operator()(x, p0, p1) with two optional double parameters.
#define WICK_UNARY(NAME, EXPR)                                       \
  struct NAME {                                                      \
    template <typename T>                                            \
    WICK_HOST_DEVICE T operator()(T x, double p0, double p1) const { \
      (void)p0;                                                      \
      (void)p1;                                                      \
      return EXPR;                                                   \
    }                                                                \
  };
WICK_UNARY(Neg, wrapping_neg(x))
// -0.0 gives +0.0, as fabs and PyTorch.
WICK_UNARY(Abs, static_cast<T>(x < T(0) ? wrapping_neg(x) : (x == T(0) ? T(0) : x)))
WICK_UNARY(Exp, static_cast<T>(std::exp(x)))
WICK_UNARY(Log, static_cast<T>(std::log(x)))
WICK_UNARY(Sqrt, static_cast<T>(std::sqrt(x)))
WICK_UNARY(Rsqrt, static_cast<T>(T(1) / std::sqrt(x)))
WICK_UNARY(Tanh, static_cast<T>(tanh_of(x)))
WICK_UNARY(Sigmoid, static_cast<T>(sigmoid(x)))
// A NaN passes through relu, and its gradient with it, as PyTorch's threshold (x != x is false for
// integers).
WICK_UNARY(Relu, static_cast<T>((x != x || x > T(0)) ? x : T(0)))
WICK_UNARY(Gelu, static_cast<T>(gelu(x)))
WICK_UNARY(Sin, static_cast<T>(std::sin(x)))
WICK_UNARY(Cos, static_cast<T>(std::cos(x)))
WICK_UNARY(Sign, sign(x))
WICK_UNARY(Reciprocal, static_cast<T>(T(1) / x))
WICK_UNARY(Square, wrapping_mul(x, x))
WICK_UNARY(Erf, static_cast<T>(std::erf(x)))
WICK_UNARY(Log1p, static_cast<T>(std::log1p(x)))
WICK_UNARY(Expm1, static_cast<T>(std::expm1(x)))
WICK_UNARY(Floor, floor_of(x))
WICK_UNARY(PowScalar, pow_of(x, p0))
WICK_UNARY(ClampMin, static_cast<T>(x < convert<T>(p0) ? convert<T>(p0) : x))
WICK_UNARY(ClampMax, static_cast<T>(x > convert<T>(p0) ? convert<T>(p0) : x))
WICK_UNARY(LogicalNot, static_cast<T>(!x))
WICK_UNARY(Ceil, ceil_of(x))
WICK_UNARY(Round, round_of(x))
WICK_UNARY(Trunc, trunc_of(x))
WICK_UNARY(Tan, static_cast<T>(std::tan(x)))
WICK_UNARY(Asin, static_cast<T>(std::asin(x)))
WICK_UNARY(Acos, static_cast<T>(std::acos(x)))
WICK_UNARY(Atan, static_cast<T>(std::atan(x)))
WICK_UNARY(Sinh, static_cast<T>(std::sinh(x)))
WICK_UNARY(Cosh, static_cast<T>(std::cosh(x)))
WICK_UNARY(Asinh, static_cast<T>(std::asinh(x)))
WICK_UNARY(Acosh, static_cast<T>(std::acosh(x)))
WICK_UNARY(Atanh, static_cast<T>(std::atanh(x)))
// The special32 ops (Note [Special functions]); the float-only ones compute in double.
WICK_UNARY(Digamma, static_cast<T>(digamma_of(static_cast<double>(x))))
WICK_UNARY(Lgamma, static_cast<T>(lgamma_of(static_cast<double>(x))))
WICK_UNARY(Polygamma, static_cast<T>(polygamma_of(static_cast<int64_t>(p0), static_cast<double>(x))))
WICK_UNARY(Erfinv, static_cast<T>(erfinv_of(static_cast<double>(x))))
WICK_UNARY(Erfc, static_cast<T>(std::erfc(x)))
WICK_UNARY(I0, static_cast<T>(i0_of(static_cast<double>(x))))
WICK_UNARY(I1, static_cast<T>(i1_of(static_cast<double>(x))))
WICK_UNARY(Sinc, static_cast<T>(sinc_of(static_cast<double>(x))))
WICK_UNARY(Exp2, static_cast<T>(std::exp2(x)))
WICK_UNARY(BitwiseNot, bitwise_not_of(x))
WICK_UNARY(FrexpMantissa, frexp_part<false>(x))
WICK_UNARY(FrexpExponent, frexp_part<true>(x))
#undef WICK_UNARY

/// Binary functors: result type R (T, or bool for comparisons).
#define WICK_BINARY(NAME, RESULT, EXPR)                  \
  struct NAME {                                          \
    template <typename T>                                \
    using result = RESULT;                               \
    template <typename T>                                \
    WICK_HOST_DEVICE RESULT operator()(T a, T b) const { \
      return EXPR;                                       \
    }                                                    \
  };
WICK_BINARY(Add, T, wrapping_add(a, b))
WICK_BINARY(Sub, T, wrapping_sub(a, b))
WICK_BINARY(Mul, T, wrapping_mul(a, b))
WICK_BINARY(Div, T, static_cast<T>(a / b))
WICK_BINARY(Pow, T, pow_of(a, b))
WICK_BINARY(Maximum, T, (a != a) ? a : ((b != b) ? b : (a > b ? a : b)))
WICK_BINARY(Minimum, T, (a != a) ? a : ((b != b) ? b : (a < b ? a : b)))
// relu's backward: the gradient a unless the output b is 0 or less (so a NaN output passes it, as
// PyTorch's threshold_backward), in one pass, no mask.
WICK_BINARY(ReluBackward, T, static_cast<T>(!(b <= T(0)) ? a : T(0)))
// gelu's backward: the gradient a times gelu'(b) at the input b.
WICK_BINARY(GeluBackward, T, gelu_backward(a, b))
WICK_BINARY(Remainder, T, remainder_of(a, b))
WICK_BINARY(Fmod, T, fmod_of(a, b))
WICK_BINARY(Atan2, T, atan2_of(a, b))
WICK_BINARY(Eq, bool, a == b)
WICK_BINARY(Ne, bool, a != b)
WICK_BINARY(Lt, bool, a < b)
WICK_BINARY(Le, bool, a <= b)
WICK_BINARY(Gt, bool, a > b)
WICK_BINARY(Ge, bool, a >= b)
WICK_BINARY(LogicalAnd, bool, static_cast<bool>(a) && static_cast<bool>(b))
WICK_BINARY(LogicalOr, bool, static_cast<bool>(a) || static_cast<bool>(b))
// The special32 ops (Note [Special functions]).
WICK_BINARY(Logaddexp2, T, static_cast<T>(logaddexp2_of(static_cast<double>(a), static_cast<double>(b))))
WICK_BINARY(Copysign, T, copysign_of(a, b))
// heaviside: values where the input is 0, else 1 above 0 and 0 below it (NaN included).
WICK_BINARY(Heaviside, T, a == T(0) ? b : static_cast<T>(a > T(0)))
WICK_BINARY(FloorDivide, T, floor_divide_any(a, b))
WICK_BINARY(BitwiseAnd, T, (bitwise_of<0>(a, b)))
WICK_BINARY(BitwiseOr, T, (bitwise_of<1>(a, b)))
WICK_BINARY(BitwiseXor, T, (bitwise_of<2>(a, b)))
WICK_BINARY(LogicalXor, bool, static_cast<bool>(a) != static_cast<bool>(b))
WICK_BINARY(Gcd, T, (gcd_lcm<false>(a, b)))
WICK_BINARY(Lcm, T, (gcd_lcm<true>(a, b)))
#undef WICK_BINARY

}  // namespace wick::math
