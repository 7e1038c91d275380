#pragma once
// The public, differentiable op API: wick::add, wick::matmul, wick::zeros, ... Each calls the
// native op (core) and, when grad mode is on and an input requires grad, records a Node whose
// backward is written on this same API (so double backward works; Note [Two levels of ops]).
#include <initializer_list>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "wick/core/native.h"
#include "wick/core/tensor.h"
// The rest of the op API, in files of their own (every_device_test reads each functions_*.h
// included here).
#include "wick/autograd/functions_counting.h"
#include "wick/autograd/functions_index_more.h"
#include "wick/autograd/functions_scan_scatter.h"
#include "wick/autograd/functions_special.h"
#include "wick/autograd/functions_stats.h"

namespace wick {

// ---- factories (TensorOptions: dtype, device, requires_grad) ----
Tensor empty(IntArrayRef shape, TensorOptions opts = {});
Tensor zeros(IntArrayRef shape, TensorOptions opts = {});
Tensor ones(IntArrayRef shape, TensorOptions opts = {});
Tensor full(IntArrayRef shape, Scalar value, TensorOptions opts = {});
/// [start, end) in steps. Without options the dtype is inferred as torch.arange does: int64
/// when every bound is an integer, float32 otherwise.
Tensor arange(Scalar end, std::optional<TensorOptions> opts = std::nullopt);
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<TensorOptions> opts = std::nullopt);
Tensor linspace(double start, double end, int64_t steps, TensorOptions opts = {});
Tensor eye(int64_t n, TensorOptions opts = {});
Tensor eye(int64_t n, int64_t m, TensorOptions opts = {});
Tensor rand(IntArrayRef shape, TensorOptions opts = {});
Tensor randn(IntArrayRef shape, TensorOptions opts = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, TensorOptions opts = kInt64);
Tensor empty_like(const Tensor& t);
Tensor zeros_like(const Tensor& t);
Tensor ones_like(const Tensor& t);
Tensor full_like(const Tensor& t, Scalar v);
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);
/// A 0-dim tensor holding v (float32 for floating values unless opts says otherwise).
Tensor scalar_tensor(Scalar v, TensorOptions opts = {});
/// Copies `data` (host memory of opts' dtype) into a new tensor of `shape`. For kBool any nonzero
/// byte is true; a null `data` for a non-empty shape is a ValueError.
Tensor from_blob(const void* data, IntArrayRef shape, TensorOptions opts = {});
/// A tensor holding a copy of `values` (T: double, float, int64_t) with `shape`, converted to
/// opts' dtype; by default int64 for integer values and float32 for floating values, as
/// torch.tensor infers.
template <typename T>
Tensor tensor(const std::vector<T>& values, IntArrayRef shape,
              TensorOptions opts = TensorOptions(std::is_integral_v<T> ? kInt64 : kFloat32));
/// A 1-d tensor: `wick::tensor({1.0, 2.0, 3.0})`.
Tensor tensor(std::initializer_list<double> values, TensorOptions opts = {});
/// `wick::tensor({1.0, 2.0, 3.0, 4.0}, {2, 2}, wick::kFloat64)`.
Tensor tensor(std::initializer_list<double> values, IntArrayRef shape, TensorOptions opts = {});

// ---- elementwise ----
Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, Scalar exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& a);
Tensor abs(const Tensor& a);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);
Tensor tanh(const Tensor& a);
Tensor sigmoid(const Tensor& a);
Tensor relu(const Tensor& a);
/// Exact (erf) GELU, torch.nn.functional.gelu's default.
Tensor gelu(const Tensor& a);
Tensor sin(const Tensor& a);
Tensor cos(const Tensor& a);
Tensor square(const Tensor& a);
Tensor reciprocal(const Tensor& a);
Tensor sign(const Tensor& a);
Tensor erf(const Tensor& a);
Tensor log1p(const Tensor& a);
Tensor expm1(const Tensor& a);
Tensor clamp(const Tensor& a, std::optional<Scalar> min, std::optional<Scalar> max);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);

// ---- reductions ----
Tensor sum(const Tensor& a);
Tensor sum(const Tensor& a, IntArrayRef dims, bool keepdim = false);
Tensor mean(const Tensor& a);
Tensor mean(const Tensor& a, IntArrayRef dims, bool keepdim = false);
Tensor amax(const Tensor& a, IntArrayRef dims, bool keepdim = false);
Tensor amin(const Tensor& a, IntArrayRef dims, bool keepdim = false);
/// Max along a dim: (values, int64 indices), as torch.max(input, dim).
std::tuple<Tensor, Tensor> max(const Tensor& a, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor var(const Tensor& a, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
Tensor logsumexp(const Tensor& a, IntArrayRef dims, bool keepdim = false);
Tensor softmax(const Tensor& a, int64_t dim);
Tensor log_softmax(const Tensor& a, int64_t dim);

// ---- linear algebra ----
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
/// input @ weight^T + bias (bias optional) for input [*, in], weight [out, in], bias [out]: one
/// GEMM with the bias added through beta = 1, one node (Note [GEMM without copies]).
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {});

// ---- shape (views where PyTorch gives views) ----
Tensor view(const Tensor& a, IntArrayRef shape);
Tensor reshape(const Tensor& a, IntArrayRef shape);
Tensor transpose(const Tensor& a, int64_t d0, int64_t d1);
Tensor permute(const Tensor& a, IntArrayRef dims);
Tensor narrow(const Tensor& a, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& a, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step = 1);
Tensor select(const Tensor& a, int64_t dim, int64_t index);
Tensor expand(const Tensor& a, IntArrayRef shape);
Tensor squeeze(const Tensor& a);
Tensor squeeze(const Tensor& a, int64_t dim);
Tensor unsqueeze(const Tensor& a, int64_t dim);
Tensor flatten(const Tensor& a, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor contiguous(const Tensor& a);
Tensor clone(const Tensor& a);
Tensor to(const Tensor& a, Device device, DType dtype);
/// Sums `g` over broadcast dims so that it has `shape` (the backward of broadcasting).
Tensor sum_to(const Tensor& g, IntArrayRef shape);

// ---- joining and indexing ----
Tensor cat(const std::vector<Tensor>& ts, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& a, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& a, IntArrayRef sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& a, int64_t chunks, int64_t dim = 0);
Tensor index_select(const Tensor& a, int64_t dim, const Tensor& index);
/// a with src added at `index` along dim (out of place; differentiable in a and src).
Tensor index_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);
Tensor gather(const Tensor& a, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& a, int64_t dim, const Tensor& index, const Tensor& src);

// ---- the tensor API of issue 14 (docs/tensors.md, "Tensor API") ----
// Predicates and whole-tensor comparisons: results are bool (or C++ bool) and never require grad.
/// a != a elementwise (bool); false everywhere for integer and bool tensors.
Tensor isnan(const Tensor& a);
/// |a| == inf elementwise (bool).
Tensor isinf(const Tensor& a);
/// Neither NaN nor infinite, elementwise (bool).
Tensor isfinite(const Tensor& a);
/// torch.isclose: a == b, or both finite and |a - b| <= atol + rtol * |b|, or (equal_nan) both
/// NaN; bool, broadcast. a and b must share a dtype; rtol and atol must be >= 0.
Tensor isclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
/// True when every element of isclose(a, b, ...) is true (shapes must broadcast).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
/// True when a and b have the same sizes and the same elements (torch.equal: NaN != NaN); a and
/// b must share a dtype and a device.
bool equal(const Tensor& a, const Tensor& b);
/// Whether every (any) element is nonzero: a 0-dim bool; true (false) for an empty tensor.
Tensor all(const Tensor& a);
Tensor any(const Tensor& a);
/// The same along one dim (bool).
Tensor all(const Tensor& a, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& a, int64_t dim, bool keepdim = false);

// Reductions over all elements (0-dim results) and with a correction.
/// The largest (smallest) element; the gradient is shared evenly among ties, as PyTorch's.
Tensor max(const Tensor& a);
Tensor min(const Tensor& a);
/// Variance of all elements, unbiased (divides by numel - 1).
Tensor var(const Tensor& a);
/// Variance dividing by N - correction (torch.var's `correction`; 1 is unbiased). Pass the
/// correction as std::optional<int64_t>: a plain integer would choose the `bool unbiased` form.
Tensor var(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim);
/// Standard deviation: sqrt of var, with the same forms.
Tensor std(const Tensor& a);
Tensor std(const Tensor& a, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim);
/// The p-norm of all elements (p = 2, 1, 0, inf, -inf or any other real), as torch.norm.
Tensor norm(const Tensor& a, double p = 2);
/// The p-norm over `dims` (empty: all). p = 2's gradient is 0 where the norm is 0, as PyTorch's.
Tensor norm(const Tensor& a, double p, IntArrayRef dims, bool keepdim = false);
/// Running sums along dim; integer and bool inputs sum in int64.
Tensor cumsum(const Tensor& a, int64_t dim);

// Masking and selection.
/// torch.where with a scalar operand: the scalar takes the tensor's dtype category's rules
/// (a 0-dim operand), as PyTorch's; two scalars give float32 (floating) or int64.
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
Tensor where(const Tensor& cond, Scalar a, Scalar b);
/// `a` with `value` where the bool `mask` (broadcast to a) is true; keeps a's dtype.
Tensor masked_fill(const Tensor& a, const Tensor& mask, Scalar value);
/// The same with a 0-dim tensor value, differentiable in it (it gets the sum of the masked
/// gradient).
Tensor masked_fill(const Tensor& a, const Tensor& mask, const Tensor& value);
/// The lower (upper) triangle of the last two dims: elements with col - row <= diagonal (>=).
Tensor tril(const Tensor& a, int64_t diagonal = 0);
Tensor triu(const Tensor& a, int64_t diagonal = 0);

// Matrix products.
/// Batched matrix product of 3-d [b, n, m] and [b, m, p] (no broadcasting, as torch.bmm).
Tensor bmm(const Tensor& a, const Tensor& b);
/// beta * input + alpha * bmm(batch1, batch2); input broadcasts to the product's shape and is
/// ignored (NaNs included) when beta is 0, as PyTorch's.
Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, Scalar beta = 1, Scalar alpha = 1);
/// beta * input + alpha * mm(mat1, mat2), as torch.addmm.
Tensor addmm(const Tensor& input, const Tensor& mat1, const Tensor& mat2, Scalar beta = 1, Scalar alpha = 1);
/// Outer product of two 1-d tensors: [n] x [m] -> [n, m].
Tensor outer(const Tensor& a, const Tensor& b);
/// Inner product of two 1-d tensors of one length and dtype: a 0-dim tensor.
Tensor dot(const Tensor& a, const Tensor& b);

// Sorting (Note [Sort order] in wick/core/sort_order.h: always stable, NaN is the largest).
/// (values, int64 indices) sorted along dim; values are differentiable.
std::tuple<Tensor, Tensor> sort(const Tensor& a, int64_t dim = -1, bool descending = false);
/// LibTorch's form with `stable` (accepted for compatibility: every sort here is stable).
std::tuple<Tensor, Tensor> sort(const Tensor& a, std::optional<bool> stable, int64_t dim, bool descending);
/// The indices of sort.
Tensor argsort(const Tensor& a, int64_t dim = -1, bool descending = false);
/// The k largest (smallest) elements along dim and their indices, in sorted order; ties keep
/// the lower index first. 0 <= k <= size(dim).
std::tuple<Tensor, Tensor> topk(const Tensor& a, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);
/// The k-th smallest element along dim (1 <= k <= size(dim)) and its index, as torch.kthvalue;
/// ties give the lower index (PyTorch leaves which one unspecified).
std::tuple<Tensor, Tensor> kthvalue(const Tensor& a, int64_t k, int64_t dim = -1, bool keepdim = false);
/// The lower median along dim and its index, as torch.median(input, dim); a slice holding NaN
/// gives NaN (the index of its last NaN). Differentiable in the values.
std::tuple<Tensor, Tensor> median(const Tensor& a, int64_t dim, bool keepdim = false);
/// The lower median of all elements (0-dim); NaN if any element is NaN.
Tensor median(const Tensor& a);
/// The most frequent value along dim and its index, as torch.mode (Note [mode] in
/// autograd/src/ops_mode.cpp): among equally frequent values the smallest; the index of its last
/// occurrence; each NaN counts once (NaN != NaN), so NaN wins only a slice of NaNs. The gradient
/// goes to that index. IndexError for an empty dim.
std::tuple<Tensor, Tensor> mode(const Tensor& a, int64_t dim = -1, bool keepdim = false);

// Products (docs/tensors.md, "Products and rounding"). The gradients are exact with zeros, as
// PyTorch's: prod's goes only to a lone zero (the product of the others), and is 0 everywhere
// when two or more elements are zero. Integers and bool multiply in int64.
/// The product of all elements (0-dim; 1 for an empty tensor).
Tensor prod(const Tensor& a);
/// The product along dim.
Tensor prod(const Tensor& a, int64_t dim, bool keepdim = false);
/// Running products along dim.
Tensor cumprod(const Tensor& a, int64_t dim);

// Rounding (zero gradient, as PyTorch's; the identity on integer tensors).
Tensor floor(const Tensor& a);
Tensor ceil(const Tensor& a);
/// Round half to even (2.5 -> 2, 3.5 -> 4), as torch.round.
Tensor round(const Tensor& a);
Tensor trunc(const Tensor& a);
/// a - trunc(a) (the sign of a); floating tensors only. Gradient 1, as PyTorch's.
Tensor frac(const Tensor& a);
/// a - floor(a / b) * b: the result has b's sign (Python's %). Integer operands with a zero
/// divisor raise ValueError (bool: TypeError). Gradients: g and -g * floor(a / b).
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, Scalar b);
/// C's fmod: the result has a's sign. Zero divisors as remainder. Gradients: g and -g * trunc(a / b).
Tensor fmod(const Tensor& a, const Tensor& b);
Tensor fmod(const Tensor& a, Scalar b);

// Trigonometric and hyperbolic (integer inputs give float32, as PyTorch's).
Tensor tan(const Tensor& a);
Tensor asin(const Tensor& a);
Tensor acos(const Tensor& a);
Tensor atan(const Tensor& a);
/// The angle of (b, a) in (-pi, pi], broadcast; integers give float32.
Tensor atan2(const Tensor& a, const Tensor& b);
Tensor sinh(const Tensor& a);
Tensor cosh(const Tensor& a);
Tensor asinh(const Tensor& a);
Tensor acosh(const Tensor& a);
Tensor atanh(const Tensor& a);

// Rearranging (copies, as PyTorch's; differentiable).
/// a tiled `repeats[i]` times along each dim (repeats may have more dims than a).
Tensor repeat(const Tensor& a, IntArrayRef repeats);
/// a reversed along each of `dims`.
Tensor flip(const Tensor& a, IntArrayRef dims);
/// a shifted cyclically by shifts[i] along dims[i]; with no dims, the flattened tensor is
/// shifted by shifts[0] and given a's shape back.
Tensor roll(const Tensor& a, IntArrayRef shifts, IntArrayRef dims = {});
/// 1-d [n] -> 2-d square matrix with a on diagonal `diagonal`; 2-d -> 1-d copy of that diagonal.
Tensor diag(const Tensor& a, int64_t diagonal = 0);
/// The slices along dim, as views (select(dim, i) for each i).
std::vector<Tensor> unbind(const Tensor& a, int64_t dim = 0);

// Neural-network helpers (also re-exported by nn::functional).
/// x * sigmoid(x) (SiLU / swish).
Tensor silu(const Tensor& a);
/// int64 [..., num_classes] with 1 at each class of the int64 `a`; num_classes -1 means max + 1.
Tensor one_hot(const Tensor& a, int64_t num_classes = -1);
/// int64 samples of category indices from the rows of `probs` (1-d [k] or 2-d [rows, k]; weights
/// >= 0, finite, each row with a positive sum): [num_samples] or [rows, num_samples]. Without
/// replacement no index repeats within a row and num_samples must not exceed the row's number of
/// positive weights. Drawn from the global generator: the same after the same manual_seed.
Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false);

}  // namespace wick
