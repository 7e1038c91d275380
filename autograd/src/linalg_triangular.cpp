// wick::linalg's triangular family: solve_triangular, cholesky_solve, cholesky_inverse,
// lu_factor, lu and lu_solve (wick/autograd/linalg_more.h), with PyTorch 1.13's gradients
// (FunctionsManual.cpp: linalg_solve_triangular_backward, cholesky_solve_backward,
// cholesky_inverse_backward, linalg_lu_backward, lu_factor_ex_backward, linalg_lu_solve_LU).
#include <vector>

#include "linalg_internal.h"
#include "wick/core/error.h"

namespace wick::linalg {

using namespace wick::detail;
using namespace detail;

namespace {
// A and B expanded to their broadcast batch dims, after the checks every solve shares.
std::pair<Tensor, Tensor> broadcast_batch(const Tensor& A, const Tensor& B, const char* op) {
  DimVector batch = native::broadcast_shapes(IntArrayRef(A.sizes().data(), A.dim() - 2),
                                             IntArrayRef(B.sizes().data(), B.dim() - 2), op);
  DimVector sa = batch, sb = batch;
  sa.push_back(A.size(-2));
  sa.push_back(A.size(-1));
  sb.push_back(B.size(-2));
  sb.push_back(B.size(-1));
  return {expand(A, sa), expand(B, sb)};
}

void check_pair(const Tensor& A, const Tensor& B, const char* op) {
  native::linalg_check_matrix(A, op, true);
  WICK_CHECK(B.defined(), "{}: B is an undefined tensor", op);
  WICK_CHECK_TYPE(B.dtype() == A.dtype(), "{}: A {} is {} but B {} is {}; give both one dtype", op, shape_str(A),
                  A.dtype(), shape_str(B), B.dtype());
  native::check_same_device(op, {&A, &B});
  WICK_CHECK(B.dim() >= 2, "{}: The input tensor B must have at least 2 dimensions, but it has shape {}", op,
             shape_str(B));
}

// The solve_triangular node on operands of one batch shape.
Tensor solve_triangular_impl(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit) {
  Tensor X = native::lapack_solve_triangular(A, B, upper, left, unit, "linalg.solve_triangular");
  if (needs_grad({&A, &B})) {
    const bool ra = A.requires_grad(), rb = B.requires_grad();
    record_function("LinalgSolveTriangularBackward", {A, B}, {X},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor gB = solve_triangular(mT(s[0]), g[0], !upper, left, unit);
                      Tensor gA;
                      if (ra) {
                        gA = left ? -matmul(gB, mT(s[1])) : -matmul(mT(s[1]), gB);
                        gA = upper ? triu(gA, unit ? 1 : 0) : tril(gA, unit ? -1 : 0);
                      }
                      return {gA, rb ? gB : Tensor()};
                    },
                    {A}, {X});
  }
  return X;
}

// P [..., m, m] with A = P L U from LAPACK's 1-based row swaps pivots [..., k] (as lu_unpack).
// A pivot outside 1..m is a ValueError naming `op` (it would index out of bounds).
Tensor permutation_from_pivots(const Tensor& pivots, int64_t m, const Tensor& like, const char* op) {
  const Tensor hp = native::contiguous(native::to(pivots, kCPU, kInt64));
  DimVector shape(pivots.sizes());
  const int64_t k = shape.back();
  shape.back() = m;
  shape.push_back(m);
  Tensor P = native::zeros(shape, like.dtype(), kCPU);
  const int64_t batch = k == 0 ? P.numel() / std::max<int64_t>(m * m, 1) : hp.numel() / k;
  const int64_t* pp = static_cast<const int64_t*>(hp.data_ptr());
  for (int64_t i = 0; i < hp.numel(); ++i)
    WICK_CHECK(pp[i] >= 1 && pp[i] <= m,
               "{}: pivots {} hold {} at flat position {}; LU pivots of matrices with {} rows are 1-based rows in "
               "1..{} (as lu_factor returns them)",
               op, shape_str(pivots), pp[i], i, m, m);
  std::vector<int64_t> perm(static_cast<size_t>(m));
  dispatch_floating(like.dtype(), "linalg.lu", [&]<typename T>() {
    T* out = static_cast<T*>(P.data_ptr());
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < m; ++i) perm[static_cast<size_t>(i)] = i;
      for (int64_t i = 0; i < k; ++i)
        std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(pp[b * k + i] - 1)]);
      for (int64_t i = 0; i < m; ++i) out[b * m * m + perm[static_cast<size_t>(i)] * m + i] = 1;  // P[perm[i], i]
    }
  });
  return native::to(P, like.device(), like.dtype());
}

// The unit lower L [..., m, k] and upper U [..., k, n] packed in LU [..., m, n], differentiably.
std::pair<Tensor, Tensor> unpack(const Tensor& LU) {
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  const Tensor L = tril(narrow(LU, -1, 0, k), -1) + eye(m, k, TensorOptions(LU.dtype()).device(LU.device()));
  return {L, triu(narrow(LU, -2, 0, k))};
}

// PyTorch 1.13's linalg_lu_backward (real case) for L [..., m, k], U [..., k, n]; a missing
// gradient arrives as zeros, which its "undefined" branches equal.
Tensor lu_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L, const Tensor& U) {
  const int64_t m = L.size(-2), n = U.size(-1), k = std::min(m, n);
  Tensor gA;
  if (m == n) {
    gA = tril(matmul(mT(L), gL), -1) + triu(matmul(gU, mT(U)));
    gA = solve_triangular(mT(U), gA, false, false);
    gA = solve_triangular(mT(L), gA, true, true, true);
  } else if (m < n) {  // wide: U = [U1 | U2]
    const Tensor U1 = narrow(U, -1, 0, k);
    gA = matmul(mT(L), gL) - matmul(triu(gU), mT(U));
    gA = solve_triangular(mT(U1), tril(gA, -1), false, false);
    gA = cat({gA + triu(narrow(gU, -1, 0, k)), narrow(gU, -1, k, n - k)}, -1);
    gA = solve_triangular(mT(L), gA, true, true, true);
  } else {  // tall: L = [L1; L2]
    const Tensor L1 = narrow(L, -2, 0, k);
    gA = matmul(gU, mT(U)) - matmul(mT(L), tril(gL, -1));
    gA = solve_triangular(mT(L1), triu(gA), true, true, true);
    gA = cat({gA + tril(narrow(gL, -2, 0, k), -1), narrow(gL, -2, k, m - k)}, -2);
    gA = solve_triangular(mT(U), gA, false, false);
  }
  return matmul(P, gA);
}

// PyTorch 1.13's linalg_lu_solve_LU (real case): the gradient of X = lu_solve(LU, pivots, B) in LU.
Tensor lu_solve_LU(const Tensor& gX, const Tensor& LU, const Tensor& pivots, const Tensor& X, bool left, bool adjoint) {
  auto [L, U] = unpack(LU);
  if (left != adjoint) {
    const Tensor gR = solve_triangular(mT(U), -matmul(left ? gX : mT(gX), left ? mT(X) : X), false);
    const Tensor gL = tril(solve_triangular(mT(L), matmul(gR, mT(U)), true, true, true), -1);
    return gL + triu(gR);
  }
  const Tensor P = permutation_from_pivots(pivots, LU.size(-2), LU, "linalg.lu_solve (backward)");
  Tensor gR = -matmul(matmul(matmul(mT(P), left ? X : mT(X)), left ? mT(gX) : gX), P);
  gR = solve_triangular(mT(L), gR, true, false, true);
  const Tensor gU = triu(solve_triangular(mT(U), matmul(mT(L), gR), false, false));
  return tril(gR, -1) + gU;
}
}  // namespace

Tensor solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left, bool unitriangular) {
  const char* op = "linalg.solve_triangular";
  check_pair(A, B, op);
  const int64_t n = A.size(-1);
  WICK_CHECK(left ? B.size(-2) == n : B.size(-1) == n,
             "{}: Incompatible shapes of A and B for the equation {} ({}x{} and {}x{}; A {}, B {})", op,
             left ? "AX = B" : "XA = B", n, n, B.size(-2), B.size(-1), shape_str(A), shape_str(B));
  auto [Ae, Be] = broadcast_batch(A, B, op);
  return solve_triangular_impl(Ae, Be, upper, left, unitriangular);
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  const char* op = "cholesky_solve";
  check_pair(L, B, op);
  WICK_CHECK(B.size(-2) == L.size(-1),
             "Incompatible matrix sizes for {}: each A matrix is {} by {} but each b matrix is {} by {} (L {}, B {})",
             op, L.size(-1), L.size(-1), B.size(-2), B.size(-1), shape_str(L), shape_str(B));
  auto [Le, Be] = broadcast_batch(L, B, op);
  Tensor X;
  {  // A X = B: L Y = B, L^T X = Y (upper: U^T Y = B, U X = Y)
    NoGradGuard no_grad;
    const Tensor Y = native::lapack_solve_triangular(upper ? mT(Le) : Le, Be, false, true, false, op);
    X = native::lapack_solve_triangular(upper ? Le : mT(Le), Y, true, true, false, op);
  }
  if (needs_grad({&Be, &Le})) {
    const bool rb = Be.requires_grad(), rl = Le.requires_grad();
    record_function("CholeskySolveBackward", {Be, Le}, {X},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor gB = cholesky_solve(g[0], s[0], upper);
                      Tensor gL;
                      if (rl) {
                        Tensor common = matmul(gB, mT(s[1]));
                        common = common + mT(common);
                        gL = upper ? -matmul(s[0], common) : -matmul(common, s[0]);
                      }
                      return {rb ? gB : Tensor(), gL};
                    },
                    {Le}, {X});
  }
  return X;
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  const char* op = "cholesky_inverse";
  native::linalg_check_matrix(L, op, true);
  Tensor X;
  {
    NoGradGuard no_grad;
    X = cholesky_solve(expand(eye_like(L, L.size(-1)), L.sizes()), L.detach(), upper);
  }
  if (needs_grad({&L})) {
    record_function("CholeskyInverseBackward", {L}, {X},
                    [upper](const VL& g, const VL& s) -> VL {
                      const Tensor common = matmul(s[1], matmul(g[0] + mT(g[0]), s[1]));
                      return {upper ? -matmul(s[0], common) : -matmul(common, s[0])};
                    },
                    {L}, {X});
  }
  return X;
}

std::tuple<Tensor, Tensor> lu_factor(const Tensor& A) {
  auto [LU, pivots] = native::lapack_lu_factor(A, true, "linalg.lu_factor");
  if (needs_grad({&A})) {
    const Tensor P = permutation_from_pivots(pivots, A.size(-2), A, "linalg.lu_factor");
    record_function("LinalgLuFactorBackward", {A}, {LU},
                    [P](const VL& g, const VL& s) -> VL {
                      const int64_t k = std::min(s[0].size(-2), s[0].size(-1));
                      auto [L, U] = unpack(s[0]);
                      return {lu_backward(narrow(g[0], -1, 0, k), narrow(g[0], -2, 0, k), P, L, U)};
                    },
                    {}, {LU});
  }
  return {LU, pivots};
}

std::tuple<Tensor, Tensor, Tensor> lu(const Tensor& A) {
  Tensor P, L, U;
  {
    NoGradGuard no_grad;
    auto [LU, pivots] = native::lapack_lu_factor(A, false, "linalg.lu");
    P = permutation_from_pivots(pivots, A.size(-2), A, "linalg.lu");
    std::tie(L, U) = unpack(LU);
  }
  if (needs_grad({&A})) {
    record_function("LinalgLuBackward", {A}, {L, U},
                    [P](const VL& g, const VL& s) -> VL { return {lu_backward(g[0], g[1], P, s[0], s[1])}; }, {},
                    {L, U});
  }
  return {P, L, U};
}

Tensor lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left, bool adjoint) {
  const char* op = "linalg.lu_solve";
  check_pair(LU, B, op);
  const int64_t n = LU.size(-1);
  WICK_CHECK(left ? B.size(-2) == n : B.size(-1) == n,
             "{}: Incompatible shapes of A and B for the equation {} ({}x{} and {}x{}; LU {}, B {})", op,
             left ? "AX = B" : "XA = B", n, n, B.size(-2), B.size(-1), shape_str(LU), shape_str(B));
  WICK_CHECK(pivots.defined() && pivots.dim() == LU.dim() - 1 &&
                 IntArrayRef(pivots.sizes().data(), pivots.dim()) == IntArrayRef(LU.sizes().data(), LU.dim() - 1),
             "{}: expected pivots of shape {} for LU {} (as lu_factor returns them), got {}", op,
             shape_str(IntArrayRef(LU.sizes().data(), LU.dim() - 1)), shape_str(LU),
             pivots.defined() ? shape_str(pivots) : std::string("an undefined tensor"));
  native::check_same_device(op, {&LU, &pivots});
  auto [LUe, Be] = broadcast_batch(LU, B, op);
  DimVector ps(LUe.sizes());
  ps.resize(ps.size() - 1);
  const Tensor pe = native::expand(pivots, ps);
  // X A = B is A^T X^T = B^T: the left solve of B^T with the adjoint flipped.
  const Tensor X = left ? native::lapack_lu_solve(LUe, pe, Be, adjoint, op)
                        : native::contiguous(native::transpose(
                              native::lapack_lu_solve(LUe, pe, native::transpose(Be, -2, -1), !adjoint, op), -2, -1));
  if (needs_grad({&LUe, &Be})) {
    const bool rl = LUe.requires_grad(), rb = Be.requires_grad();
    // The pivots are saved as PyTorch saves them (a SavedVariable): an in-place write to them
    // after this forward makes the backward a StateError, never a read of other pivots.
    record_function("LinalgLuSolveBackward", {LUe, Be}, {X},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor p = native::expand(s[1], ps);
                      return {rl ? lu_solve_LU(g[0], s[0], p, s[2], left, adjoint) : Tensor(),
                              rb ? lu_solve(s[0], p, g[0], left, !adjoint) : Tensor()};
                    },
                    {LUe, pivots}, {X});
  }
  return X;
}

}  // namespace wick::linalg
