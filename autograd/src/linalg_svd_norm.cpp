// wick::linalg's SVD and norms: svd, svdvals, matrix_norm and vector_norm
// (wick/autograd/linalg.h). svd's gradient is PyTorch 1.13's svd_backward (FunctionsManual.cpp),
// the norms are compositions as in PyTorch's LinearAlgebra.cpp.
#include <cmath>

#include "linalg_internal.h"
#include "wick/core/error.h"

namespace wick::linalg {

using namespace wick::detail;
using namespace detail;

namespace {
// a / b where a is nonzero, 0 where a is 0: a missing gradient (filled with zeros) contributes
// nothing even where b is 0, as the terms PyTorch skips for an undefined gradient.
Tensor div_nonzero(const Tensor& a, const Tensor& b) { return a / where(eq(a, zeros_like(a)), 1.0, b); }

// PyTorch 1.13's svd_backward for U [..., m, k], S [..., k], Vh [..., k, n] (full_matrices:
// U's first k columns and Vh's first k rows, their gradients narrowed alike). svdvals records the
// same node with U and Vh as hidden outputs: their gradients are zeros, and div_nonzero makes the
// formula PyTorch's U diag(gS) Vh then, finite for repeated and zero singular values; in a double
// backward they are not zero, and the full formula differentiates through U and Vh.
Tensor svd_backward(Tensor gU, const Tensor& gS, Tensor gVh, Tensor U, const Tensor& S, Tensor Vh, bool full) {
  const int64_t m = U.size(-2), n = Vh.size(-1), k = S.size(-1);
  if (full) {
    gU = narrow(gU, -1, 0, k);
    U = narrow(U, -1, 0, k);
    gVh = narrow(gVh, -2, 0, k);
    Vh = narrow(Vh, -2, 0, k);
  }
  const Tensor UhgU = matmul(mT(U), gU), VhgV = matmul(Vh, mT(gVh));
  const Tensor skewU = UhgU - mT(UhgU), skewV = VhgV - mT(VhgV);
  const Tensor S2 = S * S;
  const Tensor E = unsqueeze(S2, -2) - unsqueeze(S2, -1);  // E[i, j] = s_j^2 - s_i^2
  Tensor gA = div_nonzero(skewU * unsqueeze(S, -2) + unsqueeze(S, -1) * skewV, E) + wick::diag_embed(gS);
  if (m > n) {  // gA = [U gA + (I - U U^T) gU S^{-1}] Vh
    gA = matmul(U, gA);
    const Tensor gUSinv = div_nonzero(gU, unsqueeze(S, -2));
    gA = gA + gUSinv - matmul(U, matmul(mT(U), gUSinv));
    return matmul(gA, Vh);
  }
  if (m < n) {  // gA = U [gA Vh + S^{-1} gVh (I - V Vh)]
    gA = matmul(gA, Vh);
    const Tensor SinvgVh = div_nonzero(gVh, unsqueeze(S, -1));
    gA = gA + SinvgVh - matmul(matmul(SinvgVh, mT(Vh)), Vh);
    return matmul(U, gA);
  }
  return matmul(U, matmul(gA, Vh));
}

std::tuple<Tensor, Tensor, Tensor> svd_impl(const Tensor& A, bool full_matrices, bool values_only) {
  const bool grad = needs_grad({&A});
  auto [U, S, Vh] = native::lapack_svd(A, full_matrices, !values_only || grad);
  if (grad) {
    record_function("LinalgSvdBackward", {A}, {U, S, Vh},
                    [full_matrices](const VL& g, const VL& s) -> VL {
                      return {svd_backward(g[0], g[1], g[2], s[0], s[1], s[2], full_matrices)};
                    },
                    {}, {U, S, Vh});
  }
  return {U, S, Vh};
}

// A converted to `dtype` when given (PyTorch's dtype= argument), after the common checks.
Tensor norm_input(const Tensor& A, std::optional<DType> dtype, const char* op, bool matrix) {
  WICK_CHECK(A.defined(), "{}: the input is an undefined tensor", op);
  WICK_CHECK_TYPE(is_floating(A.dtype()), "{}: expected a floating-point input (float32 or float64) but got {}", op,
                  A.dtype());
  WICK_CHECK_TYPE(!dtype || is_floating(*dtype), "{}: dtype must be float32 or float64, got {}", op, *dtype);
  WICK_CHECK(!matrix || A.dim() >= 2, "{}: The input tensor A must have at least 2 dimensions, but it has shape {}", op,
             shape_str(A));
  return dtype && *dtype != A.dtype() ? to(A, A.device(), *dtype) : A;
}

// The two matrix dims, wrapped and distinct.
std::pair<int64_t, int64_t> matrix_dims(const Tensor& A, IntArrayRef dim, const char* op) {
  WICK_CHECK(dim.size() == 2, "{}: dim must be a 2-tuple, got {} dims", op, dim.size());
  const int64_t d0 = native::wrap_dim(dim[0], A.dim(), op), d1 = native::wrap_dim(dim[1], A.dim(), op);
  WICK_CHECK(d0 != d1, "{}: dims must be different, got ({}, {}) for the input {}", op, dim[0], dim[1], shape_str(A));
  return {d0, d1};
}

// The singular values of A's matrices over (d0, d1) reduced over their last dim by `reduce`,
// with keepdim restoring d0 and d1 as size-1 dims.
template <typename F>
Tensor spectral(const Tensor& A, int64_t d0, int64_t d1, bool keepdim, F reduce) {
  DimVector perm;
  for (int64_t i = 0; i < A.dim(); ++i)
    if (i != d0 && i != d1) perm.push_back(i);
  perm.push_back(d0);
  perm.push_back(d1);
  Tensor r = reduce(svdvals(permute(A, perm)));
  if (keepdim) {
    r = unsqueeze(r, std::min(d0, d1));
    r = unsqueeze(r, std::max(d0, d1));
  }
  return r;
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices) {
  return svd_impl(A, full_matrices, false);
}

Tensor svdvals(const Tensor& A) { return std::get<1>(svd_impl(A, false, true)); }

Tensor vector_norm(const Tensor& A, double ord, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const Tensor x = norm_input(A, dtype, "linalg.vector_norm", false);
  return norm(x, ord, dim, keepdim);
}

Tensor matrix_norm(const Tensor& A, const std::string& ord, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const char* op = "linalg.matrix_norm";
  const Tensor x = norm_input(A, dtype, op, true);
  auto [d0, d1] = matrix_dims(x, dim, op);
  WICK_CHECK(ord == "fro" || ord == "nuc", "{}: Order {} not supported; give \"fro\", \"nuc\" or a number", op, ord);
  if (ord == "fro") return norm(x, 2.0, {d0, d1}, keepdim);
  return spectral(x, d0, d1, keepdim, [](const Tensor& s) { return sum(s, {-1}); });
}

Tensor matrix_norm(const Tensor& A, double ord, IntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const char* op = "linalg.matrix_norm";
  const Tensor x = norm_input(A, dtype, op, true);
  auto [d0, d1] = matrix_dims(x, dim, op);
  const double a = std::abs(ord);
  WICK_CHECK(a == 1 || a == 2 || std::isinf(a),
             "{}: Order {} not supported; give 1, -1, 2, -2, inf, -inf, "
             "\"fro\" or \"nuc\"",
             op, ord);
  if (a == 2) {
    return spectral(x, d0, d1, keepdim, [ord](const Tensor& s) { return ord > 0 ? amax(s, {-1}) : amin(s, {-1}); });
  }
  // 1: the largest (smallest) column sum of |a|; inf: the largest (smallest) row sum.
  const int64_t summed = std::isinf(a) ? d1 : d0, reduced = std::isinf(a) ? d0 : d1;
  const Tensor sums = sum(abs(x), {summed}, true);
  Tensor r = ord > 0 ? amax(sums, {reduced}, true) : amin(sums, {reduced}, true);
  if (!keepdim) r = squeeze(squeeze(r, std::max(d0, d1)), std::min(d0, d1));
  return r;
}

}  // namespace wick::linalg
