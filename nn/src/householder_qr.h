#pragma once
// Internal: a small Householder QR factorization on the host, in float64, for init::orthogonal_
// (wick has no linear-algebra decompositions).
#include <cstdint>
#include <vector>

namespace wick::nn::detail {

/// The thin factorization A = Q R of a [rows, cols] matrix with rows >= cols: Q [rows, cols] has
/// orthonormal columns, R [cols, cols] is upper triangular. R itself is not formed, only its
/// diagonal (a zero entry where a column of A lies in the span of the ones before it).
struct ThinQR {
  std::vector<double> q;       ///< row-major [rows, cols]
  std::vector<double> r_diag;  ///< R's diagonal, cols values
};

/// Householder QR of `a` (row-major [rows, cols], rows >= cols >= 0): the reflection of step k
/// maps column k's entries k.. onto -sign(a_kk) * their norm times e_k (no cancellation), so R's
/// diagonal has the opposite sign of the pivot, as LAPACK's geqrf. O(rows * cols^2) flops;
/// entries must be of moderate size (norms are not rescaled). ValueError for bad sizes.
ThinQR householder_qr(const std::vector<double>& a, int64_t rows, int64_t cols);

}  // namespace wick::nn::detail
