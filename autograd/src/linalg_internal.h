#pragma once
// Helpers shared by the wick::linalg files (autograd/src/linalg_*.cpp): matrix transposes and
// diagonals composed of differentiable ops, and the one solve node that inv's, solve's and the
// other backward formulas' solves go through.
#include "op_helpers.h"
#include "wick/autograd/linalg.h"
#include "wick/core/lapack.h"

namespace wick::linalg::detail {

/// The transpose of each matrix of x [..., r, c] (PyTorch's x.mT).
inline Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }

/// An n x n identity with x's dtype and device.
inline Tensor eye_like(const Tensor& x, int64_t n) { return eye(n, TensorOptions(x.dtype()).device(x.device())); }

/// X with A X = B for square A [..., n, n] and B [..., n, k] of A's batch dims (native::lapack_solve
/// names `op` in its errors). Gradients: gB = A^{-T} gX (this function again), gA = -gB X^T.
Tensor solve_square(const Tensor& A, const Tensor& B, const char* op = "linalg.solve");

}  // namespace wick::linalg::detail
