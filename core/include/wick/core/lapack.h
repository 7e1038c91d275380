#pragma once
// wick/core/lapack.h: the gradient-free linear algebra kernels behind wick::linalg, computed by
// LAPACK (Note [LAPACK from OpenBLAS], core/src/lapack/lapack_routines.h).
//
// Note [Linalg on the host]
// LAPACK runs on host memory. A matrix on a CPU device is factored there (results on its own
// device); a matrix on any other device (CUDA, a registered one) is copied to cpu:0, factored,
// and its results copied back to its device: correct everywhere, and as slow as two copies and a
// host factorisation (PyTorch calls cuSOLVER/MAGMA on CUDA). Each matrix of a batch is one LAPACK
// call on a column-major copy, so inputs are never written. Results are contiguous.
//
// Every function takes float32 or float64 matrices [..., m, n] (batch dims first), checks them
// with linalg_check_matrix and against LAPACK's 32-bit workspace sizes (Note [LAPACK workspace
// sizes], wick/core/lapack_work.h), runs OpenBLAS single-threaded under a CPU thread budget as
// GEMMs do (Note [GEMMs on wick's threads]), and reports a matrix LAPACK cannot factor as a ValueError in
// PyTorch 1.13's words, naming the op, the batch element ("(Batch element 2): ", only when there
// are batch dims) and the input's shape.
#include <string>
#include <tuple>

#include "wick/core/tensor.h"

namespace wick::native {

/// "[2, 3, 3]".
std::string linalg_shape(const Tensor& t);

/// Throws unless `a` is defined, float32 or float64 (TypeError), has at least 2 dims and, when
/// `square`, equal last two dims (ValueError); every message names `op` and a's shape.
void linalg_check_matrix(const Tensor& a, const char* op, bool square);

/// X with A X = B for square A [..., n, n] and B [..., n, k] with A's batch dims and dtype, by LU
/// with partial pivoting (getrf, getrs). A singular A (an exactly zero pivot) is a ValueError
/// naming `op` ("linalg.solve", "linalg.inv"), the batch element and the pivot. NaN propagates.
Tensor lapack_solve(const Tensor& a, const Tensor& b, const char* op);

/// (det, sign, logabsdet) of square A [..., n, n] from one LU factorisation: det is the product
/// of U's diagonal times the permutation's sign (0 for a singular matrix), sign is -1, 0 or 1,
/// logabsdet the sum of log|U_ii| (-inf for a singular matrix). n = 0 gives (1, 1, 0).
std::tuple<Tensor, Tensor, Tensor> lapack_det(const Tensor& a);

/// The Cholesky factor of symmetric positive-definite A [..., n, n] from its lower triangle
/// (upper: from its upper triangle, returning U with A = U^T U), zeros in the other triangle.
/// A matrix that is not positive-definite is a ValueError naming the leading minor's order.
Tensor lapack_cholesky(const Tensor& a, bool upper);

/// Householder QR of A [..., m, n] (geqrf, orgqr), k = min(m, n): Q [..., m, k] and R [..., k, n]
/// (complete: Q [..., m, m], R [..., m, n]); without compute_q, Q is an empty [0] tensor.
std::tuple<Tensor, Tensor> lapack_qr(const Tensor& a, bool compute_q, bool complete);

/// Eigenvalues (ascending, [..., n]) and, with compute_v, orthonormal eigenvectors (the columns
/// of [..., n, n]; else an empty [0] tensor) of symmetric A [..., n, n], read from its lower
/// triangle (upper: its upper one) by syevd. A matrix holding NaN or an infinity is a ValueError
/// (the iterative solver has no answer for it). Errors name `op` ("linalg.eigh", "linalg.eigvalsh").
std::tuple<Tensor, Tensor> lapack_eigh(const Tensor& a, bool upper, bool compute_v, const char* op = "linalg.eigh");

/// A = U diag(S) Vh by gesdd for A [..., m, n], k = min(m, n): S [..., k] descending, and with
/// compute_uv U [..., m, k] and Vh [..., k, n] (full_matrices: [..., m, m] and [..., n, n]);
/// without compute_uv, U and Vh are empty [0] tensors. Non-finite input is refused.
std::tuple<Tensor, Tensor, Tensor> lapack_svd(const Tensor& a, bool full_matrices, bool compute_uv);

/// X with op(A) X = B (left) or X op(A) = B (!left), A [..., n, n] triangular (upper or lower, read
/// from that triangle only; unitriangular: its diagonal taken as ones), B [..., n, k] (left) or
/// [..., k, n] with A's batch dims and dtype, by BLAS trsm. A zero on the diagonal is not an
/// error (infinities and NaN follow, as PyTorch's). Errors name `op`.
Tensor lapack_solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular,
                               const char* op);

/// (LU, pivots) of A [..., m, n] by getrf with partial pivoting, k = min(m, n): LU [..., m, n]
/// holding U on and above the diagonal and L's multipliers below it; pivots int64 [..., k],
/// 1-based (row i was swapped with row pivots[i]), as LAPACK's and PyTorch's. With check_errors,
/// an exactly zero U[i, i] is a ValueError in PyTorch's words naming `op` and the batch element.
std::tuple<Tensor, Tensor> lapack_lu_factor(const Tensor& a, bool check_errors, const char* op);

/// X with A X = B (adjoint: A^T X = B) for A = P L U given by lapack_lu_factor's LU [..., n, n]
/// and pivots int64 [..., n] (each in 1..n, checked), B [..., n, k] of LU's batch dims, by getrs.
Tensor lapack_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint, const char* op);

/// The least-squares problem min ||A X - B|| for A [..., m, n] and B [..., m, k] of A's batch dims
/// by the LAPACK `driver` "gels" (QR, full rank; a rank-deficient A is a ValueError), "gelsy"
/// (complete orthogonal factorisation) or "gelsd" (SVD), singular values at or below rcond * the
/// largest counted as zero: (solution [..., n, k], the rows m - n past the solution that LAPACK
/// leaves in B, whose squares sum to the residuals ([..., 0, k] unless m > n), rank int64 [...]
/// (empty [0] for gels), singular values [..., min(m, n)] (gelsd only, else empty [0])). With
/// k = 0, gelsd still gives A's rank and singular values, gelsy rank 0 (LAPACK's quick return, as
/// PyTorch's); Note [lstsq without right-hand sides].
std::tuple<Tensor, Tensor, Tensor, Tensor> lapack_lstsq(const Tensor& a, const Tensor& b, double rcond,
                                                        const std::string& driver);

}  // namespace wick::native
