#pragma once
// Part of the op API of functions.h (which includes this file): statistics. NaN-ignoring
// reductions, quantiles, moments, counts, covariance and cumulative integration, with PyTorch
// 1.13's semantics (docs/tensors.md, "Statistics"). Composites of the differentiable ops, so their
// gradients are PyTorch's and every device runs them, except nansum (PyTorch's product g * mask),
// nanmedian() (whose gradient is shared among ties) and aminmax (no gradient in PyTorch 1.13).
#include <optional>
#include <string_view>
#include <tuple>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

namespace wick {

// NaN-ignoring reductions (autograd/src/ops_nan_stats.cpp).
/// The sum over `dims` (empty: every dim) with NaN counted as 0, as torch.nansum: integers and bool
/// sum in int64. `dtype` converts the input first (a floating input to an integer dtype: TypeError,
/// as PyTorch). The gradient is g * (input is not NaN): 0 at NaN unless g is infinite, as PyTorch's.
Tensor nansum(const Tensor& a, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
/// nansum divided by the number of non-NaN elements, as torch.nanmean: floating inputs (and dtypes)
/// only (TypeError); NaN where every element is NaN or there is none.
Tensor nanmean(const Tensor& a, IntArrayRef dims = {}, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
/// The lower median of the non-NaN elements (0-dim), as torch.nanmedian(): NaN when every element
/// is NaN or there is none (an empty integer tensor: IndexError). The gradient is shared evenly
/// among the elements equal to the result (among the NaNs when it is NaN), as PyTorch's.
Tensor nanmedian(const Tensor& a);
/// The lower median of the non-NaN elements along dim and its int64 index, as torch.nanmedian(input,
/// dim): NaN only for a slice of NaNs, with the index of its first NaN (PyTorch's index there comes
/// from its selection algorithm). Among equal values the index of the one a stable sort puts at
/// the median. The gradient goes to that index. IndexError for an empty dim.
std::tuple<Tensor, Tensor> nanmedian(const Tensor& a, int64_t dim, bool keepdim = false);

// Quantiles (autograd/src/ops_quantile.cpp), as torch.quantile / torch.nanquantile.
/// The q-th quantiles of a (float32 or float64, non-empty) over dim, or of all elements when dim is
/// empty; q is a double or a 0-dim or 1-d tensor of a's dtype with values in [0, 1]. A 1-d q puts
/// its length first in the result's shape. keepdim keeps the reduced dim (without dim: every dim)
/// as size 1. interpolation between the two nearest sorted values: "linear", "lower", "higher",
/// "midpoint" or "nearest" (half to even). quantile gives NaN for a slice holding NaN; nanquantile
/// ignores NaNs (NaN for a slice of NaNs). Differentiable in a and in a tensor q (through the
/// interpolation weight), as PyTorch's.
Tensor quantile(const Tensor& a, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor quantile(const Tensor& a, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& a, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& a, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");

// Moments, extremes and counts (autograd/src/ops_nan_stats.cpp).
/// (std, mean) over `dims` (empty: every dim) with the forms of wick::std, as torch.std_mean.
std::tuple<Tensor, Tensor> std_mean(const Tensor& a, IntArrayRef dims = {}, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim);
/// (var, mean) over `dims`, with the forms of wick::var, as torch.var_mean.
std::tuple<Tensor, Tensor> var_mean(const Tensor& a, IntArrayRef dims = {}, bool unbiased = true, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim);
/// (min, max) along dim, or of every element (keepdim: every dim kept as size 1), as torch.aminmax;
/// NaN propagates. ValueError for an empty reduction. PyTorch 1.13 has no derivative for aminmax:
/// the results of an input that requires grad carry a node whose backward raises
/// NotImplementedError (use amin and amax for gradients).
std::tuple<Tensor, Tensor> aminmax(const Tensor& a, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
/// The int64 number of nonzero elements (NaN counts) over `dims` (empty: every dim), as
/// torch.count_nonzero.
Tensor count_nonzero(const Tensor& a, IntArrayRef dims = {});

// Covariance and integration (autograd/src/ops_stats_cov.cpp).
/// The covariance matrix of the variables in a's rows (1-d: one variable) over its columns'
/// observations, as torch.cov: divided by sum(w) - correction (with aweights: sum(w) - correction *
/// sum(w * aweights) / sum(w)), 0 (so inf or NaN) when that is <= 0. fweights (int64, >= 0) and
/// aweights (floating, >= 0) hold one weight per observation; w is their product. One variable
/// gives a 0-dim result; integer inputs give float32. Differentiable in a and aweights.
Tensor cov(const Tensor& a, int64_t correction = 1, const Tensor& fweights = {}, const Tensor& aweights = {});
/// Pearson's correlation coefficients (cov normalised by the standard deviations, clamped to
/// [-1, 1]), as torch.corrcoef; one variable gives c / c (1, or NaN for a zero variance).
Tensor corrcoef(const Tensor& a);
/// The running trapezoidal rule along dim (one value less than y along dim; an empty dim stays
/// empty), with spacing dx or sample points x (1-d of y's length along dim, or broadcastable to
/// y), as torch.cumulative_trapezoid.
Tensor cumulative_trapezoid(const Tensor& y, Scalar dx = 1, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);

}  // namespace wick
