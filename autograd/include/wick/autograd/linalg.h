#pragma once
// wick::linalg: torch.linalg of PyTorch 1.13 under LibTorch's C++ names (torch::linalg::inv, ...),
// for float32 and float64 matrices [..., m, n] batched over the leading dims. The values come from
// LAPACK (wick/core/lapack.h; Note [Linalg on the host]: tensors on other devices than the CPU
// ones are factored on the host and their results copied back). The gradients are PyTorch 1.13's
// formulas (FunctionsManual.cpp), written with wick's differentiable ops, so they can be
// differentiated again (autograd/src/linalg_*.cpp). docs/tensors.md, "Linear algebra". The second
// set (solve_triangular ... cond, below the norms) is declared in linalg_more.h, included here.
//
// Errors (wick::Error subclasses naming the op and the input's shape): TypeError for a
// non-floating input or two dtypes; ValueError for fewer than 2 dims, a non-square matrix where
// one is required, a singular matrix for inv and solve (the batch element and the zero pivot), a
// matrix that is not positive-definite for cholesky (the leading minor's order), NaN or inf in
// the input of eigh, eigvalsh, svd, svdvals and the spectral matrix norms, and a bad mode, UPLO
// or ord string.
#include <optional>
#include <string>
#include <tuple>

#include "wick/core/tensor.h"

namespace wick::linalg {

/// The inverse of square A [..., n, n]. Gradient: -A^{-T} g A^{-T}.
Tensor inv(const Tensor& A);

/// The determinant [...] of square A [..., n, n] (LU with partial pivoting). Gradient: g det(A)
/// A^{-T} by a solve where |det A| >= eps * ||A||_F, else (singular or nearly so) PyTorch's
/// formula through the SVD, det(U) det(Vh) U diag(d prod_{j != i} s_j) Vh, finite there.
Tensor det(const Tensor& A);

/// (sign, logabsdet) of square A [..., n, n]: det = sign * exp(logabsdet); a singular matrix
/// gives (0, -inf). Gradient (through logabsdet; sign has none): g A^{-T}, by a solve, which
/// refuses a singular A in backward as PyTorch's does in grad mode.
std::tuple<Tensor, Tensor> slogdet(const Tensor& A);

/// X with A X = B (left) or X A = B (!left) for square A [..., n, n] and B [..., n, k] or, as
/// PyTorch 1.13 decides, a vector B [..., n] (B 1-d, or B with A's batch shape minus its last
/// dim). Batch dims broadcast. Gradients: gB = A^{-T} gX (a solve), gA = -gB X^T.
Tensor solve(const Tensor& A, const Tensor& B, bool left = true);

/// The Cholesky factor L (A = L L^T) of symmetric positive-definite A [..., n, n], read from its
/// lower triangle; upper: U (A = U^T U) from its upper triangle (torch.linalg.cholesky's upper=;
/// LibTorch's C++ function has no such argument). Gradient: PyTorch's symmetric
/// L^{-T} Phi(L^T gL) L^{-1}, its triangular solves done as general solves.
Tensor cholesky(const Tensor& A, bool upper = false);

/// (Q, R) with A = Q R for A [..., m, n], k = min(m, n): mode "reduced" Q [..., m, k] and R
/// [..., k, n]; "complete" Q [..., m, m] and R [..., m, n]; "r" R only (Q an empty [0] tensor).
/// R's diagonal has LAPACK's signs (as PyTorch's CPU results). Differentiable as PyTorch: not
/// through mode "r", nor "complete" with m > n (both refused in backward with PyTorch's message).
std::tuple<Tensor, Tensor> qr(const Tensor& A, const std::string& mode = "reduced");

/// (eigenvalues ascending [..., n], eigenvectors as columns [..., n, n]) of symmetric A
/// [..., n, n] read from its lower (UPLO "L") or upper ("U") triangle. Each eigenvector's sign
/// is LAPACK's. Gradient: V (diag(gL) + sym(V^T gV) / (L_j - L_i)) V^T, symmetric; inf or NaN
/// for repeated eigenvalues when the eigenvectors' gradient is nonzero (as PyTorch's).
std::tuple<Tensor, Tensor> eigh(const Tensor& A, const std::string& UPLO = "L");

/// The eigenvalues of eigh. Gradient V diag(g) V^T.
Tensor eigvalsh(const Tensor& A, const std::string& UPLO = "L");

/// (U, S, Vh) with A = U diag(S) Vh for A [..., m, n], k = min(m, n), S descending; reduced
/// U [..., m, k], Vh [..., k, n], or with full_matrices [..., m, m] and [..., n, n] (PyTorch's
/// default). The singular vectors' signs are LAPACK's (gesdd). Gradient: PyTorch 1.13's
/// svd_backward, which assumes distinct singular values (inf or NaN otherwise when U or Vh has a
/// nonzero gradient) and a loss invariant under flipping a pair of singular vectors; with
/// full_matrices, the gradients of U's last m - k columns and Vh's last n - k rows are ignored.
std::tuple<Tensor, Tensor, Tensor> svd(const Tensor& A, bool full_matrices = true);

/// The singular values [..., k], descending. Gradient U diag(g) Vh, defined also for repeated
/// and zero singular values.
Tensor svdvals(const Tensor& A);

/// A matrix norm over `dim` (two dims, default the last two) for ord "fro" or "nuc"
/// (torch.linalg.matrix_norm's default is "fro").
Tensor matrix_norm(const Tensor& A, const std::string& ord = "fro", IntArrayRef dim = {-2, -1}, bool keepdim = false,
                   std::optional<DType> dtype = std::nullopt);

/// A matrix norm for ord 1, -1 (max, min column sum of |a|), inf, -inf (max, min row sum), 2, -2
/// (largest, smallest singular value). Other ords are a ValueError.
Tensor matrix_norm(const Tensor& A, double ord, IntArrayRef dim = {-2, -1}, bool keepdim = false,
                   std::optional<DType> dtype = std::nullopt);

/// The ord-norm of A's entries over `dim` (empty: all of them): any real ord, 0 counting the
/// nonzeros and +-inf the largest and smallest magnitude, as wick::norm (which gives the
/// gradients PyTorch 1.13 does); with dtype, A is converted first.
Tensor vector_norm(const Tensor& A, double ord = 2, IntArrayRef dim = {}, bool keepdim = false,
                   std::optional<DType> dtype = std::nullopt);

}  // namespace wick::linalg

#include "wick/autograd/linalg_more.h"  // IWYU pragma: export
