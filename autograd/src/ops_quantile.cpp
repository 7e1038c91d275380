// quantile and nanquantile (functions_stats.h): PyTorch 1.13's algorithm written on the
// differentiable ops (sort, gather, lerp), so the gradient is PyTorch's, for the input and for a
// tensor q alike, and every device runs it.
//
// Note [Quantile ranks]
// The reduced slices are sorted (NaN last) and viewed as [reduced..., n]. Quantile q sits at rank
// q * (n - 1) (nanquantile: q * (c - 1) over the c non-NaN values, 0 when c is 0, so a slice of
// NaNs gives NaN); quantile puts a slice holding a NaN at rank n - 1, the NaN. lower / higher /
// nearest round the rank down / up / half to even; linear interpolates between the values at
// floor(rank) and ceil(rank) with weight rank - floor(rank) (midpoint: 0.5), by lerp's two-sided
// formula. A 1-d q adds its dim in front. Mirrored in docs/tensors.md ("Statistics").
#include <array>
#include <string>

#include "op_helpers.h"
#include "stats_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {

enum class Interp { Linear, Lower, Higher, Midpoint, Nearest };

Interp parse_interpolation(const char* op, std::string_view s) {
  static constexpr std::array<std::pair<std::string_view, Interp>, 5> modes = {{{"linear", Interp::Linear},
                                                                                {"lower", Interp::Lower},
                                                                                {"higher", Interp::Higher},
                                                                                {"midpoint", Interp::Midpoint},
                                                                                {"nearest", Interp::Nearest}}};
  for (const auto& m : modes)
    if (m.first == s) return m.second;
  WICK_FAIL("{}: interpolation must be one of linear, lower, higher, midpoint or nearest, got '{}'", op, s);
}

// Checks every argument before any work (Note [Typed errors]).
void check_quantile(const char* op, const Tensor& a, const Tensor& q) {
  WICK_CHECK(a.defined() && q.defined(), "{}: the input or q is an undefined tensor", op);
  WICK_CHECK_TYPE(a.dtype() == kFloat32 || a.dtype() == kFloat64,
                  "{}: the input must be float32 or float64, got {} of shape {}; convert it with .to(kFloat64)", op,
                  a.dtype(), shape_str(a));
  WICK_CHECK(a.numel() > 0, "{}: the input of shape {} is empty; expected at least one element", op, shape_str(a));
  WICK_CHECK(q.dim() <= 1, "{}: q must be a double, a 0-dim or a 1-d tensor, got shape {}", op, shape_str(q));
  WICK_CHECK_TYPE(q.dtype() == a.dtype(), "{}: q ({}) must have the input's dtype ({})", op, q.dtype(), a.dtype());
  native::check_same_device(op, {&a, &q});
  if (q.numel() > 0) {
    const Tensor inside = native::binary(BinaryOp::LogicalAnd, native::binary(BinaryOp::Ge, q, Scalar(0.0)),
                                         native::binary(BinaryOp::Le, q, Scalar(1.0)));
    WICK_CHECK(all(inside).item<bool>(), "{}: q values must be in the range [0, 1], got {}", op,
               fmt::join(native::to(native::reshape(q, {-1}), kCPU, kFloat64).to_vector<double>(), ", "));
  }
}

Tensor quantile_impl(const char* op, const Tensor& a, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                     std::string_view interpolation, bool ignore_nan) {
  check_quantile(op, a, q);
  const Interp mode = parse_interpolation(op, interpolation);
  std::optional<int64_t> d;
  if (dim) d = native::wrap_dim(*dim, a.dim(), op);
  // The result's shape without q's dim: the input's without (or with a 1 at) the reduced dim.
  DimVector red;
  if (d && a.dim() > 0) {
    red = DimVector(a.sizes());
    if (keepdim) {
      red[static_cast<size_t>(*d)] = 1;
    } else {
      red.erase(static_cast<size_t>(*d));
    }
  } else if (keepdim) {
    red = DimVector(static_cast<size_t>(a.dim()), 1);
  }
  // The sorted slices, viewed as [red..., n].
  Tensor sorted;
  if (!d) {
    sorted = std::get<0>(sort(flatten(a), 0, false));
  } else if (a.dim() == 0 || *d == a.dim() - 1) {
    sorted = std::get<0>(sort(a, -1, false));
  } else {
    sorted = std::get<0>(sort(transpose(unsqueeze(a, -1), *d, -1), -1, false));
  }
  const int64_t n = sorted.dim() == 0 ? 1 : sorted.size(-1);
  DimVector view_shape(red);
  view_shape.push_back(n);
  sorted = reshape(sorted, view_shape);
  const Tensor q1 = reshape(q, {-1});
  Tensor ranks;
  if (ignore_nan) {
    const Tensor valid = native::sum(native::unary(UnaryOp::LogicalNot, isnan(sorted)), {-1}, true);
    ranks = mul(q1, native::binary(BinaryOp::Sub, valid, Scalar(1)));
    ranks = masked_fill(ranks, lt(ranks, zeros_like(ranks)), Scalar(0.0));
  } else {
    const Tensor has_nan = any(isnan(sorted), -1, true);
    ranks = where(has_nan, Scalar(static_cast<double>(n - 1)), q1 * Scalar(n - 1));
  }
  if (mode == Interp::Lower) ranks = floor(ranks);
  if (mode == Interp::Higher) ranks = ceil(ranks);
  if (mode == Interp::Nearest) ranks = round(ranks);
  const Tensor below = native::to(ranks, ranks.device(), kInt64);
  Tensor values = gather(sorted, -1, below);
  if (mode == Interp::Linear || mode == Interp::Midpoint) {
    // rank - floor(rank), with floor(rank) as a floating constant (an int64 operand would give
    // sub's backward an int64 gradient to make under create_graph).
    const Tensor weights =
        mode == Interp::Midpoint ? full_like(ranks, 0.5) : sub(ranks, native::to(below, ranks.device(), ranks.dtype()));
    const Tensor above = native::to(native::unary(UnaryOp::Ceil, ranks), ranks.device(), kInt64);
    values = lerp(values, gather(sorted, -1, above), weights);
  }
  if (q.dim() == 0) return squeeze(values, -1);
  // q's dim (last) goes first.
  std::vector<int64_t> perm{values.dim() - 1};
  for (int64_t i = 0; i + 1 < values.dim(); ++i) perm.push_back(i);
  return permute(values, perm);
}

Tensor scalar_q(const char* op, const Tensor& a, double q) {
  WICK_CHECK(q >= 0.0 && q <= 1.0, "{}: q must be in the range [0, 1], got {}", op, q);
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", op);
  // An integer input gets a float64 q, so that check_quantile names the input's dtype.
  return native::scalar_tensor(q, is_floating(a.dtype()) ? a.dtype() : kFloat64, a.device());
}

}  // namespace

Tensor quantile(const Tensor& a, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                std::string_view interpolation) {
  return quantile_impl("quantile", a, q, dim, keepdim, interpolation, false);
}
Tensor quantile(const Tensor& a, double q, std::optional<int64_t> dim, bool keepdim, std::string_view interpolation) {
  return quantile_impl("quantile", a, scalar_q("quantile", a, q), dim, keepdim, interpolation, false);
}
Tensor nanquantile(const Tensor& a, const Tensor& q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl("nanquantile", a, q, dim, keepdim, interpolation, true);
}
Tensor nanquantile(const Tensor& a, double q, std::optional<int64_t> dim, bool keepdim,
                   std::string_view interpolation) {
  return quantile_impl("nanquantile", a, scalar_q("nanquantile", a, q), dim, keepdim, interpolation, true);
}

}  // namespace wick
