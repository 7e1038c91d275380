// prod, cumprod, kthvalue and median.
//
// cumprod is a log-depth (Hillis-Steele) scan of differentiable ops: step k multiplies each
// element by the running product 2^k places before it. Every device has it with no new kernel,
// and its gradient is mul's (no division), so it is exact with zeros, as PyTorch's.
// prod's backward is g * (the product of the elements before) * (the product of those after):
// with no zero g * prod / x; with one zero only that element gets g * (the product of the
// others); with two or more every gradient is 0, as PyTorch's prod_backward. It is written on
// cumprod, so double backward works too.
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
// Products of the elements strictly before (reverse: after) each position along dim.
Tensor exclusive_cumprod(const Tensor& a, int64_t dim, bool reverse) {
  const int64_t n = a.size(dim);
  Tensor x = reverse ? flip(a, {dim}) : a;
  Tensor one = ones_like(narrow(x, dim, 0, 1));
  Tensor shifted = n == 1 ? one : cat({one, narrow(x, dim, 0, n - 1)}, dim);
  Tensor r = cumprod(shifted, dim);
  return reverse ? flip(r, {dim}) : r;
}
}  // namespace

Tensor cumprod(const Tensor& a, int64_t dim) {
  WICK_CHECK(a.defined(), "cumprod: the input is an undefined tensor");
  const int64_t d = native::wrap_dim(dim, a.dim(), "cumprod");
  // Integers and bool multiply in int64 (wrapping), as PyTorch's.
  Tensor x = is_floating(a.dtype()) ? a : to(a, a.device(), kInt64);
  if (a.dim() == 0 || x.size(d) <= 1) return x.is_same(a) ? clone(x) : x;
  const int64_t n = x.size(d);
  for (int64_t k = 1; k < n; k *= 2) {
    x = cat({narrow(x, d, 0, k), mul(narrow(x, d, k, n - k), narrow(x, d, 0, n - k))}, d);
  }
  return x;
}

Tensor prod(const Tensor& a, int64_t dim, bool keepdim) {
  WICK_CHECK(a.defined(), "prod: the input is an undefined tensor");
  const int64_t d = native::wrap_dim(dim, a.dim(), "prod");
  if (a.dim() == 0) return native::reduce(ReduceOp::Prod, a, {}, false);
  Tensor out = native::reduce(ReduceOp::Prod, a, {d}, keepdim);
  if (needs_grad({&a})) {
    record_function("ProdBackward1", {a}, {out},
                    [d, keepdim](const VL& g, const VL& s) -> VL {
                      const Tensor& x = s[0];
                      if (x.size(d) == 0) return {zeros_like(x)};
                      Tensor gk = keepdim ? g[0] : unsqueeze(g[0], d);
                      return {mul(gk, mul(exclusive_cumprod(x, d, false), exclusive_cumprod(x, d, true)))};
                    },
                    {a});
  }
  return out;
}

Tensor prod(const Tensor& a) {
  WICK_CHECK(a.defined(), "prod: the input is an undefined tensor");
  if (a.dim() == 0) return reshape(prod(reshape(a, {1}), 0, false), {});
  return prod(flatten(a), 0, false);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& a, int64_t k, int64_t dim, bool keepdim) {
  WICK_CHECK(a.defined(), "kthvalue: the input is an undefined tensor");
  const int64_t d = native::wrap_dim(dim, a.dim(), "kthvalue");
  const int64_t n = a.dim() == 0 ? 1 : a.size(d);
  WICK_CHECK_INDEX(k >= 1 && k <= n,
                   "kthvalue: k = {} is out of range for dim {} of size {} (shape [{}]); expected 1 <= k <= {}", k, d,
                   n, fmt::join(a.sizes(), ", "), n);
  if (a.dim() == 0) return {clone(a), native::zeros({}, kInt64, a.device())};
  Tensor idx = native::contiguous(native::narrow(native::argsort(a, d, false), d, k - 1, 1));
  Tensor values = gather(a, d, idx);
  if (!keepdim) return {squeeze(values, d), native::squeeze(idx, d)};
  return {values, idx};
}

std::tuple<Tensor, Tensor> median(const Tensor& a, int64_t dim, bool keepdim) {
  WICK_CHECK(a.defined(), "median: the input is an undefined tensor");
  const int64_t d = native::wrap_dim(dim, a.dim(), "median");
  const int64_t n = a.dim() == 0 ? 1 : a.size(d);
  WICK_CHECK_INDEX(n > 0, "median: dim {} of shape [{}] is empty; expected at least one element along it", d,
                   fmt::join(a.sizes(), ", "));
  if (a.dim() == 0) return {clone(a), native::zeros({}, kInt64, a.device())};
  // The lower median; a slice holding NaN gives NaN (sorted last), as PyTorch's.
  Tensor order = native::argsort(a, d, false);
  DimVector kept(a.sizes());
  kept[static_cast<size_t>(d)] = 1;
  Tensor pos = native::full(kept, (n - 1) / 2, kInt64, a.device());
  if (is_floating(a.dtype())) {
    Tensor has_nan = any(isnan(a), d, true);
    pos = where(has_nan, native::full(pos.sizes(), n - 1, kInt64, a.device()), pos);
  }
  Tensor idx = native::gather(order, d, pos);
  Tensor values = gather(a, d, idx);
  if (!keepdim) return {squeeze(values, d), native::squeeze(idx, d)};
  return {values, idx};
}

Tensor median(const Tensor& a) {
  WICK_CHECK(a.defined(), "median: the input is an undefined tensor");
  WICK_CHECK_INDEX(a.numel() > 0, "median: the input of shape [{}] is empty; expected at least one element",
                   fmt::join(a.sizes(), ", "));
  return std::get<0>(median(flatten(a), 0, false));
}

}  // namespace wick
