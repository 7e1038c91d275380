#pragma once
// Native ops: the gradient-free implementation of every op (Note [Two levels of ops] in
// tensor.h). Each checks its arguments and raises a wick::Error subclass (Note [Typed errors])
// naming the op and the operands, broadcasts (NumPy rules), promotes dtypes (PyTorch rules),
// allocates and calls the device's Backend. The differentiable public API in autograd/ is built on these.
#include <optional>
#include <vector>

#include "wick/core/backend.h"
#include "wick/core/tensor.h"

namespace wick::native {

// ---- factories ----
Tensor empty(IntArrayRef shape, DType dtype = kFloat32, Device device = kCPU);
Tensor empty_strided(IntArrayRef shape, IntArrayRef strides, DType dtype, Device device);
Tensor full(IntArrayRef shape, Scalar value, DType dtype = kFloat32, Device device = kCPU);
Tensor zeros(IntArrayRef shape, DType dtype = kFloat32, Device device = kCPU);
Tensor ones(IntArrayRef shape, DType dtype = kFloat32, Device device = kCPU);
Tensor arange(Scalar start, Scalar end, Scalar step, DType dtype, Device device);
Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device);
Tensor eye(int64_t n, int64_t m, DType dtype, Device device);
Tensor rand(IntArrayRef shape, DType dtype, Device device);
Tensor randn(IntArrayRef shape, DType dtype, Device device);
Tensor randint(int64_t low, int64_t high, IntArrayRef shape, DType dtype, Device device);
/// Bernoulli(p) mask of 0/1 with `like`'s shape, dtype and device.
Tensor bernoulli(const Tensor& like, double p);
/// Copies the elements of `shape` (of type `dtype`) from host memory. Bool bytes are normalised
/// (any nonzero byte is true); a null `data` for a non-empty shape is a ValueError.
Tensor from_blob_copy(const void* data, IntArrayRef shape, DType dtype, Device device);
/// A 0-dim tensor holding `s` (dtype: the scalar's category's widest type unless given).
Tensor scalar_tensor(Scalar s, DType dtype, Device device);

// ---- views (share storage and version counter) ----
Tensor as_strided(const Tensor& t, IntArrayRef sizes, IntArrayRef strides, int64_t offset);
Tensor view(const Tensor& t, IntArrayRef shape);
Tensor reshape(const Tensor& t, IntArrayRef shape);
Tensor transpose(const Tensor& t, int64_t d0, int64_t d1);
Tensor permute(const Tensor& t, IntArrayRef dims);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor expand(const Tensor& t, IntArrayRef shape);
Tensor squeeze(const Tensor& t);
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor flatten(const Tensor& t, int64_t start_dim, int64_t end_dim);
/// A new TensorImpl on the same storage with its own version counter and no autograd state
/// (PyTorch's `.data`; see Note [Version counters]).
Tensor alias_with_new_version(const Tensor& t);
/// A new TensorImpl on the same storage sharing the version counter, no autograd state.
Tensor alias(const Tensor& t);

// ---- copies and conversion ----
Tensor contiguous(const Tensor& t);
Tensor clone(const Tensor& t);
/// dst <- src with broadcasting, dtype conversion and cross-device transfer; bumps dst's version.
void copy_(const Tensor& dst, const Tensor& src);
/// dst <- src * factor for a floating-point dst of src's shape (bumps dst's version): one pass
/// when both share dtype and device, else copy_ (converting, moving) then an in-place multiply.
/// Gradient buckets fill their slots with it.
void scaled_copy_(const Tensor& dst, const Tensor& src, double factor);
Tensor to(const Tensor& t, Device device, DType dtype);

// ---- elementwise ----
Tensor unary(UnaryOp op, const Tensor& a, double p0 = 0, double p1 = 0);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
Tensor binary(BinaryOp op, const Tensor& a, Scalar b);
/// a (op)= b in place: b broadcast to a's shape, result cast to a's dtype; bumps a's version.
void binary_(BinaryOp op, const Tensor& a, const Tensor& b);
/// a (op)= b for a Scalar b (promoted with a as torch does; an error where the result cannot be
/// written into a's dtype); one launch with the scalar as a kernel argument where the backend has
/// the binary_scalar stub (Note [Scalar operands]).
void binary_(BinaryOp op, const Tensor& a, Scalar b);
void unary_(UnaryOp op, const Tensor& a, double p0 = 0, double p1 = 0);
void fill_(const Tensor& t, Scalar v);
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& t, std::optional<Scalar> min, std::optional<Scalar> max);

// ---- reductions (dims may be negative; empty dims = all) ----
Tensor reduce(ReduceOp op, const Tensor& t, IntArrayRef dims, bool keepdim);
Tensor sum(const Tensor& t, IntArrayRef dims, bool keepdim);
Tensor mean(const Tensor& t, IntArrayRef dims, bool keepdim);
Tensor amax(const Tensor& t, IntArrayRef dims, bool keepdim);
Tensor amin(const Tensor& t, IntArrayRef dims, bool keepdim);
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim);
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim);
Tensor var(const Tensor& t, IntArrayRef dims, bool unbiased, bool keepdim);
/// Variance dividing by N - correction (0 or less gives inf/nan, as PyTorch).
Tensor var_correction(const Tensor& t, IntArrayRef dims, int64_t correction, bool keepdim);
Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim);
Tensor softmax(const Tensor& t, int64_t dim);
/// log_softmax; fused along a contiguous last dim (Note [Fused log_softmax]).
Tensor log_softmax(const Tensor& t, int64_t dim);
/// log_softmax composed of amax, exp, sum and log: the fused kernels' reference.
Tensor log_softmax_composite(const Tensor& t, int64_t dim);
/// log_softmax's backward from its output: grad_out - exp(out) * sum(grad_out, dim), fused along
/// a contiguous last dim.
Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& out, int64_t dim);
/// softmax's backward from its output: out * (grad_out - sum(grad_out * out, dim)), fused along a
/// contiguous last dim.
Tensor softmax_backward(const Tensor& grad_out, const Tensor& out, int64_t dim);

// ---- sorting and scans (Note [Sort order] in sort_order.h) ----
/// int64 positions that sort `t` along dim: stable, NaN last ascending and first descending.
Tensor argsort(const Tensor& t, int64_t dim, bool descending);
/// Running sums along dim (from the end when `reverse`); integer and bool inputs sum in int64.
Tensor cumsum(const Tensor& t, int64_t dim, bool reverse = false);

// ---- linear algebra ----
/// torch.matmul for every shape case (1-d, 2-d, batched, broadcast batch).
Tensor matmul(const Tensor& a, const Tensor& b);
Tensor mm(const Tensor& a, const Tensor& b);
/// bias + a @ b for 2-d a [m, k] and b [k, n] of one dtype (torch.addmm with beta = alpha = 1);
/// bias (optional) broadcasts to [m, n] and is written first, then GEMM adds into it (beta = 1):
/// no temporary and no second pass over the output. Transposed operands go to GEMM as they lie.
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b);

// ---- joining and indexing ----
Tensor cat(const std::vector<Tensor>& ts, int64_t dim);
Tensor stack(const std::vector<Tensor>& ts, int64_t dim);
std::vector<Tensor> split(const Tensor& t, int64_t split_size, int64_t dim);
std::vector<Tensor> split_with_sizes(const Tensor& t, IntArrayRef sizes, int64_t dim);
std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t dim);
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
/// out = zeros(shape of t) then out.index_add_(dim, index, src) — index_select's backward.
Tensor index_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& t, int64_t dim, const Tensor& index, const Tensor& src);

// ---- helpers for front-ends ----
/// Wraps a possibly negative dim into [0, ndim); throws naming `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);
/// NumPy broadcast of two shapes; throws naming `op` and both shapes.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op);
/// Contiguous (row-major) strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
/// Throws unless every tensor is defined and on the same device; names `op` and the devices.
void check_same_device(const char* op, std::initializer_list<const Tensor*> ts);
/// The dtype PyTorch's result_type gives (dimensioned > 0-dim tensors > scalars, by category).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);
/// A kernel view of a tensor.
KernelTensor kernel_tensor(const Tensor& t);
/// `t` viewed with `shape` via stride-0 broadcast (no copy); shape must be broadcast-compatible.
KernelTensor kernel_tensor_broadcast(const Tensor& t, IntArrayRef shape);

}  // namespace wick::native
