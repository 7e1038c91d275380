// Reductions over dims (with keepdim), arg reductions, and the composites built on them.
#include <cmath>
#include <limits>

#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/stubs.h"

namespace wick::native {

namespace {
// Normalised, deduplicated reduce mask; empty dims means all dims.
std::vector<bool> reduce_mask(const Tensor& t, IntArrayRef dims, const char* op) {
  std::vector<bool> mask(static_cast<size_t>(t.dim()), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, t.dim(), op);
    if (t.dim() == 0) continue;
    WICK_CHECK(!mask[w] || dims.empty(), "{}: dim {} appears more than once in [{}]", op, w, fmt::join(dims, ", "));
    mask[w] = true;
  }
  return mask;
}
DimVector keepdim_shape(const Tensor& t, const std::vector<bool>& mask) {
  DimVector s(t.sizes());
  for (size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) s[d] = 1;
  return s;
}
Tensor drop_dims(const Tensor& t, const std::vector<bool>& mask) {
  DimVector s;
  for (size_t d = 0; d < mask.size(); ++d)
    if (!mask[d]) s.push_back(t.sizes()[d]);
  return view(t, s);
}
const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Prod:
      return "prod";
    case ReduceOp::Max:
      return "amax";
    case ReduceOp::Min:
      return "amin";
  }
  return "reduce";
}
}  // namespace

Tensor reduce(ReduceOp op, const Tensor& t, IntArrayRef dims, bool keepdim) {
  const char* name = reduce_name(op);
  WICK_CHECK(t.defined(), "{}: the input is an undefined tensor", name);
  auto mask = reduce_mask(t, dims, name);
  DimVector ks = keepdim_shape(t, mask);
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    for (size_t d = 0; d < mask.size(); ++d)
      WICK_CHECK(!mask[d] || t.sizes()[d] > 0,
                 "{}: cannot reduce over dim {} of size 0 (shape [{}]): the "
                 "operation has no identity",
                 name, d, fmt::join(t.sizes(), ", "));
  }
  DType out_dtype = t.dtype();
  if ((op == ReduceOp::Sum || op == ReduceOp::Prod) && !is_floating(out_dtype)) out_dtype = kInt64;
  Tensor in = out_dtype == t.dtype() ? t : to(t, t.device(), out_dtype);
  Tensor out = empty(ks, out_dtype, t.device());
  if (out.numel()) {
    if (in.numel() == 0)
      backend(t.device()).fill(kernel_tensor(out), op == ReduceOp::Prod ? 1.0 : 0.0);
    else
      backend(t.device()).reduce(op, kernel_tensor(out), kernel_tensor(in));
  }
  return keepdim ? out : drop_dims(out, mask);
}

Tensor sum(const Tensor& t, IntArrayRef dims, bool keepdim) { return reduce(ReduceOp::Sum, t, dims, keepdim); }
Tensor amax(const Tensor& t, IntArrayRef dims, bool keepdim) { return reduce(ReduceOp::Max, t, dims, keepdim); }
Tensor amin(const Tensor& t, IntArrayRef dims, bool keepdim) { return reduce(ReduceOp::Min, t, dims, keepdim); }

Tensor mean(const Tensor& t, IntArrayRef dims, bool keepdim) {
  WICK_CHECK_TYPE(t.defined() && is_floating(t.dtype()),
                  "mean: expected a floating-point input but got {}; convert "
                  "with .to(wick::kFloat32) first",
                  t.defined() ? dtype_name(t.dtype()) : "an undefined tensor");
  auto mask = reduce_mask(t, dims, "mean");
  int64_t n = 1;
  for (size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) n *= t.sizes()[d];
  Tensor s = sum(t, dims, keepdim);
  return binary(BinaryOp::Div, s, Scalar(static_cast<double>(n)));
}

Tensor var(const Tensor& t, IntArrayRef dims, bool unbiased, bool keepdim) {
  return var_correction(t, dims, unbiased ? 1 : 0, keepdim);
}

Tensor var_correction(const Tensor& t, IntArrayRef dims, int64_t correction, bool keepdim) {
  WICK_CHECK_TYPE(t.defined() && is_floating(t.dtype()), "var: expected a floating-point input");
  auto mask = reduce_mask(t, dims, "var");
  int64_t n = 1;
  for (size_t d = 0; d < mask.size(); ++d)
    if (mask[d]) n *= t.sizes()[d];
  Tensor m = mean(t, dims, true);
  Tensor c = binary(BinaryOp::Sub, t, m);
  Tensor s = sum(binary(BinaryOp::Mul, c, c), dims, keepdim);
  const double denom = static_cast<double>(n) - static_cast<double>(correction);  // any int64 correction
  return binary(BinaryOp::Div, s, Scalar(denom > 0 ? denom : 0.0));
}

Tensor logsumexp(const Tensor& t, IntArrayRef dims, bool keepdim) {
  WICK_CHECK_TYPE(t.defined() && is_floating(t.dtype()), "logsumexp: expected a floating-point input");
  // Nothing to sum: log(0) = -inf where the reduced dims are empty (PyTorch), and no max to
  // shift by (amax refuses an empty reduction).
  if (t.numel() == 0) return unary(UnaryOp::Log, sum(t, dims, keepdim));
  Tensor m = amax(t, dims, true);
  // An infinite max (all -inf, or +inf) would give nan in x - m: shift by 0 there instead.
  Tensor finite = binary(BinaryOp::Eq, unary(UnaryOp::Abs, m), Scalar(std::numeric_limits<double>::infinity()));
  m = where(finite, zeros({}, t.dtype(), t.device()), m);
  Tensor s = sum(unary(UnaryOp::Exp, binary(BinaryOp::Sub, t, m)), dims, true);
  Tensor r = binary(BinaryOp::Add, unary(UnaryOp::Log, s), m);
  if (keepdim) return r;
  auto mask = reduce_mask(t, dims, "logsumexp");
  return drop_dims(r, mask);
}

Tensor softmax(const Tensor& t, int64_t dim) {
  WICK_CHECK_TYPE(t.defined() && is_floating(t.dtype()), "softmax: expected a floating-point input");
  dim = wrap_dim(dim, t.dim(), "softmax");
  // As log_softmax (Note [Fused log_softmax]): a backend's fused row kernel along a contiguous
  // last dim, the composite below for other layouts and backends without one.
  if (t.dim() > 0 && dim == t.dim() - 1 && t.is_contiguous() && t.numel() > 0 &&
      stubs::softmax_rows.find(t.device().type)) {
    Tensor out = empty(t.sizes(), t.dtype(), t.device());
    const int64_t cols = t.sizes()[dim];
    stubs::softmax_rows(t.device().type, t.dtype(), t.numel() / cols, cols, t.data_ptr(), out.data_ptr());
    return out;
  }
  if (t.numel() == 0) return empty(t.sizes(), t.dtype(), t.device());  // as PyTorch; amax refuses an empty dim
  Tensor m = amax(t, {dim}, true);
  Tensor e = unary(UnaryOp::Exp, binary(BinaryOp::Sub, t, m));
  return binary(BinaryOp::Div, e, sum(e, {dim}, true));
}

Tensor log_softmax(const Tensor& t, int64_t dim) {
  WICK_CHECK_TYPE(t.defined() && is_floating(t.dtype()), "log_softmax: expected a floating-point input");
  dim = wrap_dim(dim, t.dim(), "log_softmax");
  // Note [Fused log_softmax]: along a contiguous last dim a backend's fused row kernel (a stub,
  // Note [Dispatch stubs]) does it in one pass per row; the composite below stays as its reference and for other
  // layouts.
  if (t.dim() > 0 && dim == t.dim() - 1 && t.is_contiguous() && t.numel() > 0) {
    Tensor out = empty(t.sizes(), t.dtype(), t.device());
    const int64_t cols = t.sizes()[dim];
    if (stubs::log_softmax_rows.find(t.device().type)) {
      stubs::log_softmax_rows(t.device().type, t.dtype(), t.numel() / cols, cols, t.data_ptr(), out.data_ptr());
      return out;
    }
  }
  return log_softmax_composite(t, dim);
}

Tensor log_softmax_composite(const Tensor& t, int64_t dim) {
  WICK_CHECK_TYPE(t.defined() && is_floating(t.dtype()), "log_softmax: expected a floating-point input");
  dim = wrap_dim(dim, t.dim(), "log_softmax");
  if (t.numel() == 0) return empty(t.sizes(), t.dtype(), t.device());  // as PyTorch; amax refuses an empty dim
  Tensor m = amax(t, {dim}, true);
  Tensor shifted = binary(BinaryOp::Sub, t, m);
  Tensor lse = unary(UnaryOp::Log, sum(unary(UnaryOp::Exp, shifted), {dim}, true));
  return binary(BinaryOp::Sub, shifted, lse);
}

namespace {
Tensor arg_reduce(ArgReduceOp op, const Tensor& t, int64_t dim, bool keepdim, const char* name) {
  WICK_CHECK(t.defined(), "{}: the input is an undefined tensor", name);
  dim = wrap_dim(dim, t.dim(), name);  // a 0-dim tensor takes only 0 and -1, as PyTorch
  if (t.dim() == 0) return zeros({}, kInt64, t.device());
  WICK_CHECK(t.sizes()[dim] > 0, "{}: cannot take the {} over dim {} of size 0 (shape [{}])", name, name, dim,
             fmt::join(t.sizes(), ", "));
  DimVector ks(t.sizes());
  ks[dim] = 1;
  Tensor out = empty(ks, kInt64, t.device());
  if (out.numel()) backend(t.device()).arg_reduce(op, kernel_tensor(out), kernel_tensor(t), dim);
  return keepdim ? out : squeeze(out, dim);
}
}  // namespace

Tensor argmax(const Tensor& t, int64_t dim, bool keepdim) {
  return arg_reduce(ArgReduceOp::ArgMax, t, dim, keepdim, "argmax");
}
Tensor argmin(const Tensor& t, int64_t dim, bool keepdim) {
  return arg_reduce(ArgReduceOp::ArgMin, t, dim, keepdim, "argmin");
}

}  // namespace wick::native

namespace wick::native {

Tensor softmax_backward(const Tensor& grad_out, const Tensor& out, int64_t dim) {
  check_same_device("softmax_backward", {&grad_out, &out});
  WICK_CHECK(grad_out.sizes() == out.sizes() && grad_out.dtype() == out.dtype(),
             "softmax_backward: the gradient ({} [{}]) must match the output ({} [{}])", grad_out.dtype(),
             fmt::join(grad_out.sizes(), ", "), out.dtype(), fmt::join(out.sizes(), ", "));
  dim = wrap_dim(dim, out.dim(), "softmax_backward");
  if (out.dim() > 0 && dim == out.dim() - 1 && out.is_contiguous() && grad_out.is_contiguous() && out.numel() > 0 &&
      stubs::softmax_backward_rows.find(out.device().type)) {
    Tensor gi = empty(out.sizes(), out.dtype(), out.device());
    const int64_t cols = out.sizes()[dim];
    stubs::softmax_backward_rows(out.device().type, out.dtype(), out.numel() / cols, cols, grad_out.data_ptr(),
                                 out.data_ptr(), gi.data_ptr());
    return gi;
  }
  // out * (g - sum(g * out, dim))
  return binary(BinaryOp::Mul, out,
                binary(BinaryOp::Sub, grad_out, sum(binary(BinaryOp::Mul, grad_out, out), {dim}, true)));
}

Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& out, int64_t dim) {
  check_same_device("log_softmax_backward", {&grad_out, &out});
  WICK_CHECK(grad_out.sizes() == out.sizes() && grad_out.dtype() == out.dtype(),
             "log_softmax_backward: the gradient ({} [{}]) must match the output ({} [{}])", grad_out.dtype(),
             fmt::join(grad_out.sizes(), ", "), out.dtype(), fmt::join(out.sizes(), ", "));
  dim = wrap_dim(dim, out.dim(), "log_softmax_backward");
  if (out.dim() > 0 && dim == out.dim() - 1 && out.is_contiguous() && grad_out.is_contiguous() && out.numel() > 0) {
    Tensor gi = empty(out.sizes(), out.dtype(), out.device());
    const int64_t cols = out.sizes()[dim];
    if (stubs::log_softmax_backward_rows.find(out.device().type)) {
      stubs::log_softmax_backward_rows(out.device().type, out.dtype(), out.numel() / cols, cols, grad_out.data_ptr(),
                                       out.data_ptr(), gi.data_ptr());
      return gi;
    }
  }
  // g - exp(out) * sum(g, dim)
  return binary(BinaryOp::Sub, grad_out, binary(BinaryOp::Mul, unary(UnaryOp::Exp, out), sum(grad_out, {dim}, true)));
}

}  // namespace wick::native
