// Reductions over all elements (max, min), standard deviation and p-norms. Composed of the
// differentiable reductions, except p = 2, whose gradient PyTorch defines as 0 where the norm
// is 0 (the composite sqrt would give NaN there).
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

Tensor std(const Tensor& a) { return sqrt(var(a)); }
Tensor std(const Tensor& a, IntArrayRef dims, bool unbiased, bool keepdim) {
  return sqrt(var(a, dims, unbiased, keepdim));
}
Tensor std(const Tensor& a, IntArrayRef dims, std::optional<int64_t> correction, bool keepdim) {
  return sqrt(var(a, dims, correction, keepdim));
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
  return pow(sum(pow(abs(a), Scalar(p)), dims, keepdim), Scalar(1.0 / p));
}

Tensor norm(const Tensor& a, double p) { return norm(a, p, {}, false); }

}  // namespace wick
