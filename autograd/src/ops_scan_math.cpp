// logcumsumexp, cummax/cummin, renorm, nan_to_num, logit, xlogy, lerp, hypot, trapezoid/trapz.
//
// Note [Scans of differentiable ops]: logcumsumexp, cummax and cummin are log-depth
// (Hillis-Steele) scans like cumprod (ops_prod_select.cpp): step k combines each element with
// the running result 2^k places before it, through cat, narrow and where. logcumsumexp combines
// with logaddexp (max(a, b) + log1p(exp(-|a - b|)), exact to the last bits and never overflowing),
// so its gradient and double backward are those ops'. cummax/cummin scan the (value, index)
// pairs without grad, taking the later one when it is >= (<=) the earlier or NaN, and the
// earlier one when that is NaN: PyTorch's tie rule (the latest index of the running extremum,
// the latest NaN once one is seen). Their values are a gather at those indices, so the gradient
// goes there, as PyTorch's. Every device runs them with no kernel of their own.
//
// xlogy records a node with PyTorch's formulas (derivatives.yaml), written on this API so double
// backward works; the rest are compositions.
#include <cmath>
#include <limits>

#include "op_helpers.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick {

using namespace detail;

namespace {

void check_defined(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) WICK_CHECK(t->defined(), "{}: an operand is an undefined tensor", op);
}

void check_floating(const char* op, const Tensor& a) {
  WICK_CHECK_TYPE(is_floating(a.dtype()),
                  "{}: expects a floating tensor, got {} of shape {}; convert it with .to(kFloat64)", op, a.dtype(),
                  shape_str(a.sizes()));
}

// log(exp(a) + exp(b)); equal arguments (two -inf included) give a + log 2, never inf - inf.
Tensor logaddexp(const Tensor& a, const Tensor& b) {
  Tensor d = where(eq(a, b), Scalar(0.0), sub(a, b));
  return add(maximum(a, b), log1p(exp(neg(abs(d)))));
}

std::tuple<Tensor, Tensor> cum_extremum(const Tensor& a, int64_t dim, bool is_max) {
  const char* op = is_max ? "cummax" : "cummin";
  check_defined(op, {&a});
  const int64_t d = native::wrap_dim(dim, a.dim(), op);
  if (a.dim() == 0) return {clone(a), native::zeros({}, kInt64, a.device())};
  const int64_t n = a.size(d);
  DimVector line(static_cast<size_t>(a.dim()), 1);
  line[static_cast<size_t>(d)] = n;
  Tensor idx =
      native::contiguous(native::expand(native::view(native::arange(0, n, 1, kInt64, a.device()), line), a.sizes()));
  if (n > 1 && a.numel() > 0) {
    NoGradGuard no_grad;
    Tensor v = a.dtype() == kBool ? native::to(a, a.device(), kInt64) : native::alias(a);
    const bool floating = is_floating(a.dtype());
    for (int64_t k = 1; k < n; k *= 2) {
      Tensor vl = narrow(v, d, k, n - k), ve = narrow(v, d, 0, n - k);
      Tensor later = is_max ? ge(vl, ve) : le(vl, ve);
      if (floating) later = logical_or(isnan(vl), logical_and(logical_not(isnan(ve)), later));
      v = cat({narrow(v, d, 0, k), where(later, vl, ve)}, d);
      idx = cat({narrow(idx, d, 0, k), where(later, narrow(idx, d, k, n - k), narrow(idx, d, 0, n - k))}, d);
    }
  }
  return {gather(a, d, idx), idx};
}

// A Scalar operand as a 0-dim tensor next to `like`, promoted as PyTorch's wrapped numbers.
Tensor scalar_operand(Scalar s, const Tensor& like) {
  return native::scalar_tensor(s, native::result_type(like, s), like.device());
}
}  // namespace

Tensor logcumsumexp(const Tensor& a, int64_t dim) {
  check_defined("logcumsumexp", {&a});
  check_floating("logcumsumexp", a);
  const int64_t d = native::wrap_dim(dim, a.dim(), "logcumsumexp");
  if (a.dim() == 0 || a.size(d) <= 1) return clone(a);
  const int64_t n = a.size(d);
  Tensor x = a;
  for (int64_t k = 1; k < n; k *= 2)
    x = cat({narrow(x, d, 0, k), logaddexp(narrow(x, d, k, n - k), narrow(x, d, 0, n - k))}, d);
  return x;
}

std::tuple<Tensor, Tensor> cummax(const Tensor& a, int64_t dim) { return cum_extremum(a, dim, true); }
std::tuple<Tensor, Tensor> cummin(const Tensor& a, int64_t dim) { return cum_extremum(a, dim, false); }

Tensor renorm(const Tensor& a, double p, int64_t dim, double maxnorm) {
  check_defined("renorm", {&a});
  check_floating("renorm", a);
  WICK_CHECK(a.dim() > 1, "renorm: the input needs at least 2 dims, got shape {}", shape_str(a.sizes()));
  WICK_CHECK(p > 0, "renorm: p must be > 0 (a norm), got {}", p);
  WICK_CHECK(maxnorm >= 0, "renorm: maxnorm must be >= 0, got {}", maxnorm);
  const int64_t d = native::wrap_dim(dim, a.dim(), "renorm");
  DimVector others;
  for (int64_t i = 0; i < a.dim(); ++i)
    if (i != d) others.push_back(i);
  // PyTorch's formula; the factor is differentiated too (renorm_backward is its exact derivative).
  Tensor nrm = norm(a, p, others, true);
  // Unchecked (native::full): a float32 renorm with maxnorm 1e300 leaves a unchanged, as PyTorch's
  // (Note [Scalar fits dtype]).
  const Tensor max_t = native::full(nrm.sizes(), maxnorm, nrm.dtype(), nrm.device());
  Tensor factor = where(gt(nrm, max_t), div(max_t, nrm + 1e-7), Scalar(1.0));
  return mul(a, factor);
}

Tensor nan_to_num(const Tensor& a, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  check_defined("nan_to_num", {&a});
  if (!is_floating(a.dtype())) return clone(a);
  const bool f32 = a.dtype() == kFloat32;
  const double big = f32 ? std::numeric_limits<float>::max() : std::numeric_limits<double>::max();
  const double lowest = f32 ? std::numeric_limits<float>::lowest() : std::numeric_limits<double>::lowest();
  const Tensor inf = full_like(a, std::numeric_limits<double>::infinity());
  // The replacements are not checked against a's dtype, as in PyTorch: posinf 1e300 in float32 is
  // inf (Note [Scalar fits dtype]). native::scalar_tensor converts without the check.
  const auto value = [&](double v) { return native::scalar_tensor(v, a.dtype(), a.device()); };
  Tensor out = where(eq(a, inf), value(posinf.value_or(big)), a);
  out = where(eq(a, neg(inf)), value(neginf.value_or(lowest)), out);
  return where(isnan(a), value(nan.value_or(0.0)), out);
}

Tensor logit(const Tensor& a, std::optional<double> eps) {
  check_defined("logit", {&a});
  // PyTorch: log(x / (1 - x)); the clamp's gradient is 0 outside [eps, 1 - eps], as logit_backward.
  Tensor x = eps ? clamp(a, Scalar(*eps), Scalar(1.0 - *eps)) : a;
  if (!is_floating(x.dtype())) x = to(x, x.device(), kFloat32);
  return log(div(x, 1.0 - x));
}

Tensor xlogy(const Tensor& x, const Tensor& y) {
  check_defined("xlogy", {&x, &y});
  native::check_same_device("xlogy", {&x, &y});
  Tensor out;
  {
    NoGradGuard no_grad;
    Tensor prod = mul(x, log(y));
    out = where(isnan(y), Scalar(std::nan("")), where(x.eq(0), Scalar(0.0), prod));
  }
  if (needs_grad({&x, &y})) {
    const DimVector sx(x.sizes()), sy(y.sizes());
    const DType dx = x.dtype(), dy = y.dtype();
    record_function("XlogyBackward", {x, y}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor &xs = s[0], &ys = s[1];
                      Tensor gx = masked_fill(xlogy(g[0], ys), logical_and(xs.eq(0), ys.le(0)), 0.0);
                      Tensor gy = div(mul(g[0], xs), ys);
                      return {grad_to(gx, sx, dx), grad_to(gy, sy, dy)};
                    },
                    {x, y});
  }
  return out;
}
Tensor xlogy(Scalar x, const Tensor& y) {
  check_defined("xlogy", {&y});
  return xlogy(scalar_operand(x, y), y);
}
Tensor xlogy(const Tensor& x, Scalar y) {
  check_defined("xlogy", {&x});
  return xlogy(x, scalar_operand(y, x));
}

namespace {
void check_lerp(const Tensor& start, const Tensor& end, const Tensor* weight) {
  check_defined("lerp", {&start, &end});
  check_floating("lerp", start);
  WICK_CHECK_TYPE(end.dtype() == start.dtype(), "lerp: end is {} but start is {}; give them one dtype", end.dtype(),
                  start.dtype());
  if (weight) {
    WICK_CHECK(weight->defined(), "lerp: the weight is an undefined tensor");
    WICK_CHECK_TYPE(weight->dtype() == start.dtype(), "lerp: the weight is {} but start is {}; give them one dtype",
                    weight->dtype(), start.dtype());
  }
  native::check_same_device("lerp", {&start, &end, weight ? weight : &start});
  const DimVector se = native::broadcast_shapes(start.sizes(), end.sizes(), "lerp");
  if (weight) native::broadcast_shapes(se, weight->sizes(), "lerp");
}
}  // namespace

Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight) {
  check_lerp(start, end, nullptr);
  check_scalar_fits("lerp", "weight", weight, start.dtype(), start.sizes());  // Note [Scalar fits dtype]
  const double w = weight.to_double();
  Tensor diff = sub(end, start);
  return std::abs(w) < 0.5 ? add(start, diff * w) : sub(end, diff * (1.0 - w));
}

Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight) {
  check_lerp(start, end, &weight);
  Tensor diff = sub(end, start);
  Tensor small = abs(weight).lt(0.5);
  return where(small, add(start, mul(weight, diff)), sub(end, mul(diff, 1.0 - weight)));
}

Tensor hypot(const Tensor& a, const Tensor& b) {
  check_defined("hypot", {&a, &b});
  native::check_same_device("hypot", {&a, &b});
  const DType rt = native::result_type(a, b);
  WICK_CHECK_TYPE(is_floating(rt), "hypot: expects floating operands, got {} of shape {} and {} of shape {}", a.dtype(),
                  shape_str(a.sizes()), b.dtype(), shape_str(b.sizes()));
  native::broadcast_shapes(a.sizes(), b.sizes(), "hypot");
  // s * sqrt((a/s)^2 + (b/s)^2) with s = max(|a|, |b|) held constant: no overflow or underflow,
  // and the gradient a / hypot (NaN at (0, 0), as PyTorch's). An infinite operand gives inf.
  Tensor s;
  {
    NoGradGuard no_grad;
    Tensor m = to(maximum(abs(a), abs(b)), a.device(), rt);
    s = where(logical_or(m.eq(0), logical_not(isfinite(m))), Scalar(1.0), m);
  }
  Tensor r = mul(s, sqrt(add(square(div(a, s)), square(div(b, s)))));
  return where(logical_or(isinf(a), isinf(b)), Scalar(std::numeric_limits<double>::infinity()), r);
}

namespace {
// The sizes of y without dim (the result of integrating an empty dim: zeros).
Tensor zeros_without(const Tensor& y, int64_t d) {
  DimVector s(y.sizes());
  s.erase(static_cast<size_t>(d));
  return zeros(s, TensorOptions(y.dtype()).device(y.device()));
}
}  // namespace

Tensor trapezoid(const Tensor& y, Scalar dx, int64_t dim) {
  check_defined("trapezoid", {&y});
  WICK_CHECK_TYPE(y.dtype() != kBool, "trapezoid: y of shape {} is bool; convert it to a number type",
                  shape_str(y.sizes()));
  const int64_t d = native::wrap_dim(dim, y.dim(), "trapezoid");
  WICK_CHECK(y.dim() > 0, "trapezoid: y must have at least 1 dim, got a 0-dim tensor");
  if (y.size(d) == 0) return zeros_without(y, d);
  // PyTorch's formula for a constant spacing.
  return sub(sum(y, {d}), add(select(y, d, 0), select(y, d, -1)) * 0.5) * Scalar(dx.to_double());
}

Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  check_defined("trapezoid", {&y, &x});
  WICK_CHECK_TYPE(y.dtype() != kBool && x.dtype() != kBool, "trapezoid: bool y or x is not supported (got {} and {})",
                  y.dtype(), x.dtype());
  WICK_CHECK(y.dim() > 0, "trapezoid: y must have at least 1 dim, got a 0-dim tensor");
  const int64_t d = native::wrap_dim(dim, y.dim(), "trapezoid");
  if (y.size(d) == 0) return zeros_without(y, d);
  Tensor xv;
  if (x.dim() == 1) {
    WICK_CHECK(x.size(0) == y.size(d),
               "trapezoid: a 1-d x needs one value per sample: x has {} but y of shape {} has {} along dim {}",
               x.size(0), shape_str(y.sizes()), y.size(d), d);
    DimVector s(static_cast<size_t>(y.dim()), 1);
    s[static_cast<size_t>(d)] = x.size(0);
    xv = view(x, s);
  } else {
    WICK_CHECK(x.dim() <= y.dim(), "trapezoid: x of shape {} has more dims than y of shape {}", shape_str(x.sizes()),
               shape_str(y.sizes()));
    DimVector s(static_cast<size_t>(y.dim() - x.dim()), 1);
    for (int64_t v : x.sizes()) s.push_back(v);
    xv = reshape(x, s);
  }
  const int64_t n = y.size(d), m = xv.size(d);
  WICK_CHECK(m >= 1, "trapezoid: x of shape {} has no samples along dim {}", shape_str(x.sizes()), d);
  Tensor dx = sub(narrow(xv, d, 1, m - 1), narrow(xv, d, 0, m - 1));
  Tensor dy = add(narrow(y, d, 1, n - 1), narrow(y, d, 0, n - 1));
  try {
    native::broadcast_shapes(dy.sizes(), dx.sizes(), "trapezoid");
  } catch (const Error& e) {
    rethrow_with_context(
        e, fmt::format("trapezoid (y {}, x {}, dim {}): ", shape_str(y.sizes()), shape_str(x.sizes()), d));
  }
  return sum(mul(dy, dx), {d}) / 2.0;
}

Tensor trapz(const Tensor& y, double dx, int64_t dim) { return trapezoid(y, Scalar(dx), dim); }
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim) { return trapezoid(y, x, dim); }

}  // namespace wick
