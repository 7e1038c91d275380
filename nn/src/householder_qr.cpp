// Householder QR (householder_qr.h). The matrix is kept column-major while it is reduced, so
// each reflection reads and writes contiguous columns.
#include "householder_qr.h"

#include <cmath>
#include <cstddef>

#include "wick/core/error.h"

namespace wick::nn::detail {

namespace {
// col <- (I - 2 v v^T / vv) col over entries [k, m), where v is zero above k.
void reflect(double* col, const double* v, double vv, size_t k, size_t m) {
  double s = 0;
  for (size_t i = k; i < m; ++i) s += v[i] * col[i];
  const double f = 2.0 * s / vv;
  for (size_t i = k; i < m; ++i) col[i] -= f * v[i];
}
}  // namespace

ThinQR householder_qr(const std::vector<double>& a, int64_t rows, int64_t cols) {
  WICK_CHECK(cols >= 0 && rows >= cols && a.size() == static_cast<size_t>(rows) * static_cast<size_t>(cols),
             "householder_qr: expected a row-major [rows, cols] matrix with rows >= cols >= 0, got {} values for "
             "[{}, {}]",
             a.size(), rows, cols);
  const size_t m = static_cast<size_t>(rows), n = static_cast<size_t>(cols);
  std::vector<double> w(m * n);  // column-major: w[j * m + i] = A[i][j], reduced to R in place
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) w[j * m + i] = a[i * n + j];
  std::vector<double> v(m * n, 0.0);  // reflector k in column k, entries k..m-1
  std::vector<double> vv(n, 0.0);     // v_k . v_k; 0 where step k reflects nothing
  ThinQR out;
  out.r_diag.assign(n, 0.0);
  for (size_t k = 0; k < n; ++k) {
    const double* x = &w[k * m];
    double norm2 = 0;
    for (size_t i = k; i < m; ++i) norm2 += x[i] * x[i];
    if (norm2 == 0) continue;  // the column is already zero below the diagonal and on it
    const double beta = x[k] >= 0 ? -std::sqrt(norm2) : std::sqrt(norm2);
    double* vk = &v[k * m];
    for (size_t i = k; i < m; ++i) vk[i] = x[i];
    vk[k] -= beta;
    for (size_t i = k; i < m; ++i) vv[k] += vk[i] * vk[i];
    for (size_t j = k + 1; j < n; ++j) reflect(&w[j * m], vk, vv[k], k, m);
    out.r_diag[k] = beta;
  }
  // Q = H_0 H_1 ... H_{n-1} applied to the first n columns of the identity, innermost first.
  // Column j < k of the partial product is still e_j, which H_k leaves alone.
  std::vector<double> q(m * n, 0.0);  // column-major
  for (size_t j = 0; j < n; ++j) q[j * m + j] = 1.0;
  for (size_t k = n; k-- > 0;) {
    if (vv[k] == 0) continue;
    for (size_t j = k; j < n; ++j) reflect(&q[j * m], &v[k * m], vv[k], k, m);
  }
  out.q.resize(m * n);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) out.q[i * n + j] = q[j * m + i];
  return out;
}

}  // namespace wick::nn::detail
