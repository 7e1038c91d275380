#pragma once
// The public, differentiable op API: wick::add, wick::matmul, wick::zeros, ... Each calls the
// native op (core) and, when grad mode is on and an input requires grad, records a Node whose
// backward is written on this same API (so double backward works; Note [Two levels of ops]).
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "wick/core/native.h"
#include "wick/core/tensor.h"

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
/// Copies `data` (host memory of opts' dtype) into a new tensor of `shape`.
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

}  // namespace wick
