#pragma once
// Special functions of the elementwise ops (digamma, polygamma, lgamma, erfinv, i0, i1, sinc),
// written once for the CPU loops and the CUDA kernels (Note [Math written once], docs/cuda.md).
//
// Note [Special functions]
// Every function here computes in double (float32 inputs are widened and the result rounded
// once), with the textbook method stated at each: recurrence to a large argument and then an
// asymptotic series (digamma, Hurwitz zeta for polygamma), reflection for negative arguments,
// power series and asymptotic expansions (i0, i1), an initial approximation refined by Halley's
// method (erfinv). Their edge values follow PyTorch 1.13: digamma(+-0) = -+inf, NaN at the
// negative integers; lgamma = +inf at the poles; polygamma(n >= 2) +-inf at the poles;
// erfinv(+-1) = +-inf and NaN outside [-1, 1]; i0(+-inf) and i1(+-inf) are NaN (PyTorch's
// exp(x) / sqrt(x) form gives inf / inf, and so does ours); polygamma(n >= 2) is NaN at +inf and
// +-inf at -inf, as PyTorch's zeta makes them. Kept difference: polygamma(1, x) at a
// negative integer is +inf (a pole) where PyTorch's trigamma gives a large finite number.
// lgamma uses lgamma_r on the host: glibc's lgamma writes the global `signgam`, a data race
// between the CPU kernels' threads.
#include <cmath>
#include <cstdint>

#include "wick/core/host_device.h"

namespace wick::math {

inline constexpr double kPiD = 3.14159265358979323846;

/// ln |Gamma(x)|: CUDA's lgamma on the device, the reentrant lgamma_r on the host.
WICK_HOST_DEVICE double lgamma_of(double x) {
#if defined(__CUDA_ARCH__)
  return ::lgamma(x);
#else
  int sign = 0;
  return ::lgamma_r(x, &sign);
#endif
}

/// digamma for x > 0 (or NaN): psi(x) = psi(x + n) - sum 1 / (x + k), then the asymptotic series
/// psi(y) ~ ln y - 1/(2y) - sum B_2k / (2k y^2k) at y >= 10 (eight terms: below 1e-17 there).
WICK_HOST_DEVICE double digamma_positive(double x) {
  double shift = 0;
  while (x < 10) {
    shift += 1 / x;
    x += 1;
  }
  const double z = 1 / (x * x);
  // B_2k / (2k) for k = 1..8, nested in z.
  const double series =
      z * (1.0 / 12 -
           z * (1.0 / 120 -
                z * (1.0 / 252 -
                     z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12 - z * 3617.0 / 8160)))))));
  return std::log(x) - 0.5 / x - series - shift;
}

/// digamma(x) = psi(x); negative x by reflection, psi(x) = psi(1 - x) - pi / tan(pi x), with the
/// tangent taken of the fractional part (exact) so that pi x's rounding does not enter.
WICK_HOST_DEVICE double digamma_of(double x) {
  if (x == 0) return std::copysign(HUGE_VAL, -x);
  if (x < 0) {
    if (x == std::trunc(x)) return NAN;  // the poles, -inf included
    const double r = x - std::trunc(x);
    return digamma_positive(1 - x) - kPiD / std::tan(kPiD * r);
  }
  return digamma_positive(x);
}

/// zeta(s, q) for q >= -64 (or NaN): the terms summed directly until q + k >= 20 + s (at most
/// 84 + s of them), then Euler-Maclaurin's tail with B_2 .. B_24; a pole (q a non-positive
/// integer) gives +inf through 0^-s.
WICK_HOST_DEVICE double hurwitz_zeta_direct(double s, double q) {
  const double bound = 20 + s;
  double sum = 0;
  double a = q == 0 ? 0.0 : q;  // -0 is the pole at +0 (0^-s is +inf there, not -inf)
  while (a < bound) {
    sum += std::pow(a, -s);
    a += 1;
  }
  // Tail: a^(1-s)/(s-1) + a^-s/2 + sum_j B_2j/(2j)! * s(s+1)...(s+2j-2) * a^(-s-2j+1).
  const double B[12] = {1.0 / 6, -1.0 / 30,     1.0 / 42,      -1.0 / 30,       5.0 / 66,       -691.0 / 2730,
                        7.0 / 6, -3617.0 / 510, 43867.0 / 798, -174611.0 / 330, 854513.0 / 138, -236364091.0 / 2730};
  const double as = std::pow(a, -s);
  double tail = std::pow(a, 1 - s) / (s - 1) + 0.5 * as;
  double factor = s * as / a;  // s * a^(-s-1) / 1!: the running rising factorial over (2j-1)! and a power
  double fact = 2;             // (2j)!
  for (int j = 1; j <= 12; ++j) {
    const double term = B[j - 1] / fact * factor;
    tail += term;
    if (std::fabs(term) <= 1e-17 * std::fabs(sum + tail)) break;
    factor *= (s + 2 * j - 1) * (s + 2 * j) / (a * a);
    fact *= (2 * j + 1) * (2 * j + 2);
  }
  return sum + tail;
}

/// The Hurwitz zeta function zeta(s, q) = sum_k (q + k)^-s for an integral s >= 2. A pole (q a
/// non-positive integer, -inf included) is +inf, as PyTorch's. Below q = -64, q = f - N (f in
/// (0, 1), exact there) splits into its N negative terms, (-1)^s (zeta(s, 1 - f) -
/// zeta(s, N + 1 - f)), and zeta(s, f): a bounded amount of work for any q, where summing term by
/// term would take |q| steps (PyTorch's does: seconds at q = -1e8 + 0.5; and beyond 2^53 adding 1
/// to q never moves it).
WICK_HOST_DEVICE double hurwitz_zeta(double s, double q) {
  if (!(q < -64)) return hurwitz_zeta_direct(s, q);  // NaN included
  const double whole = std::floor(q);
  if (whole == q) return HUGE_VAL;  // a pole
  const double f = q - whole;       // exact (Sterbenz: q and floor(q) are within a factor 2)
  // Odd s: zeta(s, f) - zeta(s, 1 - f) + zeta(s, N + 1 - f), the first two (which cancel at f = 1/2)
  // subtracted before the small third is added, so that it keeps its digits.
  const double near = hurwitz_zeta_direct(s, f), mirrored = hurwitz_zeta_direct(s, 1 - f);
  const double far = hurwitz_zeta_direct(s, -whole + 1 - f);
  return std::fmod(s, 2.0) != 0 ? (near - mirrored) + far : (near + mirrored) - far;
}

/// trigamma psi'(x); negative x by reflection, psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x) (sine
/// of the fractional part), so a negative integer gives +inf.
WICK_HOST_DEVICE double trigamma_of(double x) {
  if (x < 0) {
    const double r = x - std::trunc(x);
    const double s = std::sin(kPiD * r);
    return kPiD * kPiD / (s * s) - hurwitz_zeta(2, 1 - x);
  }
  return hurwitz_zeta(2, x);
}

/// polygamma(n, x) = psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1; digamma for n = 0.
/// The front-end refuses a negative n.
WICK_HOST_DEVICE double polygamma_of(int64_t n, double x) {
  if (n == 0) return digamma_of(x);
  if (n == 1) return trigamma_of(x);
  if (x == HUGE_VAL) return NAN;  // PyTorch's zeta gives NaN at +inf (trigamma gives 0)
  const double factorial = std::exp(lgamma_of(static_cast<double>(n) + 1));
  return ((n % 2) ? 1.0 : -1.0) * factorial * hurwitz_zeta(static_cast<double>(n) + 1, x);
}

/// erfinv(y): Winitzki's closed-form approximation (relative error below 2e-3), then Halley's
/// method on erf(x) - y (for |y| <= 0.5) or erfc(x) - (1 - |y|) (beyond, where 1 - |y| is exact
/// and erfc keeps its relative accuracy in the tails) until the step is below 1e-16 |x|.
WICK_HOST_DEVICE double erfinv_of(double y) {
  const double ay = std::fabs(y);
  if (!(ay <= 1)) return NAN;
  if (ay == 1) return std::copysign(HUGE_VAL, y);
  if (y == 0) return y;  // keeps -0.0
  const double l = std::log((1 - ay) * (1 + ay));
  const double a = 0.147;
  const double t = 2 / (kPiD * a) + 0.5 * l;
  double x = std::sqrt(std::sqrt(t * t - l / a) - t);
  const double two_over_sqrt_pi = 1.12837916709551257390;
  for (int it = 0; it < 8; ++it) {
    const double d = two_over_sqrt_pi * std::exp(-x * x);  // erf'(x)
    const double f = ay <= 0.5 ? std::erf(x) - ay : (1 - ay) - std::erfc(x);
    const double u = f / d;
    const double step = u / (1 + x * u);
    x -= step;
    if (std::fabs(step) <= 1e-16 * x) break;
  }
  return std::copysign(x, y);
}

/// The modified Bessel function of the first kind of order 0 or 1 at x >= 0: the power series
/// sum (x/2)^(2k+nu) / (k! (k+nu)!) up to x = 20 (positive terms, no cancellation), the
/// asymptotic expansion e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k beyond (its smallest
/// term is about e^-2x).
WICK_HOST_DEVICE double bessel_i01(int nu, double x) {
  if (x <= 20) {
    const double q = 0.25 * x * x;
    double term = nu == 0 ? 1.0 : 0.5 * x;
    double sum = term;
    for (int k = 1; k < 80; ++k) {
      term *= q / (static_cast<double>(k) * (k + nu));
      sum += term;
      if (term <= 1e-17 * sum) break;
    }
    return sum;
  }
  const double mu = 4.0 * nu * nu;
  double term = 1, sum = 1;
  for (int k = 1; k < 60; ++k) {
    const double odd = 2.0 * k - 1;
    term *= -(mu - odd * odd) / (8.0 * k * x);
    sum += term;
    if (std::fabs(term) <= 1e-17 * std::fabs(sum)) break;
  }
  return std::exp(x) / std::sqrt(2 * kPiD * x) * sum;
}
WICK_HOST_DEVICE double i0_of(double x) { return bessel_i01(0, std::fabs(x)); }
WICK_HOST_DEVICE double i1_of(double x) { return std::copysign(bessel_i01(1, std::fabs(x)), x); }

/// sin(pi x) / (pi x), 1 at 0.
WICK_HOST_DEVICE double sinc_of(double x) {
  if (x == 0) return 1;
  const double px = kPiD * x;
  return std::sin(px) / px;
}

/// log2(2^a + 2^b) = max + log2(1 + 2^-|a - b|); two equal infinities give themselves.
WICK_HOST_DEVICE double logaddexp2_of(double a, double b) {
  if (std::isinf(a) && a == b) return a;
  const double m = a > b ? a : b;
  return m + std::log1p(std::exp2(-std::fabs(a - b))) * 1.44269504088896340736;
}

/// Python's float floor division (a - fmod(a, b)) / b, corrected to the floor and rounded to the
/// nearest integer; a zero quotient keeps the sign of a / b, a zero divisor gives a / b.
WICK_HOST_DEVICE double floor_divide_of(double a, double b) {
  if (b == 0) return a / b;
  const double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(0.0, a / b);
  double fl = std::floor(div);
  if (div - fl > 0.5) fl += 1;
  return fl;
}

/// gcd of |a| and |b| (gcd(0, 0) = 0), in uint64 so that INT64_MIN is no undefined behaviour.
WICK_HOST_DEVICE int64_t gcd_of(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? uint64_t(0) - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? uint64_t(0) - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  while (x != 0) {
    const uint64_t r = y % x;
    y = x;
    x = r;
  }
  return static_cast<int64_t>(y);
}
/// |a / gcd * b| (0 when both are 0), wrapping as int64 multiplication does.
WICK_HOST_DEVICE int64_t lcm_of(int64_t a, int64_t b) {
  const int64_t g = gcd_of(a, b);
  if (g == 0) return 0;
  const uint64_t ua = a < 0 ? uint64_t(0) - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  const uint64_t ub = b < 0 ? uint64_t(0) - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  return static_cast<int64_t>(ua / static_cast<uint64_t>(g) * ub);
}

/// Floor division of int64 (b != 0: the front-end refuses a zero divisor); INT64_MIN / -1 wraps.
WICK_HOST_DEVICE int64_t floor_divide_int(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<int64_t>(uint64_t(0) - static_cast<uint64_t>(a));
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace wick::math
