#pragma once
// Part of the op API of functions.h (which includes this file): special functions, the
// remaining elementwise arithmetic of PyTorch 1.13, and the bitwise and integer ops
// (docs/tensors.md, "Special functions, bitwise and integer ops").
//
// As torch.*: integer and bool inputs of the floating ops give float32, operands broadcast and
// promote, and the gradients are PyTorch's formulas written on this API (so double backward
// works). The in-place forms are free functions (`wick::digamma_(t)` where LibTorch writes
// `t.digamma_()`: tensor.h is at its line budget); each writes the out-of-place result back once
// every check has passed (Note [In-place ops]).
#include <cstdint>
#include <tuple>

#include "wick/core/tensor.h"

namespace wick {

// ---- special functions (Note [Special functions] in wick/core/special_math.h) ----
/// psi(x) = d/dx ln Gamma(x): -inf at +0, +inf at -0, NaN at the negative integers.
Tensor digamma(const Tensor& a);
/// ln |Gamma(x)|: +inf at the poles (0 and the negative integers).
Tensor lgamma(const Tensor& a);
/// The n-th derivative of digamma (n >= 0, else a ValueError); gradient polygamma(n + 1, x).
Tensor polygamma(int64_t n, const Tensor& a);
/// The inverse of erf on [-1, 1]: +-inf at +-1, NaN outside.
Tensor erfinv(const Tensor& a);
/// 1 - erf(x), accurate where erf(x) is near 1.
Tensor erfc(const Tensor& a);
/// The modified Bessel function of the first kind of order 0; gradient special_i1(x).
Tensor i0(const Tensor& a);
/// The modified Bessel function of the first kind of order 1 (torch.special.i1).
Tensor special_i1(const Tensor& a);
/// The multivariate log-gamma of dimension p >= 1: sum_j lgamma(x - j/2) + p(p-1)/4 ln pi; every
/// element must exceed (p - 1) / 2 (a ValueError names the smallest otherwise).
Tensor mvlgamma(const Tensor& a, int64_t p);
/// sin(pi x) / (pi x), 1 at 0.
Tensor sinc(const Tensor& a);
/// 2^x.
Tensor exp2(const Tensor& a);
/// log2(2^a + 2^b) without overflow; floating operands only.
Tensor logaddexp2(const Tensor& a, const Tensor& b);
/// |a| with the sign of b (-0.0 and a NaN's sign bit count); gradient a's only.
Tensor copysign(const Tensor& a, const Tensor& b);
Tensor copysign(const Tensor& a, Scalar b);
/// 0 below 0, `values` at 0, 1 above (NaN gives 0); both of one dtype, as PyTorch requires. Not
/// differentiable: backward raises NotImplementedError, as PyTorch's.
Tensor heaviside(const Tensor& a, const Tensor& values);
/// Whether the sign bit is set (bool): true for -0.0 and a negative NaN.
Tensor signbit(const Tensor& a);
/// x * pi / 180 and x * 180 / pi.
Tensor deg2rad(const Tensor& a);
Tensor rad2deg(const Tensor& a);
/// pow computed in float64 (complex aside, every operand is converted to float64 first).
Tensor float_power(const Tensor& a, const Tensor& exponent);
Tensor float_power(const Tensor& a, Scalar exponent);
Tensor float_power(Scalar a, const Tensor& exponent);
/// div under its other name.
Tensor true_divide(const Tensor& a, const Tensor& b);
Tensor true_divide(const Tensor& a, Scalar b);
/// a / b rounded toward -inf (PyTorch 1.13's floor_divide; integers stay integers, a zero integer
/// divisor is a ValueError). Not differentiable: backward raises NotImplementedError.
Tensor floor_divide(const Tensor& a, const Tensor& b);
Tensor floor_divide(const Tensor& a, Scalar b);
/// (mantissa, exponent) with a = mantissa * 2^exponent and |mantissa| in [0.5, 1); the exponent is
/// int64 (PyTorch's int32: wick has no int32). Floating inputs only.
std::tuple<Tensor, Tensor> frexp(const Tensor& a);
/// a * 2^b.
Tensor ldexp(const Tensor& a, const Tensor& b);

// ---- bitwise and integer ops (int64 and bool; a TypeError for floats) ----
Tensor bitwise_and(const Tensor& a, const Tensor& b);
Tensor bitwise_and(const Tensor& a, Scalar b);
Tensor bitwise_or(const Tensor& a, const Tensor& b);
Tensor bitwise_or(const Tensor& a, Scalar b);
Tensor bitwise_xor(const Tensor& a, const Tensor& b);
Tensor bitwise_xor(const Tensor& a, Scalar b);
Tensor bitwise_not(const Tensor& a);
/// Exactly one of a and b nonzero (bool result; any dtypes).
Tensor logical_xor(const Tensor& a, const Tensor& b);
/// The greatest common divisor of |a| and |b| (gcd(0, 0) = 0); int64 only.
Tensor gcd(const Tensor& a, const Tensor& b);
/// The least common multiple |a b| / gcd (0 when either is 0); int64 only.
Tensor lcm(const Tensor& a, const Tensor& b);

// ---- in place: the out-of-place result written into `a` (its shape, a dtype it can hold) ----
Tensor& digamma_(Tensor& a);
Tensor& lgamma_(Tensor& a);
Tensor& polygamma_(Tensor& a, int64_t n);
Tensor& erfinv_(Tensor& a);
Tensor& erfc_(Tensor& a);
Tensor& i0_(Tensor& a);
Tensor& mvlgamma_(Tensor& a, int64_t p);
Tensor& sinc_(Tensor& a);
Tensor& exp2_(Tensor& a);
Tensor& copysign_(Tensor& a, const Tensor& b);
Tensor& heaviside_(Tensor& a, const Tensor& values);
Tensor& deg2rad_(Tensor& a);
Tensor& rad2deg_(Tensor& a);
/// `a` must be float64 (a TypeError otherwise, as PyTorch's).
Tensor& float_power_(Tensor& a, const Tensor& exponent);
Tensor& float_power_(Tensor& a, Scalar exponent);
Tensor& true_divide_(Tensor& a, const Tensor& b);
Tensor& floor_divide_(Tensor& a, const Tensor& b);
Tensor& ldexp_(Tensor& a, const Tensor& b);
Tensor& bitwise_and_(Tensor& a, const Tensor& b);
Tensor& bitwise_or_(Tensor& a, const Tensor& b);
Tensor& bitwise_xor_(Tensor& a, const Tensor& b);
Tensor& bitwise_not_(Tensor& a);
Tensor& logical_xor_(Tensor& a, const Tensor& b);
Tensor& gcd_(Tensor& a, const Tensor& b);
Tensor& lcm_(Tensor& a, const Tensor& b);

}  // namespace wick
