// wick::linalg's factorisations: cholesky, qr, eigh and eigvalsh (wick/autograd/linalg.h), with
// PyTorch 1.13's gradients (FunctionsManual.cpp: cholesky_backward, linalg_qr_backward,
// linalg_eig_backward for Hermitian input), written with differentiable ops.
#include <cctype>

#include "linalg_internal.h"
#include "wick/core/error.h"

namespace wick::linalg {

using namespace wick::detail;
using namespace detail;

namespace {
// gA = L^{-T} Phi(L^T gL) L^{-1} with Phi(P) = tril(P) with its diagonal halved, mirrored (Iain
// Murray, arXiv 1602.07527): symmetric, as PyTorch's. The triangular solves are general solves.
Tensor cholesky_backward(Tensor gL, bool upper, Tensor L) {
  if (upper) {
    L = mT(L);
    gL = mT(gL);
  }
  const Tensor P = tril(matmul(mT(L), gL));
  const Tensor phi = (P + mT(tril(P, -1))) * 0.5;
  const Tensor left = solve_square(mT(L), phi, "linalg.cholesky");  // L^{-T} Phi
  return mT(solve_square(mT(L), mT(left), "linalg.cholesky"));      // (L^{-T} Phi) L^{-1}
}

// m >= n, Q [..., m, n], R [..., n, n]: gA = (gQ + Q copyltu(M)) R^{-T}, M = R gR^T - gQ^T Q,
// copyltu(M) = tril(M) + tril(M, -1)^T.
Tensor qr_backward(const Tensor& gQ, const Tensor& gR, const Tensor& Q, const Tensor& R) {
  const Tensor M = matmul(R, mT(gR)) - matmul(mT(gQ), Q);
  const Tensor B = gQ + matmul(Q, tril(M) + mT(tril(M, -1)));
  return mT(solve_square(R, mT(B), "linalg.qr"));
}

// gA = V (diag(gL) + sym(V^T gV) / E) V^T, E[i, j] = L_j - L_i, sym(X) = (X - X^T) / 2. A zero
// numerator (a missing eigenvector gradient, filled with zeros) gives 0 where E is 0, as PyTorch's
// formula without gV does (eigvalsh: V diag(gL) V^T); a nonzero one over a repeated eigenvalue
// gives inf, as PyTorch's. eigvalsh records this node with V as a hidden output, so a double
// backward differentiates through V.
Tensor eigh_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V) {
  const Tensor VhgV = matmul(mT(V), gV);
  const Tensor skew = (VhgV - mT(VhgV)) * 0.5;
  const Tensor E = unsqueeze(L, -2) - unsqueeze(L, -1);
  const Tensor inner = skew / where(eq(skew, zeros_like(skew)), 1.0, E) + wick::diag_embed(gL);
  return matmul(V, matmul(inner, mT(V)));
}

bool parse_upper(const std::string& uplo, const char* op) {
  WICK_CHECK(uplo.size() == 1 && (std::toupper(uplo[0]) == 'L' || std::toupper(uplo[0]) == 'U'),
             "{}: Expected UPLO argument to be 'L' or 'U', but got '{}'", op, uplo);
  return std::toupper(uplo[0]) == 'U';
}

std::tuple<Tensor, Tensor> eigh_impl(const Tensor& A, const std::string& UPLO, bool values_only, const char* op) {
  native::linalg_check_matrix(A, op, true);
  const bool upper = parse_upper(UPLO, op);
  const bool grad = needs_grad({&A});
  auto [L, V] = native::lapack_eigh(A, upper, !values_only || grad, op);
  if (grad) {
    record_function("LinalgEighBackward", {A}, {L, V},
                    [](const VL& g, const VL& s) -> VL { return {eigh_backward(g[0], g[1], s[0], s[1])}; }, {}, {L, V});
  }
  return {L, V};
}
}  // namespace

Tensor cholesky(const Tensor& A, bool upper) {
  Tensor L = native::lapack_cholesky(A, upper);
  if (needs_grad({&A})) {
    record_function("LinalgCholeskyBackward", {A}, {L},
                    [upper](const VL& g, const VL& s) -> VL { return {cholesky_backward(g[0], upper, s[0])}; }, {},
                    {L});
  }
  return L;
}

std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode) {
  const char* op = "linalg.qr";
  WICK_CHECK(mode == "reduced" || mode == "complete" || mode == "r",
             "{}: qr received unrecognized mode '{}' but expected one of 'reduced' (default), 'r', or 'complete'", op,
             mode);
  native::linalg_check_matrix(A, op, false);
  const bool compute_q = mode != "r", complete = mode == "complete";
  const int64_t m = A.size(-2), n = A.size(-1);
  const bool grad = needs_grad({&A});
  if (grad && compute_q && m < n) {
    // A = [X | Y] with X square: Q R_X = X, and R = [R_X | Q^T Y]. The same Q and R as LAPACK's
    // (the first m reflectors depend on X alone), and PyTorch's gradient for m < n.
    auto [Q, RX] = qr(narrow(A, -1, 0, m), mode);
    return {Q, cat({RX, matmul(mT(Q), narrow(A, -1, m, n - m))}, -1)};
  }
  auto [Q, R] = native::lapack_qr(A, compute_q, complete);
  if (!grad) return {Q, R};
  if (!compute_q || (complete && m > n)) {
    const std::string why = !compute_q
                                ? "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                                  "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
                                  "linalg.qr."
                                : "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.";
    record_function("LinalgQrBackward", {A}, compute_q ? std::vector<Tensor>{Q, R} : std::vector<Tensor>{R},
                    [why](const VL&, const VL&) -> VL { WICK_FAIL_T(NotImplementedError, "linalg.qr: {}", why); });
    return {Q, R};
  }
  record_function("LinalgQrBackward", {A}, {Q, R},
                  [](const VL& g, const VL& s) -> VL { return {qr_backward(g[0], g[1], s[0], s[1])}; }, {}, {Q, R});
  return {Q, R};
}

std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& UPLO) {
  return eigh_impl(A, UPLO, false, "linalg.eigh");
}

Tensor eigvalsh(const Tensor& A, const std::string& UPLO) {
  return std::get<0>(eigh_impl(A, UPLO, true, "linalg.eigvalsh"));
}

}  // namespace wick::linalg
