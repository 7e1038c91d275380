// wick::linalg's LU family: inv, det, slogdet and solve (wick/autograd/linalg.h), with PyTorch
// 1.13's gradients (FunctionsManual.cpp: linalg_solve_backward, linalg_det_backward,
// slogdet_backward, and derivatives.yaml's inverse formula).
#include <cfloat>

#include "linalg_internal.h"
#include "wick/core/error.h"

namespace wick::linalg {

using namespace wick::detail;
using namespace detail;

Tensor detail::solve_square(const Tensor& A, const Tensor& B, const char* op) {
  Tensor X = native::lapack_solve(A, B, op);
  if (needs_grad({&A, &B})) {
    const bool ra = A.requires_grad(), rb = B.requires_grad();
    record_function("LinalgSolveBackward", {A, B}, {X},
                    [=](const VL& g, const VL& s) -> VL {
                      Tensor gB = solve_square(mT(s[0]), g[0]);
                      return {ra ? -matmul(gB, mT(s[1])) : Tensor(), rb ? gB : Tensor()};
                    },
                    {A}, {X});
  }
  return X;
}

Tensor inv(const Tensor& A) {
  native::linalg_check_matrix(A, "linalg.inv", true);
  const int64_t n = A.size(-1);
  const Tensor I = native::expand(native::eye(n, n, A.dtype(), A.device()), A.sizes());
  Tensor X = native::lapack_solve(A, I, "linalg.inv");
  if (needs_grad({&A})) {
    record_function("LinalgInvBackward", {A}, {X},
                    [](const VL& g, const VL& s) -> VL { return {-matmul(mT(s[0]), matmul(g[0], mT(s[0])))}; }, {},
                    {X});
  }
  return X;
}

namespace {
// PyTorch's prod_safe_zeros_backward along the last dim: the gradient of prod(s) without dividing
// by s (exclusive products from both ends), so zeros are fine.
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& s) {
  const int64_t n = s.size(-1), d = s.dim() - 1;
  if (n == 1) return grad;
  const Tensor one = ones_like(narrow(s, d, 0, 1));
  const Tensor before = cumprod(cat({one, narrow(s, d, 0, n - 1)}, d), d);
  const Tensor after = flip(cumprod(cat({one, flip(narrow(s, d, 1, n - 1), {d})}, d), d), {d});
  return grad * (before * after);
}

// d det / dA for det = det(A): g det A^{-T} by a solve where |det| >= eps ||A||_F, and PyTorch's
// SVD formula where the matrix is singular or nearly so (a solve would fail or lose accuracy).
Tensor det_backward(const Tensor& g, const Tensor& d, const Tensor& A) {
  const int64_t n = A.size(-1);
  if (A.numel() == 0) return zeros_like(A);
  const Tensor scaled = unsqueeze(unsqueeze(g * d, -1), -1) * eye_like(A, n);  // diag_embed of g det
  const double eps = A.dtype() == kFloat32 ? FLT_EPSILON : DBL_EPSILON;
  Tensor singular;
  bool any_singular = false, all_singular = false;
  {
    NoGradGuard no_grad;
    // PyTorch's cutoff, with <= so that an all-zero matrix (0 <= 0) is singular; NaN: not singular
    singular = le(abs(d), norm(A, 2.0, {-2, -1}, false) * eps);
    any_singular = any(singular).item<bool>();
    all_singular = all(singular).item<bool>();
  }
  Tensor regular;
  if (!all_singular) {  // the singular matrices replaced by I, whose solve is selected out below
    const Tensor safe = any_singular ? where(unsqueeze(unsqueeze(singular, -1), -1), eye_like(A, n), A) : A;
    regular = solve_square(mT(safe), scaled, "linalg.det");
    if (!any_singular) return regular;
  }
  auto [U, S, Vh] = svd(A, false);
  const Tensor alpha = det(U) * det(Vh) * g;
  const Tensor D = prod_safe_zeros_backward(unsqueeze(alpha, -1), S);
  const Tensor via_svd = matmul(U * unsqueeze(D, -2), Vh);
  return all_singular ? via_svd : where(unsqueeze(unsqueeze(singular, -1), -1), via_svd, regular);
}
}  // namespace

Tensor det(const Tensor& A) {
  native::linalg_check_matrix(A, "linalg.det", true);
  Tensor d = std::get<0>(native::lapack_det(A));
  if (needs_grad({&A})) {
    record_function("LinalgDetBackward", {A}, {d},
                    [](const VL& g, const VL& s) -> VL { return {det_backward(g[0], s[1], s[0])}; }, {A}, {d});
  }
  return d;
}

std::tuple<Tensor, Tensor> slogdet(const Tensor& A) {
  native::linalg_check_matrix(A, "linalg.slogdet", true);
  auto [d, sign, logabsdet] = native::lapack_det(A);
  if (needs_grad({&A})) {
    // sign is not differentiable (PyTorch's output_differentiability); logabsdet's gradient is
    // g A^{-T}, a solve that refuses a singular A (logabsdet -inf) as PyTorch's does in grad mode.
    record_function("LinalgSlogdetBackward", {A}, {logabsdet},
                    [](const VL& g, const VL& s) -> VL {
                      const Tensor gI = unsqueeze(unsqueeze(g[0], -1), -1) * eye_like(s[0], s[0].size(-1));
                      return {solve_square(mT(s[0]), gI, "linalg.slogdet")};
                    },
                    {A});
  }
  return {sign, logabsdet};
}

Tensor solve(const Tensor& A, const Tensor& B, bool left) {
  const char* op = "linalg.solve";
  native::linalg_check_matrix(A, op, true);
  WICK_CHECK(B.defined(), "{}: B is an undefined tensor", op);
  WICK_CHECK_TYPE(B.dtype() == A.dtype(), "{}: A {} is {} but B {} is {}; give both one dtype", op, shape_str(A),
                  A.dtype(), shape_str(B), B.dtype());
  native::check_same_device(op, {&A, &B});
  // PyTorch 1.13's rule: B is a vector (or a batch of them) when 1-d or of A's batch shape plus n.
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && IntArrayRef(B.sizes().data(), B.dim()) ==
                                                                     IntArrayRef(A.sizes().data(), A.dim() - 1));
  if (!left) return vector ? solve(mT(A), B, true) : mT(solve(mT(A), mT(B), true));
  const Tensor Bm = vector ? unsqueeze(B, -1) : B;
  const int64_t n = A.size(-1);
  WICK_CHECK(Bm.dim() >= 2 && Bm.size(-2) == n,
             "{}: Incompatible shapes of A and B for the equation AX = B: A {} and B {} (B needs {} rows)", op,
             shape_str(A), shape_str(B), n);
  DimVector batch = native::broadcast_shapes(IntArrayRef(A.sizes().data(), A.dim() - 2),
                                             IntArrayRef(Bm.sizes().data(), Bm.dim() - 2), op);
  DimVector sa = batch, sb = batch;
  sa.push_back(n);
  sa.push_back(n);
  sb.push_back(n);
  sb.push_back(Bm.size(-1));
  const Tensor X = solve_square(expand(A, sa), expand(Bm, sb), op);
  return vector ? squeeze(X, -1) : X;
}

}  // namespace wick::linalg
