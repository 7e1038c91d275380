// wick::linalg's pseudoinverse family: pinv, matrix_rank, lstsq and cond
// (wick/autograd/linalg_more.h), as PyTorch 1.13's LinearAlgebra.cpp composes them, with its
// pinv_backward (FunctionsManual.cpp), which lstsq's gradient goes through too.
#include <cfloat>
#include <cmath>
#include <limits>

#include "linalg_internal.h"
#include "wick/autograd/functions_scan_scatter.h"
#include "wick/core/error.h"

namespace wick::linalg {

using namespace wick::detail;
using namespace detail;

namespace {
double eps_of(DType t) { return t == kFloat32 ? FLT_EPSILON : DBL_EPSILON; }

// PyTorch's get_atol_rtol for scalar tolerances: atol 0 unless given; rtol eps * max(m, n) unless
// given, or 0 when a positive atol is given.
std::pair<double, double> tolerances(const Tensor& A, std::optional<double> atol, std::optional<double> rtol) {
  const double a = atol.value_or(0.0);
  if (rtol) return {a, *rtol};
  if (atol && *atol > 0) return {a, 0.0};
  return {a, eps_of(A.dtype()) * static_cast<double>(std::max(A.size(-1), A.size(-2)))};
}

// max(atol, rtol * largest) per matrix, largest [..., 1].
Tensor cutoff(const Tensor& largest, double atol, double rtol) {
  // Unchecked (native::full): an atol beyond float32's range is inf there, as in PyTorch (Note
  // [Scalar fits dtype]).
  return maximum(largest * rtol, native::full(largest.sizes(), atol, largest.dtype(), largest.device()));
}

// PyTorch 1.13's pinv_backward: the gradient of pinvA = pinv(A) for A [..., m, n].
Tensor pinv_backward(const Tensor& g, const Tensor& pinvA, const Tensor& A) {
  const Tensor pinvAh = mT(pinvA), gh = mT(g);
  if (A.size(-2) <= A.size(-1)) {
    const Tensor K = matmul(gh, pinvA);
    const Tensor KpinvAh = matmul(K, pinvAh);
    return -mT(matmul(pinvA, K)) + KpinvAh - matmul(matmul(A, pinvA), KpinvAh) +
           matmul(matmul(pinvAh, pinvA), gh - matmul(K, A));
  }
  const Tensor K = matmul(pinvA, gh);
  const Tensor pinvAhK = matmul(pinvAh, K);
  return -mT(matmul(K, pinvA)) + matmul(matmul(gh - matmul(A, K), pinvA), pinvAh) + pinvAhK -
         matmul(matmul(pinvAhK, pinvA), A);
}

DimVector batch_of(const Tensor& A) { return DimVector(IntArrayRef(A.sizes().data(), A.dim() - 2)); }

// ||A|| ||A^{-1}|| for square A and a norm `norm`, inf for an exactly singular matrix (PyTorch's
// _linalg_cond_helper: inv_ex, its failures filled with inf, nan_to_num of the product).
template <typename F>
Tensor cond_by_inverse(const Tensor& A, F norm) {
  Tensor singular;
  {
    NoGradGuard no_grad;  // an exactly zero pivot: the sign of the determinant is 0
    singular = unsqueeze(unsqueeze(eq(std::get<1>(native::lapack_det(A)), zeros({}, A.options())), -1), -1);
  }
  const Tensor inverse =
      where(singular, std::numeric_limits<double>::infinity(), inv(where(singular, eye_like(A, A.size(-1)), A)));
  const double inf = std::numeric_limits<double>::infinity();
  return nan_to_num(norm(A) * norm(inverse), inf, inf, -inf);
}
}  // namespace

Tensor pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const char* op = "linalg.pinv";
  native::linalg_check_matrix(A, op, hermitian);
  const auto [a, r] = tolerances(A, atol, rtol);
  Tensor X;
  {
    NoGradGuard no_grad;
    if (A.numel() == 0) {
      DimVector s = batch_of(A);
      s.push_back(A.size(-1));
      s.push_back(A.size(-2));
      X = zeros(s, A.options());
    } else if (!hermitian) {
      auto [U, S, Vh] = svd(A, false);
      const Tensor tol = cutoff(narrow(S, -1, 0, 1), a, r);  // S descends: its first is the largest
      const Tensor Sinv = where(gt(S, tol), reciprocal(S), 0.0);
      X = matmul(mT(Vh), unsqueeze(Sinv, -1) * mT(U));
    } else {
      auto [S, U] = eigh(A);
      const Tensor tol = cutoff(amax(abs(S), {-1}, true), a, r);
      const Tensor Sinv = where(gt(abs(S), tol), reciprocal(S), 0.0);
      X = matmul(U * unsqueeze(Sinv, -2), mT(U));
    }
  }
  if (needs_grad({&A})) {
    record_function("LinalgPinvBackward", {A}, {X},
                    [](const VL& g, const VL& s) -> VL { return {pinv_backward(g[0], s[1], s[0])}; }, {A}, {X});
  }
  return X;
}

Tensor matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol, bool hermitian) {
  const char* op = "linalg.matrix_rank";
  native::linalg_check_matrix(A, op, hermitian);
  NoGradGuard no_grad;
  if (A.numel() == 0) return zeros(batch_of(A), TensorOptions(kInt64).device(A.device()));
  const auto [a, r] = tolerances(A, atol, rtol);
  const Tensor S = hermitian ? abs(eigvalsh(A)) : svdvals(A);
  return sum(to(gt(S, cutoff(amax(S, {-1}, true), a, r)), A.device(), kInt64), {-1});
}

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                                                 const std::optional<std::string>& driver) {
  const char* op = "linalg.lstsq";
  native::linalg_check_matrix(A, op, false);
  WICK_CHECK(B.defined(), "{}: B is an undefined tensor", op);
  WICK_CHECK_TYPE(B.dtype() == A.dtype(), "{}: A {} is {} but B {} is {}; give both one dtype", op, shape_str(A),
                  A.dtype(), shape_str(B), B.dtype());
  native::check_same_device(op, {&A, &B});
  WICK_CHECK(B.dim() <= A.dim() && A.dim() - B.dim() <= 1,
             "{}: input.dim() must be greater or equal to other.dim() and (input.dim() - other.dim()) <= 1: A {}, "
             "B {}",
             op, shape_str(A), shape_str(B));
  // PyTorch 1.13's rule (as solve's): B is a vector when 1-d or of A's shape without its last dim.
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && IntArrayRef(B.sizes().data(), B.dim()) ==
                                                                     IntArrayRef(A.sizes().data(), A.dim() - 1));
  const Tensor Bm = vector ? unsqueeze(B, -1) : B;
  const int64_t m = A.size(-2), n = A.size(-1);
  WICK_CHECK(Bm.dim() >= 2 && Bm.size(-2) == m, "{}: input.size(-2) should match other.size(-2): A {}, B {}", op,
             shape_str(A), shape_str(B));
  // PyTorch's default driver: "gels" for CUDA tensors (the only one its CUDA offers), "gelsy"
  // elsewhere. wick solves CUDA tensors on a host copy, so it takes all three drivers there.
  const std::string drv = driver.value_or(A.device().is_cuda() ? "gels" : "gelsy");
  DimVector batch = native::broadcast_shapes(batch_of(A), batch_of(Bm), op);
  DimVector sa = batch, sb = batch;
  sa.push_back(m);
  sa.push_back(n);
  sb.push_back(m);
  sb.push_back(Bm.size(-1));
  const Tensor Ae = expand(A, sa), Be = expand(Bm, sb);
  const double rc = rcond.value_or(eps_of(A.dtype()) * static_cast<double>(std::max(m, n)));
  auto [X, rest, rank, sv] = native::lapack_lstsq(Ae, Be, rc, drv);
  Tensor residuals = zeros({0}, A.options());
  if (m > n && drv != "gelsy") {  // PyTorch's rule: and, for gelsd, only when every matrix has full rank
    NoGradGuard no_grad;
    const bool full = drv == "gels" || rank.numel() == 0 || min_of(rank) == n;
    if (full) residuals = sum(rest * rest, {-2});
  }
  if (needs_grad({&Ae, &Be})) {
    const bool ra = Ae.requires_grad(), rb = Be.requires_grad();
    // PyTorch 1.13's linalg_lstsq_backward: the gradient of pinv(A) B.
    record_function("LinalgLstsqBackward", {Ae, Be}, {X},
                    [=](const VL& g, const VL& s) -> VL {
                      const Tensor pinvA = pinv(s[0]);
                      return {ra ? pinv_backward(matmul(g[0], mT(s[1])), pinvA, s[0]) : Tensor(),
                              rb ? matmul(mT(pinvA), g[0]) : Tensor()};
                    },
                    {Ae, Be});
  }
  return {vector ? squeeze(X, -1) : X, residuals, rank, sv};
}

Tensor cond(const Tensor& A, std::optional<double> p) {
  const double ord = p.value_or(2.0), a = std::abs(ord);
  WICK_CHECK(A.defined() && A.dim() >= 2,
             "linalg.cond: The input tensor must have at least 2 dimensions (matrices [..., m, n]), got {}",
             A.defined() ? shape_str(A) : std::string("an undefined tensor"));
  WICK_CHECK(a == 1 || a == 2 || std::isinf(a),
             "linalg.cond got an invalid norm type: {} (give 1, -1, 2, -2, inf, -inf, \"fro\" or \"nuc\")", ord);
  native::linalg_check_matrix(A, "linalg.cond", false);
  // NumPy has no answer for an empty matrix; PyTorch gives 0, before it checks squareness.
  if (A.numel() == 0) return zeros(batch_of(A), A.options());
  native::linalg_check_matrix(A, "linalg.cond", a != 2);
  if (a == 2) {
    const Tensor s = svdvals(A);
    const Tensor smax = narrow(s, -1, 0, 1), smin = narrow(s, -1, s.size(-1) - 1, 1);
    return squeeze(ord > 0 ? smax / smin : smin / smax, -1);
  }
  return cond_by_inverse(A, [ord](const Tensor& x) { return matrix_norm(x, ord); });
}

Tensor cond(const Tensor& A, const std::string& p) {
  WICK_CHECK(p == "fro" || p == "nuc", "linalg.cond got an invalid norm type: {} (give \"fro\", \"nuc\" or a number)",
             p);
  native::linalg_check_matrix(A, "linalg.cond", true);
  if (A.numel() == 0) return zeros(batch_of(A), A.options());
  if (p == "nuc") {  // sum(s) sum(1 / s), from the definition (as PyTorch's)
    const Tensor s = svdvals(A);
    return sum(s, {-1}) * sum(reciprocal(s), {-1});
  }
  return cond_by_inverse(A, [](const Tensor& x) { return matrix_norm(x, "fro"); });
}

}  // namespace wick::linalg
