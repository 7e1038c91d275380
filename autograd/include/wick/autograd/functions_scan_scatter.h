#pragma once
// Part of the op API of functions.h (which includes this file): scans, elementwise math,
// interpolation, integration, rearranging, selection and scattered writes.
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

namespace wick {

// Scans, elementwise math, interpolation and integration (docs/tensors.md, "More tensor ops";
// autograd/src/ops_scan_math.cpp). Compositions of differentiable ops unless noted.
/// log(cumsum(exp(a))) along dim, computed stably (a log-depth scan of logaddexp); floating only.
Tensor logcumsumexp(const Tensor& a, int64_t dim);
/// Running maximum (minimum) along dim and the index where it was reached: among equal values
/// the latest index, and once a NaN is seen the value is NaN at the latest NaN's index, as
/// PyTorch's. The gradient goes to those indices.
std::tuple<Tensor, Tensor> cummax(const Tensor& a, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& a, int64_t dim);
/// Each slice a.select(dim, i) whose p-norm exceeds maxnorm scaled by maxnorm / (norm + 1e-7);
/// p > 0, maxnorm >= 0, a floating with at least 2 dims.
Tensor renorm(const Tensor& a, double p, int64_t dim, double maxnorm);
/// NaN, +inf and -inf replaced (by default: 0, the dtype's largest and lowest finite value);
/// integer and bool tensors are copied. The gradient is 0 at the replaced entries.
Tensor nan_to_num(const Tensor& a, std::optional<double> nan = 0.0, std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
/// log(a / (1 - a)); with eps, a is first clamped to [eps, 1 - eps] (gradient 0 outside).
Tensor logit(const Tensor& a, std::optional<double> eps = std::nullopt);
/// x * log(y), 0 where x == 0 (unless y is NaN), broadcast; integers give float32. Gradients as
/// PyTorch's: x gets xlogy(g, y) (0 where x == 0 and y <= 0), y gets g * x / y.
Tensor xlogy(const Tensor& x, const Tensor& y);
Tensor xlogy(Scalar x, const Tensor& y);
Tensor xlogy(const Tensor& x, Scalar y);
/// start + weight * (end - start), PyTorch's two-sided formula (|weight| >= 0.5 computes from
/// end); start, end and a tensor weight share one floating dtype and broadcast.
Tensor lerp(const Tensor& start, const Tensor& end, Scalar weight);
Tensor lerp(const Tensor& start, const Tensor& end, const Tensor& weight);
/// sqrt(a^2 + b^2) without overflow or underflow, broadcast; floating results only.
Tensor hypot(const Tensor& a, const Tensor& b);
/// The trapezoidal rule along dim with spacing dx, or with sample points x (1-d of y's length
/// along dim, or broadcastable to y); 0 for an empty dim. trapz is the older name.
Tensor trapezoid(const Tensor& y, Scalar dx = 1, int64_t dim = -1);
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor trapz(const Tensor& y, double dx = 1, int64_t dim = -1);
Tensor trapz(const Tensor& y, const Tensor& x, int64_t dim = -1);

// Rearranging, selection and scattered writes (autograd/src/ops_select_scatter.cpp).
/// a rotated by 90 degrees k times in the plane of dims (from dims[0] towards dims[1]); a copy.
Tensor rot90(const Tensor& a, int64_t k = 1, IntArrayRef dims = {0, 1});
/// Each element repeated along dim (flattened when dim is empty): `repeats` times, or repeats[i]
/// times for element i (repeats: 0-dim, one element or one per element; int64, >= 0).
/// output_size, when given, must equal the result's length.
Tensor repeat_interleave(const Tensor& a, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
Tensor repeat_interleave(const Tensor& a, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
/// repeat_interleave(arange(n), repeats) for a 1-d int64 repeats of n counts.
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);
/// a repeated dims[i] times along each dim; fewer dims than a's are padded with 1s in front.
Tensor tile(const Tensor& a, IntArrayRef dims);
/// The 1-d tensor of a's elements where the bool mask (a and mask broadcast together) is true.
Tensor masked_select(const Tensor& a, const Tensor& mask);
/// gather with a and the int64 indices broadcast except along dim; without dim, indices into the
/// flattened a.
Tensor take_along_dim(const Tensor& a, const Tensor& indices, std::optional<int64_t> dim = std::nullopt);
/// a with src's elements reduced into the positions that index names along dim (as scatter_add),
/// reduce one of "sum", "prod", "mean" (integers: floor division), "amax", "amin"; include_self
/// false leaves a's own values out at the positions written. Gradients as PyTorch 1.13's
/// (amax/amin: split evenly among every value equal to the result).
Tensor scatter_reduce(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self = true);
/// a with values written (accumulate: added) at the positions that `indices` name in a's leading
/// dims: int64 tensors (broadcast together, negative counts from the end) or bool masks. Without
/// accumulate the last of repeated positions wins.
Tensor index_put(const Tensor& a, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false);
/// Sums the products of a and b over the pairs of dims (dims_a[i], dims_b[i]); the result has
/// a's remaining dims, then b's. A contracted dim of size 1 on one side is summed first.
Tensor tensordot(const Tensor& a, const Tensor& b, IntArrayRef dims_a, IntArrayRef dims_b);
/// Contracts the last `dims` dims of a with the first `dims` of b (Python's integer form).
Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims);

}  // namespace wick
