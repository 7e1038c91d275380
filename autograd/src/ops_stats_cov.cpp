// cov, corrcoef and cumulative_trapezoid (functions_stats.h): PyTorch 1.13's formulas written on
// the differentiable ops, so the gradients (of the input, and of cov's aweights) are PyTorch's.
#include <algorithm>

#include "op_helpers.h"
#include "stats_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {

// Checks fweights or aweights against `nobs` observations of a cov input on `like`'s device.
void check_weights(const Tensor& w, const char* name, int64_t nobs, const Tensor& like) {
  WICK_CHECK(w.dim() <= 1, "cov: expects {} with at most 1 dim (one weight per observation), got shape {}", name,
             shape_str(w));
  if (std::string_view(name) == "fweights") {
    WICK_CHECK_TYPE(w.dtype() == kInt64, "cov: fweights must be int64 (frequencies), got {}", w.dtype());
  } else {
    WICK_CHECK_TYPE(is_floating(w.dtype()), "cov: aweights must be floating, got {}", w.dtype());
  }
  WICK_CHECK(w.numel() == nobs,
             "cov: expects {} with one weight per observation: {} weights for {} observations (the input's columns)",
             name, w.numel(), nobs);
  native::check_same_device("cov", {&like, &w});
  WICK_CHECK(
      nobs == 0 ||
          native::binary(BinaryOp::Ge, native::amin(native::reshape(w, {-1}), {0}, false), Scalar(0)).item<bool>(),
      "cov: {} cannot be negative", name);
}

}  // namespace

Tensor cov(const Tensor& a, int64_t correction, const Tensor& fweights, const Tensor& aweights) {
  WICK_CHECK(a.defined(), "cov: the input is an undefined tensor");
  WICK_CHECK(a.dim() <= 2,
             "cov: expects an input with at most 2 dims (variables in rows, observations in columns), got shape {}",
             shape_str(a));
  WICK_CHECK_TYPE(a.dtype() != kBool, "cov: bool inputs are not supported (shape {})", shape_str(a));
  Tensor in = a.dim() < 2 ? reshape(a, {1, -1}) : a;
  const int64_t nobs = in.size(1);
  if (fweights.defined()) check_weights(fweights, "fweights", nobs, a);
  if (aweights.defined()) check_weights(aweights, "aweights", nobs, a);
  Tensor w = fweights;
  if (aweights.defined()) w = w.defined() ? mul(w, aweights) : aweights;
  const Tensor w_sum = w.defined() ? sum(w) : native::scalar_tensor(nobs, kInt64, a.device());
  WICK_CHECK(!w.defined() || native::binary(BinaryOp::Ne, w_sum, Scalar(0)).item<bool>(),
             "cov: the weights sum to zero, so they cannot be normalised");
  const Tensor avg = div(sum(w.defined() ? mul(in, w) : in, {1}), w_sum);
  Tensor norm_factor;
  if (w.defined() && aweights.defined() && correction != 0) {
    norm_factor = sub(w_sum, div(sum(mul(w, aweights)) * Scalar(correction), w_sum));
  } else {
    norm_factor = sub(w_sum, native::scalar_tensor(correction, kInt64, a.device()));
  }
  // No degrees of freedom left: divide by 0 (inf or NaN), as PyTorch (which also warns).
  if (native::binary(BinaryOp::Le, norm_factor, Scalar(0)).item<bool>()) norm_factor = zeros_like(norm_factor);
  in = sub(in, unsqueeze(avg, 1));
  const Tensor c = mm(in, transpose(w.defined() ? mul(in, w) : in, 0, 1));
  return squeeze(div(c, norm_factor));
}

Tensor corrcoef(const Tensor& a) {
  WICK_CHECK(a.defined(), "corrcoef: the input is an undefined tensor");
  WICK_CHECK(a.dim() <= 2,
             "corrcoef: expects an input with at most 2 dims (variables in rows, observations in columns), got "
             "shape {}",
             shape_str(a));
  Tensor c = cov(a);
  if (c.dim() == 0) return div(c, c);  // one variable: 1, or NaN for a zero, inf or NaN variance
  const Tensor sd = sqrt(diag(c));
  c = div(c, reshape(sd, {-1, 1}));
  c = div(c, reshape(sd, {1, -1}));
  return clamp(c, Scalar(-1), Scalar(1));
}

namespace {

// y's dim as [0, n - 1) and [1, n), both empty for n <= 1 (PyTorch's slices).
void left_right(const Tensor& y, int64_t d, Tensor& left, Tensor& right) {
  const int64_t n = y.size(d), m = std::max<int64_t>(n - 1, 0);
  left = narrow(y, d, 0, m);
  right = narrow(y, d, std::min<int64_t>(n, 1), m);
}

int64_t check_y(const Tensor& y, int64_t dim) {
  WICK_CHECK(y.defined(), "cumulative_trapezoid: y is an undefined tensor");
  WICK_CHECK_TYPE(y.dtype() != kBool, "cumulative_trapezoid: y of shape {} is bool; convert it to a number type",
                  shape_str(y));
  WICK_CHECK_INDEX(y.dim() > 0, "cumulative_trapezoid: y must have at least 1 dim, got a 0-dim tensor");
  return native::wrap_dim(dim, y.dim(), "cumulative_trapezoid");
}

}  // namespace

Tensor cumulative_trapezoid(const Tensor& y, Scalar dx, int64_t dim) {
  const int64_t d = check_y(y, dim);
  WICK_CHECK_TYPE(dx.dtype() != kBool, "cumulative_trapezoid: dx must be a real number, got a bool");
  Tensor left, right;
  left_right(y, d, left, right);
  return cumsum(add(left, right) * Scalar(dx.to_double() / 2.0), d);
}

Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim) {
  const int64_t d = check_y(y, dim);
  WICK_CHECK(x.defined(), "cumulative_trapezoid: x is an undefined tensor");
  WICK_CHECK_TYPE(x.dtype() != kBool, "cumulative_trapezoid: x of shape {} is bool; convert it to a number type",
                  shape_str(x));
  Tensor xv;
  if (x.dim() == 1) {
    WICK_CHECK(x.size(0) == y.size(d),
               "cumulative_trapezoid: a 1-d x needs one value per sample: x has {} but y of shape {} has {} along "
               "dim {}",
               x.size(0), shape_str(y), y.size(d), d);
    DimVector s(static_cast<size_t>(y.dim()), 1);
    s[static_cast<size_t>(d)] = x.size(0);
    xv = view(x, s);
  } else {
    WICK_CHECK(x.dim() <= y.dim(), "cumulative_trapezoid: x of shape {} has more dims than y of shape {}", shape_str(x),
               shape_str(y));
    DimVector s(static_cast<size_t>(y.dim() - x.dim()), 1);
    for (int64_t v : x.sizes()) s.push_back(v);
    xv = reshape(x, s);
  }
  Tensor left, right, x_left, x_right;
  left_right(y, d, left, right);
  left_right(xv, d, x_left, x_right);
  const Tensor dx = sub(x_right, x_left);
  try {
    native::broadcast_shapes(left.sizes(), dx.sizes(), "cumulative_trapezoid");
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("cumulative_trapezoid (y {}, x {}, dim {}): ", shape_str(y), shape_str(x), d));
  }
  return cumsum(mul(add(left, right), dx), d) / Scalar(2.0);
}

}  // namespace wick
