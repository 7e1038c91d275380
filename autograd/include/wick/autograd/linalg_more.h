#pragma once
// wick::linalg, the second set (included by wick/autograd/linalg.h, whose conventions hold here:
// float32 and float64 matrices batched over the leading dims, batch dims broadcast between the
// operands, LAPACK on the host, PyTorch 1.13's values and gradients composed of differentiable
// ops so that double backward works; docs/tensors.md, "Linear algebra").
//
// Errors: TypeError for a non-floating input or two dtypes; ValueError for bad shapes (naming the
// op and the shapes), a singular input where PyTorch 1.13 refuses one (lu_factor, matrix_power
// with n < 0, lstsq's "gels" on a rank-deficient matrix; the batch element is named), a bad
// driver, ord or pivots. solve_triangular, cholesky_solve, cholesky_inverse and lu_solve do not
// check for singular factors (infinities and NaN follow, as PyTorch's).
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "wick/core/tensor.h"

namespace wick::linalg {

/// X with A X = B (left) or X A = B for triangular A [..., n, n] (the upper or the lower triangle
/// is read; unitriangular: the diagonal is taken as ones) and B [..., n, k] (left) or [..., k, n].
/// Gradients: gB = solve_triangular(A^T, gX, !upper), gA = -gB X^T (left) or -X^T gB, kept to A's
/// triangle (without the diagonal when unitriangular).
Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true, bool unitriangular = false);

/// torch.cholesky_solve(B, L, upper): X with A X = B for A = L L^T (upper: A = U^T U) given the
/// factor L [..., n, n] and B [..., n, k]. Gradients as PyTorch's cholesky_solve_backward.
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);

/// torch.cholesky_inverse(L, upper): the inverse of A = L L^T (upper: U^T U) from the factor
/// L [..., n, n]. Gradient as PyTorch's cholesky_inverse_backward.
Tensor cholesky_inverse(const Tensor& L, bool upper = false);

/// (LU, pivots) of A [..., m, n] by partial pivoting, k = min(m, n): LU [..., m, n] packs the unit
/// lower L (below the diagonal) and U; pivots int64 [..., k], 1-based (PyTorch's are int32). An
/// exactly zero U[i, i] is a ValueError, as PyTorch's lu_factor (linalg::lu returns values
/// there). Gradient (of LU): PyTorch's lu_factor_ex_backward.
std::tuple<Tensor, Tensor> lu_factor(const Tensor& A);

/// (P, L, U) with A = P L U for A [..., m, n], k = min(m, n): P [..., m, m], unit lower L
/// [..., m, k], upper U [..., k, n]; singular A is fine. Gradient (of L and U): PyTorch's
/// linalg_lu_backward.
std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A);

/// torch.linalg.lu_solve(LU, pivots, B, left, adjoint): X with A X = B (left) or X A = B, A^T in
/// place of A with adjoint, for A = P L U given by lu_factor. Gradients (LU and B): PyTorch's
/// linalg_lu_solve_LU and lu_solve(LU, pivots, gX, left, !adjoint). The pivots are saved with
/// their version: an in-place write to them after the forward makes the backward a StateError.
Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true, bool adjoint = false);

/// torch.linalg.lstsq(A, B, rcond, driver): (solution [..., n, k], residuals, rank, singular_values)
/// for A [..., m, n] and B [..., m, k] (or a vector B, as solve decides). driver: "gelsy" (the
/// default, as PyTorch's on the CPU; "gels" is the default for CUDA tensors, as PyTorch's), "gelsd"
/// or "gels" (full rank only); "gelss" is not offered. Every driver runs on any device.
/// rcond defaults to eps * max(m, n). residuals [..., k]: the squared residual norms when m > n,
/// the driver is not gelsy and every matrix has full rank, else empty; rank int64 [...] (empty
/// for gels); singular_values [..., min(m, n)] for gelsd, else empty. Differentiable in the
/// solution only, through PyTorch's formula (the gradient of pinv(A) B).
std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A, const Tensor& B,
                                                 std::optional<double> rcond = std::nullopt,
                                                 const std::optional<std::string>& driver = std::nullopt);

/// The pseudoinverse [..., n, m] of A [..., m, n] through the SVD (hermitian: through eigh of the
/// symmetric A's lower triangle), singular values at or below max(atol, rtol * the largest)
/// dropped. rtol defaults to eps * max(m, n), or to 0 when atol > 0 is given (PyTorch's rule).
/// Gradient: PyTorch's pinv_backward. Scalar tolerances only (PyTorch also takes tensors).
Tensor pinv(const Tensor& A, std::optional<double> atol = std::nullopt, std::optional<double> rtol = std::nullopt,
            bool hermitian = false);

/// The number (int64 [...]) of singular values (hermitian: |eigenvalues|) above max(atol, rtol *
/// the largest), with pinv's defaults. PyTorch's older matrix_rank(A, tol) is atol = tol, rtol 0.
Tensor matrix_rank(const Tensor& A, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);

/// A^n for square A [..., n, n] by repeated squaring, A^0 = I, A^{-n} = inv(A)^n (a singular A is
/// inv's error). Differentiable through matmul and inv.
Tensor matrix_power(const Tensor& A, int64_t n);

/// The matrix exponential of square A [..., n, n]: scaling and squaring over a Taylor polynomial
/// of degree 1, 2, 4, 8, 12 or 18 (PyTorch's degrees and thresholds), the degree and the number of
/// squarings chosen per matrix from its own 1-norm, so that a matrix's value does not depend on
/// the rest of its batch (Note [matrix_exp per matrix]). Gradient: the upper right
/// block of matrix_exp([[A^T, g], [0, A^T]]), as PyTorch's.
Tensor matrix_exp(const Tensor& A);

/// The cross product of 3-vectors along `dim` of a and b (same number of dims, broadcast).
Tensor cross(const Tensor& a, const Tensor& b, int64_t dim = -1);

/// The product of tensors[0] ... tensors[n - 1] (the first and the last may be vectors, the others
/// matrices) in the cheapest order, as PyTorch's (the matrix-chain order).
Tensor multi_dot(const std::vector<Tensor>& tensors);

/// sum(x * y, dim) with x and y broadcast (torch.linalg.vecdot of real tensors).
Tensor vecdot(const Tensor& x, const Tensor& y, int64_t dim = -1);

/// The condition number [...] of A [..., m, n] for p = 2 (nullopt: 2) or -2 (the ratio of the
/// extreme singular values), and of square A for p = 1, -1, inf, -inf (||A|| ||A^{-1}||, inf for
/// a singular A); an empty A gives zeros [...], square or not (as PyTorch's). Differentiable as PyTorch's (through
/// svdvals, inv and the norms).
Tensor cond(const Tensor& A, std::optional<double> p = std::nullopt);

/// The condition number of square A for p = "fro" or "nuc" (through the singular values); an
/// empty square A gives zeros, an empty non-square A is refused (PyTorch checks squareness first).
Tensor cond(const Tensor& A, const std::string& p);

}  // namespace wick::linalg
