// Orthogonal factorisations: QR (geqrf + orgqr), the symmetric eigendecomposition (syevd) and the
// SVD (gesdd), each on column-major host copies (Note [Linalg on the host], wick/core/lapack.h).
#include <algorithm>
#include <vector>

#include "lapack/lapack_host.h"
#include "lapack/lapack_routines.h"

namespace wick::native {

namespace {
DimVector with_matrix(const Tensor& a, int64_t rows, int64_t cols) {  // a's batch dims + [rows, cols]
  DimVector s(a.sizes());
  s.resize(s.size() - 2);
  s.push_back(rows);
  s.push_back(cols);
  return s;
}
DimVector with_vector(const Tensor& a, int64_t len) {
  DimVector s(a.sizes());
  s.resize(s.size() - 2);
  s.push_back(len);
  return s;
}
// An identity in each column-major [rows x cols] matrix of a host buffer (empty factorisations).
void fill_eye(const Tensor& h) {
  fill_(h, 0);
  if (h.numel() == 0) return;
  const int64_t c = h.size(-2), r = h.size(-1);
  for (int64_t i = 0; i < std::min(r, c); ++i) fill_(native::select(native::select(h, -2, i), -1, i), 1);
}
}  // namespace

std::tuple<Tensor, Tensor> lapack_qr(const Tensor& a, bool compute_q, bool complete) {
  const char* op = "linalg.qr";
  linalg_check_matrix(a, op, false);
  const int m = static_cast<int>(a.size(-2)), n = static_cast<int>(a.size(-1)), k = std::min(m, n);
  const int qcols = complete ? m : k, rrows = complete ? m : k;
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();
  const Device host = lapack::host_of(a);
  Tensor ha = lapack::colmajor_copy(a);
  Tensor hr = native::zeros(with_matrix(a, n, rrows), a.dtype(), host);  // R column-major
  Tensor hq = compute_q ? native::zeros(with_matrix(a, qcols, m), a.dtype(), host) : Tensor();
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    T* pr = static_cast<T*>(hr.data_ptr());
    T* pq = compute_q ? static_cast<T*>(hq.data_ptr()) : nullptr;
    const int lda = std::max(m, 1);
    std::vector<T> tau(static_cast<size_t>(std::max(k, 1)));
    int info = 0, lwork = 1;
    T query = 0;
    if (m > 0 && n > 0) {
      lapack::geqrf(m, n, pa, lda, tau.data(), &query, -1, &info);
      lwork = lapack::work_size(query, std::max(n, 1));  // geqrf's minimum: max(1, n)
    }
    if (compute_q && m > 0 && qcols > 0) {
      lapack::orgqr(m, qcols, k, pq, lda, tau.data(), &query, -1, &info);
      lwork = std::max(lwork, lapack::work_size(query, std::max(qcols, 1)));  // orgqr's: max(1, n)
    }
    lapack::check_argument_info(info, op, "workspace query");
    std::vector<T> work(static_cast<size_t>(lwork));
    for (int64_t b = 0; b < batch; ++b) {
      T* ab = pa + b * int64_t{m} * n;
      if (m > 0 && n > 0) lapack::geqrf(m, n, ab, lda, tau.data(), work.data(), lwork, &info);
      lapack::check_argument_info(info, op, "geqrf");
      T* rb = pr + b * int64_t{rrows} * n;
      for (int c = 0; c < n; ++c)
        for (int r = 0; r <= std::min(c, rrows - 1); ++r) rb[int64_t{c} * rrows + r] = ab[int64_t{c} * m + r];
      if (!compute_q || m == 0 || qcols == 0) continue;
      T* qb = pq + b * int64_t{m} * qcols;
      std::copy(ab, ab + int64_t{m} * std::min(n, qcols), qb);  // the reflectors, below R's diagonal
      lapack::orgqr(m, qcols, k, qb, lda, tau.data(), work.data(), lwork, &info);
      lapack::check_argument_info(info, op, "orgqr");
    }
  });
  Tensor q = compute_q ? lapack::from_colmajor(hq, a.device()) : native::empty({0}, a.dtype(), a.device());
  return {q, lapack::from_colmajor(hr, a.device())};
}

std::tuple<Tensor, Tensor> lapack_eigh(const Tensor& a, bool upper, bool compute_v, const char* op) {
  linalg_check_matrix(a, op, true);
  const int n = static_cast<int>(a.size(-1));
  lapack::check_workspace(lapack::syevd_min_lwork(n, compute_v), a, op, "syevd");
  lapack::check_workspace(lapack::syevd_min_liwork(n, compute_v), a, op, "syevd integer");
  lapack::lapack_on_budget();
  const int64_t batch = lapack::batch_count(a);
  Tensor ha = lapack::colmajor_copy(a);
  Tensor hw = native::empty(with_vector(a, n), a.dtype(), lapack::host_of(a));
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    T* pw = static_cast<T*>(hw.data_ptr());
    lapack::check_finite(pa, int64_t{n} * n, batch, a, op, "the eigendecomposition");
    if (n == 0) return;
    const char jobz = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    int info = 0, iquery = 0;
    T query = 0;
    lapack::syevd(jobz, uplo, n, pa, n, pw, &query, -1, &iquery, -1, &info);
    lapack::check_argument_info(info, op, "syevd");
    const int lwork = lapack::work_size(query, lapack::syevd_min_lwork(n, compute_v));
    const int liwork = lapack::work_size(static_cast<double>(iquery), lapack::syevd_min_liwork(n, compute_v));
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<int> iwork(static_cast<size_t>(liwork));
    for (int64_t b = 0; b < batch; ++b) {
      lapack::syevd(jobz, uplo, n, pa + b * int64_t{n} * n, n, pw + b * n, work.data(), lwork, iwork.data(), liwork,
                    &info);
      lapack::check_argument_info(info, op, "syevd");
      WICK_CHECK(info == 0,
                 "{}: {}The algorithm failed to converge because the input matrix {} is ill-conditioned or has too "
                 "many repeated eigenvalues (error code: {}).",
                 op, lapack::batch_prefix(a, b), linalg_shape(a), info);
    }
  });
  Tensor v = compute_v ? lapack::from_colmajor(ha, a.device()) : native::empty({0}, a.dtype(), a.device());
  return {lapack::to_device(hw, a.device()), v};
}

std::tuple<Tensor, Tensor, Tensor> lapack_svd(const Tensor& a, bool full_matrices, bool compute_uv) {
  const char* op = "linalg.svd";
  linalg_check_matrix(a, op, false);
  const int m = static_cast<int>(a.size(-2)), n = static_cast<int>(a.size(-1)), k = std::min(m, n);
  const int ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  const char jobz = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
  lapack::check_workspace(lapack::gesdd_min_lwork(m, n, jobz), a, op, "gesdd");
  lapack::check_workspace(lapack::gesdd_iwork(m, n), a, op, "gesdd integer");
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();
  const Device host = lapack::host_of(a);
  Tensor ha = lapack::colmajor_copy(a);
  Tensor hs = native::empty(with_vector(a, k), a.dtype(), host);
  Tensor hu = compute_uv ? native::empty(with_matrix(a, ucols, m), a.dtype(), host) : Tensor();
  Tensor hv = compute_uv ? native::empty(with_matrix(a, n, vrows), a.dtype(), host) : Tensor();
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    lapack::check_finite(pa, int64_t{m} * n, batch, a, op, "the SVD");
    if (k == 0) {  // no singular values: U and Vh are identities (of which full_matrices keeps columns)
      if (compute_uv) {
        fill_eye(hu);
        fill_eye(hv);
      }
      return;
    }
    T* ps = static_cast<T*>(hs.data_ptr());
    T* pu = compute_uv ? static_cast<T*>(hu.data_ptr()) : nullptr;
    T* pv = compute_uv ? static_cast<T*>(hv.data_ptr()) : nullptr;
    const int ldu = std::max(m, 1), ldvt = std::max(vrows, 1);
    std::vector<int> iwork(static_cast<size_t>(lapack::gesdd_iwork(m, n)));
    int info = 0;
    T query = 0, dummy = 0;
    lapack::gesdd(jobz, m, n, pa, m, ps, pu ? pu : &dummy, ldu, pv ? pv : &dummy, ldvt, &query, -1, iwork.data(),
                  &info);
    lapack::check_argument_info(info, op, "gesdd");
    const int lwork = lapack::work_size(query, lapack::gesdd_min_lwork(m, n, jobz));
    std::vector<T> work(static_cast<size_t>(lwork));
    for (int64_t b = 0; b < batch; ++b) {
      T* ub = pu ? pu + b * int64_t{m} * ucols : &dummy;
      T* vb = pv ? pv + b * int64_t{vrows} * n : &dummy;
      lapack::gesdd(jobz, m, n, pa + b * int64_t{m} * n, m, ps + b * k, ub, ldu, vb, ldvt, work.data(), lwork,
                    iwork.data(), &info);
      lapack::check_argument_info(info, op, "gesdd");
      WICK_CHECK(info == 0,
                 "{}: {}The algorithm failed to converge because the input matrix {} is ill-conditioned or has too "
                 "many repeated singular values (error code: {}).",
                 op, lapack::batch_prefix(a, b), linalg_shape(a), info);
    }
  });
  const Device dev = a.device();
  Tensor s = lapack::to_device(hs, dev);
  if (!compute_uv) return {native::empty({0}, a.dtype(), dev), s, native::empty({0}, a.dtype(), dev)};
  return {lapack::from_colmajor(hu, dev), s, lapack::from_colmajor(hv, dev)};
}

}  // namespace wick::native
