// Reductions over all elements (max, min), standard deviation and p-norms. Composed of the
// differentiable reductions, except where PyTorch defines the gradient as 0 at a zero that the
// composite would turn into NaN: std where it is 0, p = 2 where the norm is 0.
#include <cmath>
#include <limits>

#include "op_helpers.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

Tensor max(const Tensor& a) {
  WICK_CHECK(a.defined() && a.numel() > 0,
             "max: expects a non-empty tensor, got {}; max over no elements has no "
             "value",
             a.defined() ? fmt::format("shape [{}]", fmt::join(a.sizes(), ", ")) : "an undefined tensor");
  return amax(a, {}, false);
}

Tensor min(const Tensor& a) {
  WICK_CHECK(a.defined() && a.numel() > 0,
             "min: expects a non-empty tensor, got {}; min over no elements has no "
             "value",
             a.defined() ? fmt::format("shape [{}]", fmt::join(a.sizes(), ", ")) : "an undefined tensor");
  return amin(a, {}, false);
}

namespace {
// std = sqrt(var), whose gradient is 0 where std is 0, as PyTorch's std_backward: sqrt's
// g / (2 * 0) = inf times var's centred 0 gave NaN for every constant row. The backward is
// written on differentiable ops (double backward), with 1 in place of the zeros under sqrt so
// that the branch where() drops has no infinity for its own gradient to multiply.
Tensor std_of_var(const Tensor& v) {
  Tensor out = native::unary(UnaryOp::Sqrt, v);
  if (needs_grad({&v})) {
    record_function("StdBackward", {v}, {out},
                    [](const VL& g, const VL& s) -> VL {
                      const Tensor is_zero = eq(s[0], zeros_like(s[0]));
                      const Tensor safe = where(is_zero, 1.0, s[0]);
                      return {where(is_zero, 0.0, div(g[0], sqrt(safe) * 2.0))};
                    },
                    {v});
  }
  return out;
}
}  // namespace

Tensor std(const Tensor& a) { return std_of_var(var(a)); }
Tensor std(const Tensor& a, IntArrayRef dims, bool unbiased, bool keepdim) {
  return std_of_var(var(a, dims, unbiased, keepdim));
}
Tensor std(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim) {
  return std_of_var(var(a, dims, correction, keepdim));
}

namespace {
// The Euclidean norm: one node whose backward is g * a / norm, 0 where the norm is 0.
Tensor norm2(const Tensor& a, IntArrayRef dims, bool keepdim) {
  Tensor out = native::unary(UnaryOp::Sqrt, native::sum(native::binary(BinaryOp::Mul, a, a), dims, keepdim));
  if (needs_grad({&a})) {
    std::vector<int64_t> d = dims.vec();
    const bool all_dims = d.empty();
    const int64_t nd = a.dim();
    record_function("NormBackward", {a}, {out},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor n = s[1], gk = g[0];
                      if (!keepdim && nd > 0) {
                        DimVector ks(s[0].sizes());
                        for (size_t i = 0; i < ks.size(); ++i) {
                          bool reduced = all_dims;
                          for (int64_t x : d)
                            reduced = reduced || native::wrap_dim(x, nd, "norm") == static_cast<int64_t>(i);
                          if (reduced) ks[i] = 1;
                        }
                        n = reshape(n, ks);
                        gk = reshape(gk, ks);
                      }
                      Tensor ratio = div(mul(gk, s[0]), n);
                      return {where(native::binary(BinaryOp::Eq, n, Scalar(0.0)), Scalar(0.0), ratio)};
                    },
                    {a}, {out});
  }
  return out;
}
}  // namespace

Tensor norm(const Tensor& a, double p, IntArrayRef dims, bool keepdim) {
  WICK_CHECK(a.defined(), "norm: the input is an undefined tensor");
  WICK_CHECK_TYPE(is_floating(a.dtype()),
                  "norm: expects a floating-point input, got {}; convert with "
                  ".to(wick::kFloat32) first",
                  dtype_name(a.dtype()));
  WICK_CHECK(!std::isnan(p), "norm: p is NaN; give a real order (2, 1, inf, ...)");
  const double inf = std::numeric_limits<double>::infinity();
  if (p == 2.0) return norm2(a, dims, keepdim);
  if (p == 1.0) return sum(abs(a), dims, keepdim);
  if (p == inf) return amax(abs(a), dims, keepdim);
  if (p == -inf) return amin(abs(a), dims, keepdim);
  if (p == 0.0) {
    // The count of nonzeros: piecewise constant, so its gradient is 0 (kept in the graph, as PyTorch's).
    Tensor count = native::to(native::binary(BinaryOp::Ne, a, Scalar(0.0)), a.device(), a.dtype());
    Tensor out = native::sum(count, dims, keepdim);
    if (needs_grad({&a})) {
      DimVector shape(a.sizes());
      record_function("NormBackward", {a}, {out},
                      [=](const VL& g, const VL&) -> VL { return {zeros(shape, g[0].options())}; });
    }
    return out;
  }
  // (sum |a|^p)^(1/p), with the gradient PyTorch's norm_backward gives: 0 at an entry that is 0
  // (the composite's p |a|^(p-1) sign(a) was inf * 0 = NaN there for p < 1) and, for p > 0, 0
  // where the norm is 0 (the outer (1/p) s^(1/p - 1) is inf at s = 0 for p > 1). Each zero is
  // replaced by 1 under pow and selected out after, so no dropped branch holds an infinity for
  // its gradient to multiply; the values are unchanged (0^p is 0, or inf for p < 0).
  const Tensor magnitude = abs(a);
  const Tensor entry_zero = eq(magnitude, zeros_like(magnitude));
  const Tensor powered = where(entry_zero, p > 0 ? 0.0 : inf, pow(where(entry_zero, 1.0, magnitude), Scalar(p)));
  const Tensor s = sum(powered, dims, keepdim);
  if (p < 0) return pow(s, Scalar(1.0 / p));
  const Tensor sum_zero = eq(s, zeros_like(s));
  return where(sum_zero, 0.0, pow(where(sum_zero, 1.0, s), Scalar(1.0 / p)));
}

Tensor norm(const Tensor& a, double p) { return norm(a, p, {}, false); }

}  // namespace wick
