// nansum, nanmean, nanmedian, std_mean, var_mean, aminmax and count_nonzero (functions_stats.h).
//
// Note [Statistics gradients]
// The statistics ops (this file, ops_quantile.cpp, ops_stats_cov.cpp) are PyTorch 1.13's own
// composites written on the differentiable ops, so their gradients are PyTorch's and every device
// runs them with no kernel of their own. Three record a node instead: nansum (PyTorch's backward
// g * (x is not NaN), a product: an infinite g gives NaN at the NaNs, as there), nanmedian()
// (the gradient shared evenly among the elements equal to the result, PyTorch's
// evenly_distribute_backward) and aminmax (no derivative in PyTorch 1.13: backward raises
// NotImplementedError). Mirrored in docs/tensors.md ("Statistics").
#include <limits>
#include <vector>

#include "op_helpers.h"
#include "stats_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace detail {

void check_reduce_dims(const char* op, const Tensor& a, IntArrayRef dims) {
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", op);
  std::vector<bool> seen(static_cast<size_t>(a.dim()), false);
  for (int64_t d : dims) {
    const int64_t w = native::wrap_dim(d, a.dim(), op);
    if (a.dim() == 0) continue;
    WICK_CHECK(!seen[static_cast<size_t>(w)], "{}: dim {} appears more than once in [{}] (input of shape {})", op, w,
               fmt::join(dims, ", "), shape_str(a));
    seen[static_cast<size_t>(w)] = true;
  }
}

}  // namespace detail

Tensor nansum(const Tensor& a, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  check_reduce_dims("nansum", a, dims);
  Tensor x = a;
  if (dtype && *dtype != a.dtype()) {
    WICK_CHECK_TYPE(*dtype != kBool && (is_floating(*dtype) || !is_floating(a.dtype())),
                    "nansum: cannot sum a {} input of shape {} in {}; pass dtype kInt64 for integer inputs, or a "
                    "floating dtype",
                    a.dtype(), shape_str(a), *dtype);
    x = to(a, a.device(), *dtype);
  }
  Tensor out = native::sum(
      is_floating(x.dtype()) ? native::where(isnan(x), native::zeros({}, x.dtype(), x.device()), x) : x, dims, keepdim);
  if (needs_grad({&x})) {
    // PyTorch's nansum backward: g * (x is not NaN), a product, so an infinite g (nanmean of a
    // slice of NaNs) gives NaN at the NaNs, as there.
    DimVector shape(x.sizes()), kept(x.sizes());
    if (dims.empty()) {
      for (auto& k : kept) k = 1;
    } else if (x.dim() > 0) {
      for (int64_t d : dims) kept[static_cast<size_t>(native::wrap_dim(d, x.dim(), "nansum"))] = 1;
    }
    record_function("NansumBackward", {x}, {out},
                    [shape, kept](const VL& g, const VL& s) -> VL {
                      const Tensor keep =
                          native::to(native::unary(UnaryOp::LogicalNot, isnan(s[0])), s[0].device(), s[0].dtype());
                      return {mul(expand(reshape(g[0], kept), shape), keep)};
                    },
                    {x});
  }
  return out;
}

Tensor nanmean(const Tensor& a, IntArrayRef dims, bool keepdim, std::optional<DType> dtype) {
  check_reduce_dims("nanmean", a, dims);
  WICK_CHECK_TYPE(is_floating(a.dtype()),
                  "nanmean: expects a floating input, got {} of shape {}; convert it with .to(kFloat64)", a.dtype(),
                  shape_str(a));
  WICK_CHECK_TYPE(!dtype || is_floating(*dtype), "nanmean: dtype must be floating, got {}", *dtype);
  // PyTorch's composite: nansum over the int64 count of non-NaN elements (0 / 0 = NaN for none).
  const Tensor count = native::sum(native::unary(UnaryOp::LogicalNot, isnan(a)), dims, keepdim);
  return div(nansum(a, dims, keepdim, dtype), count);
}

std::tuple<Tensor, Tensor> nanmedian(const Tensor& a, int64_t dim, bool keepdim) {
  WICK_CHECK(a.defined(), "nanmedian: the input is an undefined tensor");
  WICK_CHECK_TYPE(a.dtype() != kBool, "nanmedian: bool inputs are not supported (shape {}); convert with .to(kInt64)",
                  shape_str(a));
  const int64_t d = native::wrap_dim(dim, a.dim(), "nanmedian");
  const int64_t n = a.dim() == 0 ? 1 : a.size(d);
  WICK_CHECK_INDEX(n > 0, "nanmedian: dim {} of shape {} is empty; expected at least one element along it", d,
                   shape_str(a));
  if (a.dim() == 0) return {clone(a), native::zeros({}, kInt64, a.device())};
  if (!is_floating(a.dtype())) return median(a, d, keepdim);  // no NaN to skip
  // The stable ascending order puts NaNs last; the lower median of the c non-NaN values sits at
  // position (c - 1) / 2, truncated (0 for a slice of NaNs, whose first NaN it then names).
  const Tensor order = native::argsort(a, d, false);
  Tensor count = native::sum(native::unary(UnaryOp::LogicalNot, isnan(a)), {d}, true);
  count = native::to(count, a.device(), kFloat64);
  const Tensor half =
      native::unary(UnaryOp::Floor, native::binary(BinaryOp::Div, native::clamp(count - 1.0, 0.0, {}), Scalar(2.0)));
  const Tensor idx = native::gather(order, d, native::to(half, a.device(), kInt64));
  Tensor values = gather(a, d, idx);
  if (!keepdim) return {squeeze(values, d), native::squeeze(idx, d)};
  return {values, idx};
}

Tensor nanmedian(const Tensor& a) {
  WICK_CHECK(a.defined(), "nanmedian: the input is an undefined tensor");
  WICK_CHECK_TYPE(a.dtype() != kBool, "nanmedian: bool inputs are not supported (shape {}); convert with .to(kInt64)",
                  shape_str(a));
  WICK_CHECK_INDEX(a.numel() > 0 || is_floating(a.dtype()),
                   "nanmedian: the {} input of shape {} is empty; an integer dtype has no NaN to return", a.dtype(),
                   shape_str(a));
  Tensor out;
  {
    NoGradGuard no_grad;
    out = a.numel() == 0 ? native::full({}, std::numeric_limits<double>::quiet_NaN(), a.dtype(), a.device())
                         : native::contiguous(std::get<0>(nanmedian(native::reshape(a, {-1}), 0, false)));
  }
  if (needs_grad({&a})) {
    // PyTorch's evenly_distribute_backward: the gradient shared among the elements equal to the
    // result (the NaNs when it is NaN).
    record_function("NanmedianBackward", {a}, {out},
                    [](const VL& g, const VL& s) -> VL {
                      const Tensor& x = s[0];
                      const Tensor& v = s[1];
                      const Tensor hit = logical_or(eq(x, v), logical_and(isnan(x), isnan(v)));
                      const Tensor mask = native::to(hit, x.device(), x.dtype());
                      return {mul(mask, div(g[0], native::sum(mask, {}, false)))};
                    },
                    {a}, {out});
  }
  return out;
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& a, IntArrayRef dims, bool unbiased, bool keepdim) {
  return std_mean(a, dims, std::optional<int64_t>(unbiased ? 1 : 0), keepdim);
}
namespace {
// std_mean and var_mean: their shared checks, then the spread (std or var) and the mean.
template <class Spread>
std::tuple<Tensor, Tensor> spread_mean(const char* op, const Tensor& a, IntArrayRef dims,
                                       std::optional<int64_t> correction, bool keepdim, Spread spread) {
  check_reduce_dims(op, a, dims);
  WICK_CHECK_TYPE(is_floating(a.dtype()), "{}: expects a floating input, got {} of shape {}", op, a.dtype(),
                  shape_str(a));
  Tensor s = spread(a, dims, correction, keepdim);
  Tensor m = mean(a, dims, keepdim);
  return {s, m};
}
}  // namespace

std::tuple<Tensor, Tensor> std_mean(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction,
                                    bool keepdim) {
  return spread_mean(
      "std_mean", a, dims, correction, keepdim,
      [](const Tensor& t, IntArrayRef d, std::optional<int64_t> c, bool k) { return wick::std(t, d, c, k); });
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& a, IntArrayRef dims, bool unbiased, bool keepdim) {
  return var_mean(a, dims, std::optional<int64_t>(unbiased ? 1 : 0), keepdim);
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction,
                                    bool keepdim) {
  return spread_mean("var_mean", a, dims, correction, keepdim,
                     [](const Tensor& t, IntArrayRef d, std::optional<int64_t> c, bool k) { return var(t, d, c, k); });
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& a, std::optional<int64_t> dim, bool keepdim) {
  WICK_CHECK(a.defined(), "aminmax: the input is an undefined tensor");
  std::vector<int64_t> dims;
  int64_t reduced = a.numel();
  if (dim) {
    const int64_t d = native::wrap_dim(*dim, a.dim(), "aminmax");
    if (a.dim() > 0) {
      dims.push_back(d);
      reduced = a.size(d);
    }
  }
  WICK_CHECK(reduced > 0, "aminmax: cannot reduce {} of the input of shape {}: it is empty and aminmax has no identity",
             dim ? fmt::format("dim {}", dims.empty() ? 0 : dims[0]) : std::string("every element"), shape_str(a));
  Tensor mn = native::amin(a, dims, keepdim);
  Tensor mx = native::amax(a, dims, keepdim);
  if (needs_grad({&a})) {
    // PyTorch 1.13 defines no derivative for aminmax: backward through it raises, as there.
    record_function("AminmaxBackward", {a}, {mn, mx}, [](const VL&, const VL&) -> VL {
      WICK_FAIL_T(NotImplementedError,
                  "aminmax: the derivative of aminmax is not implemented (as in PyTorch 1.13); use amin and amax, "
                  "which share the gradient among ties");
    });
  }
  return {mn, mx};
}

Tensor count_nonzero(const Tensor& a, IntArrayRef dims) {
  check_reduce_dims("count_nonzero", a, dims);
  return native::sum(native::binary(BinaryOp::Ne, a, Scalar(0)), dims, false);
}

}  // namespace wick
