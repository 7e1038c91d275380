// Least squares: gels (QR), gelsy (complete orthogonal factorisation) and gelsd (SVD), on
// column-major host copies (Note [Linalg on the host], wick/core/lapack.h).
#include <algorithm>
#include <climits>
#include <vector>

#include "lapack/lapack_host.h"
#include "lapack/lapack_routines.h"

namespace wick::native {

std::tuple<Tensor, Tensor, Tensor, Tensor> lapack_lstsq(const Tensor& a, const Tensor& b, double rcond,
                                                        const std::string& driver) {
  const char* op = "linalg.lstsq";
  linalg_check_matrix(a, op, false);
  WICK_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd",
             "{}: parameter `driver` should be one of (gels, gelsy, gelsd) (wick has no gelss), but got {}", op,
             driver);
  WICK_CHECK(b.defined(), "{}: B is an undefined tensor", op);
  check_same_device(op, {&a, &b});
  WICK_CHECK_TYPE(b.dtype() == a.dtype(), "{}: A is {} but B is {}; give both one dtype", op, a.dtype(), b.dtype());
  WICK_CHECK(b.dim() == a.dim() && b.size(-2) == a.size(-2) &&
                 std::equal(a.sizes().begin(), a.sizes().end() - 2, b.sizes().begin()),
             "{}: expected B [..., {}, k] with A's batch dims for A {}, got B {}", op, a.size(-2), linalg_shape(a),
             linalg_shape(b));
  lapack::check_int_sizes(b, op);
  const int64_t m64 = a.size(-2), n64 = a.size(-1), k64 = b.size(-1), rows64 = std::max<int64_t>({m64, n64, 1});
  WICK_CHECK(rows64 * k64 <= INT_MAX, "{}: B {} needs {} x {} elements per matrix, past LAPACK's 32-bit {}", op,
             linalg_shape(b), rows64, k64, INT_MAX);
  // Note [lstsq without right-hand sides]: gelsd's rank and singular values are A's alone, but
  // gelsd refuses nrhs = 0; with k = 0 it runs on one zero right-hand side of its own, whose
  // solution is dropped. gels and gelsy keep LAPACK's quick return (rank 0 for gelsy), as
  // PyTorch 1.13 gives (docs/tensors.md).
  const bool own_rhs = driver == "gelsd" && k64 == 0;
  const int64_t kr64 = own_rhs ? 1 : k64;  // the right-hand sides LAPACK sees
  const int64_t need = driver == "gels"    ? lapack::gels_min_lwork(m64, n64, kr64)
                       : driver == "gelsy" ? lapack::gelsy_min_lwork(m64, n64, kr64)
                                           : lapack::gelsd_min_lwork(m64, n64, kr64);
  lapack::check_workspace(need, a, op, driver.c_str());
  if (driver == "gelsd") lapack::check_workspace(lapack::gelsd_min_liwork(m64, n64), a, op, "gelsd (integer)");
  const int m = static_cast<int>(m64), n = static_cast<int>(n64), k = static_cast<int>(k64),
            kr = static_cast<int>(kr64);
  const int rows = static_cast<int>(rows64), mn = std::min(m, n);
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();
  const Device host = lapack::host_of(a);
  DimVector bs(a.sizes());
  bs.resize(bs.size() - 2);
  DimVector xs = bs, ss = bs;
  xs.push_back(k);
  xs.push_back(rows);  // B column-major with max(m, n) rows: the solution comes back in its first n
  ss.push_back(mn);
  Tensor ha = lapack::colmajor_copy(a);
  Tensor hx = native::zeros(xs, a.dtype(), host);
  if (hx.numel() > 0 && m > 0) native::copy_(native::narrow(hx, -1, 0, m), native::transpose(b, -2, -1));
  Tensor rank = driver == "gels" ? native::empty({0}, kInt64, host) : native::zeros(bs, kInt64, host);
  Tensor sv = driver == "gelsd" ? native::zeros(ss, a.dtype(), host) : native::empty({0}, a.dtype(), host);
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    T* px = static_cast<T*>(hx.data_ptr());
    int64_t* pr = driver == "gels" ? nullptr : static_cast<int64_t*>(rank.data_ptr());
    T* ps = driver == "gelsd" ? static_cast<T*>(sv.data_ptr()) : nullptr;
    if (driver == "gelsd") lapack::check_finite(pa, m64 * n64, batch, a, op, "the least-squares SVD");
    if (mn == 0 || kr == 0) return;  // nothing to solve: a zero solution and rank 0, as PyTorch's
    const int lda = std::max(m, 1);
    const T rc = static_cast<T>(rcond);
    std::vector<int> jpvt(static_cast<size_t>(n)), iwork;
    std::vector<T> s(static_cast<size_t>(mn)), rhs(own_rhs ? static_cast<size_t>(rows) : 0);
    int info = 0, r = 0, lwork = 1;
    T query = 0;
    if (own_rhs) px = rhs.data();
    if (driver == "gels") lapack::gels(m, n, k, pa, lda, px, rows, &query, -1, &info);
    if (driver == "gelsy") lapack::gelsy(m, n, k, pa, lda, px, rows, jpvt.data(), rc, &r, &query, -1, &info);
    if (driver == "gelsd") {
      int iquery = 0;
      lapack::gelsd(m, n, kr, pa, lda, px, rows, s.data(), rc, &r, &query, -1, &iquery, &info);
      iwork.resize(static_cast<size_t>(std::max<int64_t>(iquery, lapack::gelsd_min_liwork(m64, n64))));
    }
    lapack::check_argument_info(info, op, driver.c_str());
    lwork = lapack::work_size(query, need);
    std::vector<T> work(static_cast<size_t>(lwork));
    for (int64_t i = 0; i < batch; ++i) {
      T* ai = pa + i * m64 * n64;
      T* xi = own_rhs ? px : px + i * rows64 * k64;
      if (own_rhs) std::fill(rhs.begin(), rhs.end(), T(0));
      if (driver == "gels") lapack::gels(m, n, k, ai, lda, xi, rows, work.data(), lwork, &info);
      if (driver == "gelsy") {
        std::fill(jpvt.begin(), jpvt.end(), 0);
        lapack::gelsy(m, n, k, ai, lda, xi, rows, jpvt.data(), rc, &r, work.data(), lwork, &info);
      }
      if (driver == "gelsd")
        lapack::gelsd(m, n, kr, ai, lda, xi, rows, s.data(), rc, &r, work.data(), lwork, iwork.data(), &info);
      lapack::check_argument_info(info, op, driver.c_str());
      WICK_CHECK(info == 0 || driver != "gels",
                 "{}: {}The least squares solution could not be computed because the input matrix {} does not have "
                 "full rank (error code: {}); use driver \"gelsy\" or \"gelsd\" for rank-deficient matrices",
                 op, lapack::batch_prefix(a, i), linalg_shape(a), info);
      WICK_CHECK(info == 0, "{}: {}the SVD of the input {} did not converge (gelsd info {})", op,
                 lapack::batch_prefix(a, i), linalg_shape(a), info);
      if (pr) pr[i] = r;
      if (ps) std::copy(s.begin(), s.end(), ps + i * mn);
    }
  });
  const Device dev = a.device();
  const Tensor x = native::transpose(hx, -2, -1);  // [..., rows, k]
  return {lapack::on_device(native::narrow(x, -2, 0, n), dev),
          lapack::on_device(native::narrow(x, -2, std::min(n, m), std::max(m - n, 0)), dev),
          lapack::to_device(rank, dev), lapack::to_device(sv, dev)};
}

}  // namespace wick::native
