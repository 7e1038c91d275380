// The special functions of functions_special.h: digamma, lgamma, polygamma, erfinv, erfc, i0,
// special_i1, mvlgamma, sinc, exp2, deg2rad, rad2deg. The math lives in the shared functors
// (Note [Special functions] in wick/core/special_math.h); each backward is PyTorch's formula
// (derivatives.yaml) written on the public API, so double backward works.
#include <cmath>
#include <vector>

#include "op_helpers.h"
#include "wick/core/checked_math.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
constexpr double kPi = 3.14159265358979323846;

void check_defined(const char* op, const Tensor& a) {
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", op);
}

// `a` in floating point: float32 for integer and bool inputs, as torch's int-to-float ops.
Tensor floating(const Tensor& a) { return is_floating(a.dtype()) ? a : to(a, a.device(), kFloat32); }

// i1'(x) = i0(x) - i1(x) / x, 1/2 at x = 0 (PyTorch's i1_backward).
Tensor i1_derivative(const Tensor& x, const Tensor& i1x) {
  const Tensor zero = eq(x, zeros_like(x));
  const Tensor safe_x = where(zero, ones_like(x), x);
  return where(zero, full_like(x, 0.5), sub(i0(x), div(i1x, safe_x)));
}
}  // namespace

Tensor digamma(const Tensor& a) {
  check_defined("digamma", a);
  return unary_fn(
      UnaryOp::Digamma, a, "DigammaBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, polygamma(1, x)); }, false);
}

Tensor lgamma(const Tensor& a) {
  check_defined("lgamma", a);
  return unary_fn(
      UnaryOp::Lgamma, a, "LgammaBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, digamma(x)); }, false);
}

Tensor polygamma(int64_t n, const Tensor& a) {
  check_defined("polygamma", a);
  WICK_CHECK(n >= 0, "polygamma(n, x): n must be 0 or more (the order of the derivative of digamma), got {}", n);
  if (n == 0) return digamma(a);
  Tensor out = distinct(native::unary(UnaryOp::Polygamma, a, static_cast<double>(n)), a);
  if (needs_grad({&a}))
    record_function("PolygammaBackward", {a}, {out},
                    [n](const VL& g, const VL& s) -> VL { return {mul(g[0], polygamma(n + 1, s[0]))}; }, {a});
  return out;
}

Tensor erfinv(const Tensor& a) {
  check_defined("erfinv", a);
  // d/dy erfinv(y) = sqrt(pi) / 2 * exp(erfinv(y)^2).
  return unary_fn(
      UnaryOp::Erfinv, a, "ErfinvBackward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return mul(g, exp(mul(o, o)).mul(0.5 * std::sqrt(kPi))); },
      true);
}

Tensor erfc(const Tensor& a) {
  check_defined("erfc", a);
  return unary_fn(
      UnaryOp::Erfc, a, "ErfcBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        return mul(g, exp(neg(mul(x, x))).mul(-2.0 / std::sqrt(kPi)));
      },
      false);
}

Tensor i0(const Tensor& a) {
  check_defined("i0", a);
  return unary_fn(
      UnaryOp::I0, a, "I0Backward",
      [](const Tensor& g, const Tensor& x, const Tensor&) { return mul(g, special_i1(x)); }, false);
}

Tensor special_i1(const Tensor& a) {
  check_defined("special_i1", a);
  return unary_fn(
      UnaryOp::I1, a, "SpecialI1Backward",
      [](const Tensor& g, const Tensor& x, const Tensor& o) { return mul(g, i1_derivative(x, o)); }, true);
}

Tensor mvlgamma(const Tensor& a, int64_t p) {
  check_defined("mvlgamma", a);
  WICK_CHECK(p >= 1, "mvlgamma: p has to be greater than or equal to 1, got {}", p);
  const Tensor x = floating(a);
  const double bound = 0.5 * static_cast<double>(p - 1);
  if (x.numel() > 0) {
    const bool ok = x.gt(bound).all().item<bool>();
    WICK_CHECK(ok, "mvlgamma: all elements must be greater than (p-1)/2 = {} (p = {}, input of shape {}, smallest {})",
               bound, p, shape_str(a), x.min().item<double>());
  }
  // sum_{j < p} lgamma(x - j/2) + p (p - 1) / 4 * ln(pi), as PyTorch computes it: one
  // lgamma over x[..., None] + [-(p-1)/2, ..., -1/2, 0] summed over the new last dim, so the work
  // is that of one tensor of numel * p elements, whatever p (an empty x costs nothing). Its
  // gradient is PyTorch's mvlgamma_backward, g * sum_j digamma(x - j/2).
  if (x.numel() == 0) return lgamma(x);  // empty, whatever p: no offsets to make
  std::vector<int64_t> shape = x.sizes().vec();
  shape.push_back(p);
  checked_nbytes(shape, x.element_size(), "mvlgamma");
  const Tensor offsets = arange(Scalar(0.5 - 0.5 * static_cast<double>(p)), Scalar(0.5), Scalar(0.5),
                                TensorOptions().dtype(x.dtype()).device(x.device()));
  const Tensor out = lgamma(x.unsqueeze(-1).add(offsets)).sum(std::vector<int64_t>{-1});
  return out.add(Scalar(0.25 * static_cast<double>(p) * static_cast<double>(p - 1) * std::log(kPi)));
}

Tensor sinc(const Tensor& a) {
  check_defined("sinc", a);
  // ((pi x cos(pi x) - sin(pi x)) / (pi x^2)) g, 0 at x = 0 (PyTorch's sinc_backward).
  return unary_fn(
      UnaryOp::Sinc, a, "SincBackward",
      [](const Tensor& g, const Tensor& x, const Tensor&) {
        const Tensor px = x.mul(kPi);
        const Tensor d = div(sub(mul(px, cos(px)), sin(px)), mul(px, x));
        return mul(g, masked_fill(d, eq(x, zeros_like(x)), 0.0));
      },
      false);
}

Tensor exp2(const Tensor& a) {
  check_defined("exp2", a);
  return unary_fn(
      UnaryOp::Exp2, a, "Exp2Backward",
      [](const Tensor& g, const Tensor&, const Tensor& o) { return mul(g, o.mul(0.693147180559945309417)); }, true);
}

Tensor deg2rad(const Tensor& a) {
  check_defined("deg2rad", a);
  return floating(a).mul(0.017453292519943295769);  // pi / 180, rounded once
}
Tensor rad2deg(const Tensor& a) {
  check_defined("rad2deg", a);
  return floating(a).mul(57.295779513082320877);  // 180 / pi, rounded once
}

}  // namespace wick
