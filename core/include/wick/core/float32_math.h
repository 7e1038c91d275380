#pragma once
// exp, erf, tanh and sigmoid for float32 in plain float arithmetic, for the elementwise loops
// that call them on every element (gelu and its backward, softmax, the LSTM's gates).
//
// Note [Vectorisable float32 exp and erf]
// libm's expf, erff and tanhf are calls GCC cannot vectorise (without -ffast-math, whose vector
// variants differ from the scalar ones), so gelu, one erff per element and another erff and an
// expf in its backward, ran at 4-6.5 ns per element, a quarter of a transformer step, and an
// LSTM's tanh and sigmoid gates 40% of its step. These functions use only adds, multiplies,
// divides, compares and bit operations, so a loop over them vectorises in every clone of Note
// [CPU multiversioning] and gives the same bits in each (no FMA, no reassociation; the kernel
// sources are built with -fno-trapping-math so that GCC may evaluate both sides of a select);
// the CUDA kernels compile the same code. float32 gelu, tanh, sigmoid and the softmax rows use
// them; float64 keeps libm, and so do the exp, erf, log... ops themselves. The coefficients were
// fitted for wick by least squares on Chebyshev nodes in double precision and rounded to float.
// Measured over every float in range against double precision (a sample of every 257th float in
// tests/core/float32_math_test.cpp):
//  - exp_f32: within 1.5 ulp on [-87.3, 88.7]; +inf above 88.72, 0 below -87.33 (where expf
//    returns subnormals, below 1.2e-38), NaN for NaN. x = n ln2 + r with |r| <= ln2/2 (ln2 split
//    in two so that n ln2 is exact), e^r = 1 + r + r^2 q(r) with q of degree 4, times 2^n built
//    from its bits.
//  - erf_f32: within 3 ulp, odd, |erf| <= 1, erf(+-inf) = +-1, NaN for NaN. |x| <= 1: x P(x^2)
//    with P of degree 6; 1 < |x| < 4: a degree-12 polynomial in |x| - 2.5; |x| >= 4: 1 (erf(4)
//    rounds to 1 in float32).
//  - tanh_f32: within 1.4 ulp, odd (-0 kept). |x| < 0.625: x + x^3 P(x^2), P of degree 4;
//    else 1 - 2 / (e^(2|x|) + 1).
//  - sigmoid_f32: within 2.6 ulp; e = e^-|x|, then 1 / (1 + e) or e / (1 + e).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "wick/core/host_device.h"

namespace wick::math {

WICK_HOST_DEVICE uint32_t float_bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

WICK_HOST_DEVICE float bits_float(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

/// e^x for float32 (Note [Vectorisable float32 exp and erf]).
WICK_HOST_DEVICE float exp_f32(float x) {
  constexpr float kHi = 88.72283f, kLo = -87.33654f;    // below ln(FLT_MAX); ln(FLT_MIN)
  const float c = x > kHi ? kHi : (x < kLo ? kLo : x);  // NaN passes through both compares
  // n = round(c / ln2), by adding and removing 1.5 * 2^23: the sum's low mantissa bits hold n.
  constexpr float kShift = 12582912.0f;
  const float shifted = c * 1.44269504f + kShift;
  const float n = shifted - kShift;
  const uint32_t n_bits = float_bits(shifted) - float_bits(kShift);  // n, two's complement
  float r = c - n * 0.693359375f;                                    // ln2's high part: n * it is exact for |n| <= 128
  r = r - n * -2.12194440e-4f;                                       // its low part
  float q = 1.393369283e-03f;
  q = q * r + 8.363175206e-03f;
  q = q * r + 4.166646302e-02f;
  q = q * r + 1.666657627e-01f;
  q = q * r + 0.5f;
  const float p = 1.0f + r + (r * r) * q;
  // 2^n as 2^h * 2^(n - h), h = n / 2 (rounded down): both stay normal for -126 <= n <= 128.
  const int32_t ni = static_cast<int32_t>(n_bits);
  const int32_t h = ni >> 1;
  const float y =
      p * bits_float(static_cast<uint32_t>(h + 127) << 23) * bits_float(static_cast<uint32_t>(ni - h + 127) << 23);
  return x > kHi ? bits_float(0x7f800000u) : (x < kLo ? 0.0f : y);
}

/// erf(x) for float32 (Note [Vectorisable float32 exp and erf]).
WICK_HOST_DEVICE float erf_f32(float x) {
  const float a = x < 0.0f ? -x : x;
  const float z = a * a;
  float s = 7.933493907e-05f;  // |x| <= 1: x P(x^2)
  s = s * z + -8.034846396e-04f;
  s = s * z + 5.191218574e-03f;
  s = s * z + -2.685539983e-02f;
  s = s * z + 1.128362566e-01f;
  s = s * z + -3.761262894e-01f;
  s = s * z + 1.128379226e+00f;
  s = s * a;
  const float t = (a < 4.0f ? a : 4.0f) - 2.5f;  // 1 < |x| < 4
  float l = -8.709440408e-06f;
  l = l * t + 2.140600918e-05f;
  l = l * t + 5.941381096e-05f;
  l = l * t + -2.808719291e-04f;
  l = l * t + 2.919994295e-04f;
  l = l * t + 5.742026842e-04f;
  l = l * t + -2.823754214e-03f;
  l = l * t + 6.100025494e-03f;
  l = l * t + -8.612779900e-03f;
  l = l * t + 8.354324847e-03f;
  l = l * t + -5.447070114e-03f;
  l = l * t + 2.177979331e-03f;
  l = l * t + 9.995930791e-01f;
  l = l < 1.0f ? l : 1.0f;
  const float m = a <= 1.0f ? s : (a < 4.0f ? l : 1.0f);  // NaN: a <= 1 and a < 4 are false
  const float r = a != a ? a : m;
  return x < 0.0f ? -r : r;
}

/// tanh(x) for float32 (Note [Vectorisable float32 exp and erf]).
WICK_HOST_DEVICE float tanh_f32(float x) {
  const float a = x < 0.0f ? -x : x;
  const float z = a * a;
  float p = -6.155199371e-03f;  // |x| < 0.625: x + x^3 P(x^2)
  p = p * z + 2.104568854e-02f;
  p = p * z + -5.386391655e-02f;
  p = p * z + 1.333288997e-01f;
  p = p * z + -3.333333135e-01f;
  const float small = a + (a * z) * p;
  const float large = 1.0f - 2.0f / (exp_f32(2.0f * a) + 1.0f);      // 1 once exp overflows
  const float r = a < 0.625f ? small : large;                        // NaN: large is NaN too
  return bits_float(float_bits(r) | (float_bits(x) & 0x80000000u));  // x's sign, -0 included
}

/// 1 / (1 + e^-x) for float32, never exp of a large positive number.
WICK_HOST_DEVICE float sigmoid_f32(float x) {
  const float e = exp_f32(x < 0.0f ? x : -x);  // e^-|x|
  return x < 0.0f ? e / (1.0f + e) : 1.0f / (1.0f + e);
}

/// exp, erf and tanh for a floating T: float32 takes the functions above, other types libm's.
template <typename T>
WICK_HOST_DEVICE T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>)
    return exp_f32(x);
  else
    return std::exp(x);
}
template <typename T>
WICK_HOST_DEVICE T erf_of(T x) {
  if constexpr (std::is_same_v<T, float>)
    return erf_f32(x);
  else
    return std::erf(x);
}
template <typename T>
WICK_HOST_DEVICE T tanh_of(T x) {
  if constexpr (std::is_same_v<T, float>)
    return tanh_f32(x);
  else
    return std::tanh(x);
}

}  // namespace wick::math
