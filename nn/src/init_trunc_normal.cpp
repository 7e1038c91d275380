// init::trunc_normal_: the normal distribution conditioned on an interval, by the inverse CDF
// of uniform draws, on the host in float64.
#include <algorithm>
#include <cmath>
#include <vector>

#include "init_checks.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/init.h"

namespace wick::nn::init {

namespace {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2Pi = 2.50662827463100050242;

// The standard normal CDF, accurate to a relative 1e-16 in the lower tail.
double normal_cdf(double x) { return 0.5 * std::erfc(-x / kSqrt2); }

// The standard normal quantile for p in (0, 1): a rational approximation with relative error
// 1.2e-9 (P. J. Acklam's coefficients), then one Halley step on the CDF, which brings it to
// about 1e-15. Above 0.5 the step's residual uses the upper tail, 1 - p being exact there.
double normal_quantile(double p) {
  if (p <= 0) return -INFINITY;
  if (p >= 1) return INFINITY;
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549671010115949e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  constexpr double p_low = 0.02425;
  auto tail = [&](double q) {
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  };
  double x;
  if (p < p_low) {
    x = tail(std::sqrt(-2 * std::log(p)));
  } else if (p <= 1 - p_low) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    x = -tail(std::sqrt(-2 * std::log1p(-p)));
  }
  const double e = p > 0.5 ? (1 - p) - 0.5 * std::erfc(x / kSqrt2) : normal_cdf(x) - p;
  const double u = e * kSqrt2Pi * std::exp(0.5 * x * x);
  if (std::isfinite(u)) x -= u / (1 + 0.5 * x * u);
  return x;
}

// Below this CDF value the doubles lose precision (and soon underflow): the tail sampler is used.
constexpr double kTinyCdf = 1e-280;

// A standard normal conditioned on [lo, hi] from the uniform u in [0, 1), for an interval with
// lo < 0 (the caller mirrors one that lies above 0, so that the CDF works in its accurate tail).
double truncated_standard_normal(double u, double lo, double hi) {
  const double p_lo = normal_cdf(lo), p_hi = normal_cdf(hi);
  double x;
  if (p_hi < kTinyCdf) {
    // Far below the mean (hi < -36): the density exp(-x^2 / 2) on [lo, hi] is, to a relative
    // exp(-t^2 / 2) with t = hi - x of order 1 / |hi|, exponential with rate |hi| from hi down.
    const double rate = -hi;
    x = hi + std::log1p(u * std::expm1(-rate * (hi - lo))) / rate;
  } else if (p_hi > p_lo) {
    x = normal_quantile(p_lo + u * (p_hi - p_lo));
  } else {
    x = lo + u * (hi - lo);  // narrower than the CDF's resolution: the density is flat there
  }
  return std::clamp(x, lo, hi);
}

}  // namespace

Tensor trunc_normal_(Tensor t, double mean, double std, double a, double b) {
  detail::check_floating("trunc_normal_", t);
  WICK_CHECK(std::isfinite(mean) && std::isfinite(std) && std::isfinite(a) && std::isfinite(b),
             "init.trunc_normal_: mean, std, a and b must be finite, got mean={}, std={}, a={}, b={} (shape {}); "
             "for an unbounded draw use normal_",
             mean, std, a, b, detail::shape_str(t));
  WICK_CHECK(std > 0, "init.trunc_normal_: std must be positive, got {} (shape {})", std, detail::shape_str(t));
  WICK_CHECK(a < b, "init.trunc_normal_: the interval [a, b] must have a < b, got a={}, b={} (shape {})", a, b,
             detail::shape_str(t));
  if (t.numel() == 0) return t;
  NoGradGuard no_grad;
  double lo = (a - mean) / std, hi = (b - mean) / std, sign = 1;
  WICK_CHECK(std::isfinite(lo) && std::isfinite(hi),
             "init.trunc_normal_: the bounds in units of std, (a - mean) / std = {} and (b - mean) / std = {}, "
             "overflow for mean={}, std={}, a={}, b={} (shape {}); use a larger std",
             lo, hi, mean, std, a, b, detail::shape_str(t));
  if (lo >= 0) {  // mirror an interval above the mean into the lower tail
    const double l = lo;
    lo = -hi, hi = -l, sign = -1;
  }
  const Tensor uniform = native::rand(t.sizes(), kFloat64, kCPU);
  const double* u = uniform.data_ptr<double>();
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = std::clamp(mean + std * sign * truncated_standard_normal(u[i], lo, hi), a, b);
  native::copy_(t, native::from_blob_copy(out.data(), t.sizes(), kFloat64, kCPU));
  return t;
}

}  // namespace wick::nn::init
