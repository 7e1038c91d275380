// sort, argsort, topk and cumsum. The kernels give positions (Backend::sort_indices) and running
// sums (Backend::cumsum); sorted values are a gather of the input, so their gradient is gather's
// (scatter back to where each value came from).
#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {
Tensor take_along(const Tensor& a, int64_t dim, const Tensor& idx) {
  return a.dim() == 0 ? clone(a) : gather(a, native::wrap_dim(dim, a.dim(), "sort"), idx);
}

// cumsum from the start (or, reverse, from the end): each is the other's backward.
Tensor cumsum_directed(const Tensor& a, int64_t dim, bool reverse) {
  Tensor out = native::cumsum(a, dim, reverse);
  if (needs_grad({&a})) {
    record_function(reverse ? "CumsumReverseBackward" : "CumsumBackward", {a}, {out},
                    [=](const VL& g, const VL&) -> VL { return {cumsum_directed(g[0], dim, !reverse)}; });
  }
  return out;
}
}  // namespace

Tensor argsort(const Tensor& a, int64_t dim, bool descending) { return native::argsort(a, dim, descending); }

std::tuple<Tensor, Tensor> sort(const Tensor& a, int64_t dim, bool descending) {
  WICK_CHECK(a.defined(), "sort: the input is an undefined tensor");
  native::wrap_dim(dim, a.dim(), "sort");
  Tensor idx = native::argsort(a, dim, descending);
  return {take_along(a, dim, idx), idx};
}

std::tuple<Tensor, Tensor> sort(const Tensor& a, std::optional<bool>, int64_t dim, bool descending) {
  return sort(a, dim, descending);
}

std::tuple<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim, bool largest, bool) {
  WICK_CHECK(a.defined(), "topk: the input is an undefined tensor");
  const int64_t d = native::wrap_dim(dim, a.dim(), "topk");
  const int64_t n = a.dim() == 0 ? 1 : a.size(d);
  WICK_CHECK_INDEX(k >= 0 && k <= n,
                   "topk: k = {} is out of range for dim {} of size {} (shape [{}]); expected "
                   "0 <= k <= {}",
                   k, d, n, fmt::join(a.sizes(), ", "), n);
  Tensor idx = native::argsort(a, d, largest);
  if (a.dim() == 0) {  // k is 0 or 1: none or the element itself
    if (k == 0) return {native::empty({0}, a.dtype(), a.device()), native::empty({0}, kInt64, a.device())};
    return {take_along(a, d, idx), idx};
  }
  if (k < n) idx = native::contiguous(native::narrow(idx, d, 0, k));
  return {take_along(a, d, idx), idx};
}

Tensor cumsum(const Tensor& a, int64_t dim) { return cumsum_directed(a, dim, false); }

}  // namespace wick
