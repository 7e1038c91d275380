// Triangular solves (BLAS trsm) and the LU factorisation with its solve (getrf, getrs), on
// column-major host copies (Note [Linalg on the host], wick/core/lapack.h).
#include <cblas.h>

#include <algorithm>
#include <vector>

#include "lapack/lapack_host.h"
#include "lapack/lapack_routines.h"

namespace wick::native {

namespace {
// Refuses B unless it has A's dtype, device and batch dims; `rows` / `cols`: B's required last
// two sizes (-1: any).
void check_rhs(const Tensor& a, const Tensor& b, int64_t rows, int64_t cols, const char* op) {
  WICK_CHECK(b.defined(), "{}: B is an undefined tensor", op);
  check_same_device(op, {&a, &b});
  WICK_CHECK_TYPE(b.dtype() == a.dtype(), "{}: A is {} but B is {}; give both one dtype", op, a.dtype(), b.dtype());
  WICK_CHECK(b.dim() == a.dim() && (rows < 0 || b.size(-2) == rows) && (cols < 0 || b.size(-1) == cols) &&
                 std::equal(a.sizes().begin(), a.sizes().end() - 2, b.sizes().begin()),
             "{}: B {} does not fit A {} (expected A's batch dims and a [{}, {}] matrix)", op, linalg_shape(b),
             linalg_shape(a), rows < 0 ? std::string("k") : std::to_string(rows),
             cols < 0 ? std::string("k") : std::to_string(cols));
  lapack::check_int_sizes(b, op);
}

void trsm(bool left, bool upper, bool unit, int m, int n, const float* a, int lda, float* b, int ldb) {
  cblas_strsm(CblasColMajor, left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower, CblasNoTrans,
              unit ? CblasUnit : CblasNonUnit, m, n, 1.0f, a, lda, b, ldb);
}
void trsm(bool left, bool upper, bool unit, int m, int n, const double* a, int lda, double* b, int ldb) {
  cblas_dtrsm(CblasColMajor, left ? CblasLeft : CblasRight, upper ? CblasUpper : CblasLower, CblasNoTrans,
              unit ? CblasUnit : CblasNonUnit, m, n, 1.0, a, lda, b, ldb);
}
}  // namespace

Tensor lapack_solve_triangular(const Tensor& a, const Tensor& b, bool upper, bool left, bool unitriangular,
                               const char* op) {
  linalg_check_matrix(a, op, true);
  const int64_t n = a.size(-1);
  check_rhs(a, b, left ? n : -1, left ? -1 : n, op);
  const int rows = static_cast<int>(b.size(-2)), cols = static_cast<int>(b.size(-1));
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();  // trsm takes no workspace (Note [LAPACK workspace sizes])
  Tensor ha = lapack::colmajor_copy(a), hb = lapack::colmajor_copy(b);
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    const T* pa = static_cast<const T*>(ha.data_ptr());
    T* pb = static_cast<T*>(hb.data_ptr());
    if (n == 0 || rows == 0 || cols == 0) return;
    for (int64_t i = 0; i < batch; ++i)
      trsm(left, upper, unitriangular, rows, cols, pa + i * n * n, static_cast<int>(n), pb + i * rows * int64_t{cols},
           rows);
  });
  return lapack::from_colmajor(hb, b.device());
}

std::tuple<Tensor, Tensor> lapack_lu_factor(const Tensor& a, bool check_errors, const char* op) {
  linalg_check_matrix(a, op, false);
  const int m = static_cast<int>(a.size(-2)), n = static_cast<int>(a.size(-1)), k = std::min(m, n);
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();
  DimVector ps(a.sizes());
  ps.resize(ps.size() - 2);
  ps.push_back(k);
  const Device host = lapack::host_of(a);
  Tensor ha = lapack::colmajor_copy(a);
  Tensor piv = native::empty(ps, kInt64, host);
  int64_t* pp = static_cast<int64_t*>(piv.data_ptr());
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    std::vector<int> ipiv(static_cast<size_t>(std::max(k, 1)));
    for (int64_t i = 0; i < batch && k > 0; ++i) {
      int info = 0;
      lapack::getrf(m, n, pa + i * m * int64_t{n}, m, ipiv.data(), &info);
      lapack::check_argument_info(info, op, "getrf");
      WICK_CHECK(!check_errors || info == 0,
                 "{}: {}U[{},{}] is zero and using it on lu_solve would result in a division by zero (input {}). If "
                 "you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                 "linalg.lu_factor_ex(A, pivot)",
                 op, lapack::batch_prefix(a, i), info, info, linalg_shape(a));
      for (int j = 0; j < k; ++j) pp[i * k + j] = ipiv[static_cast<size_t>(j)];
    }
  });
  return {lapack::from_colmajor(ha, a.device()), lapack::to_device(piv, a.device())};
}

Tensor lapack_lu_solve(const Tensor& lu, const Tensor& pivots, const Tensor& b, bool adjoint, const char* op) {
  linalg_check_matrix(lu, op, true);
  const int n = static_cast<int>(lu.size(-1));
  WICK_CHECK(pivots.defined(), "{}: pivots is an undefined tensor", op);
  WICK_CHECK_TYPE(pivots.dtype() == kInt64, "{}: pivots must be int64 (as lu_factor returns them), got {}", op,
                  pivots.dtype());
  WICK_CHECK(pivots.dim() == lu.dim() - 1 && pivots.size(-1) == n &&
                 std::equal(lu.sizes().begin(), lu.sizes().end() - 2, pivots.sizes().begin()),
             "{}: expected pivots [..., {}] with LU's batch dims for LU {}, got pivots {}", op, n, linalg_shape(lu),
             linalg_shape(pivots));
  check_rhs(lu, b, n, -1, op);
  const int k = static_cast<int>(b.size(-1));
  const int64_t batch = lapack::batch_count(lu);
  const Tensor hp = lapack::on_device(pivots, kCPU);
  const int64_t* pp = static_cast<const int64_t*>(hp.data_ptr());
  // getrs swaps rows by these indices: one out of 1..n would read and write out of bounds.
  for (int64_t i = 0; i < batch * n; ++i)
    WICK_CHECK(pp[i] >= 1 && pp[i] <= n,
               "{}: {}pivots holds {} at position {}; LU pivots of an {} x {} matrix are 1-based rows in 1..{} (as "
               "lu_factor returns them)",
               op, lapack::batch_prefix(lu, i / std::max(n, 1)), pp[i], i % std::max(n, 1), n, n, n);
  lapack::lapack_on_budget();
  Tensor ha = lapack::colmajor_copy(lu), hb = lapack::colmajor_copy(b);
  dispatch_floating(lu.dtype(), op, [&]<typename T>() {
    const T* pa = static_cast<const T*>(ha.data_ptr());
    T* pb = static_cast<T*>(hb.data_ptr());
    std::vector<int> ipiv(static_cast<size_t>(std::max(n, 1)));
    for (int64_t i = 0; i < batch && n > 0 && k > 0; ++i) {
      for (int j = 0; j < n; ++j) ipiv[static_cast<size_t>(j)] = static_cast<int>(pp[i * n + j]);
      int info = 0;
      lapack::getrs(adjoint ? 'T' : 'N', n, k, pa + i * n * n, n, ipiv.data(), pb + i * n * int64_t{k}, n, &info);
      lapack::check_argument_info(info, op, "getrs");
    }
  });
  return lapack::from_colmajor(hb, b.device());
}

}  // namespace wick::native
