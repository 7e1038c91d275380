// LU and Cholesky: solve (getrf + getrs), determinants (getrf) and the Cholesky factor (potrf).
#include <cmath>
#include <limits>
#include <vector>

#include "lapack/lapack_host.h"
#include "lapack/lapack_routines.h"

namespace wick::native {

std::string linalg_shape(const Tensor& t) { return fmt::format("[{}]", fmt::join(t.sizes(), ", ")); }

void linalg_check_matrix(const Tensor& a, const char* op, bool square) {
  WICK_CHECK(a.defined(), "{}: the input is an undefined tensor", op);
  WICK_CHECK_TYPE(is_floating(a.dtype()),
                  "{}: expected a floating-point input (float32 or float64) but got {} of shape {}; convert it with "
                  ".to(wick::kFloat64) first",
                  op, a.dtype(), linalg_shape(a));
  WICK_CHECK(a.dim() >= 2, "{}: the input must have at least 2 dimensions (matrices [..., m, n]) but has shape {}", op,
             linalg_shape(a));
  WICK_CHECK(!square || a.size(-1) == a.size(-2),
             "{}: A must be batches of square matrices, but they are {} by {} matrices (input shape {})", op,
             a.size(-2), a.size(-1), linalg_shape(a));
  lapack::check_int_sizes(a, op);
}

Tensor lapack_solve(const Tensor& a, const Tensor& b, const char* op) {
  linalg_check_matrix(a, op, true);
  check_same_device(op, {&a, &b});
  WICK_CHECK_TYPE(b.dtype() == a.dtype(), "{}: A is {} but B is {}; give both one dtype", op, a.dtype(), b.dtype());
  WICK_CHECK(b.dim() == a.dim() && b.size(-2) == a.size(-2) &&
                 std::equal(a.sizes().begin(), a.sizes().end() - 2, b.sizes().begin()),
             "{}: expected B [..., {}, k] with A's batch dims for A {}, got B {}", op, a.size(-1), linalg_shape(a),
             linalg_shape(b));
  lapack::check_int_sizes(b, op);
  const int n = static_cast<int>(a.size(-1)), k = static_cast<int>(b.size(-1));
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();  // getrf, getrs and potrf need no workspace (Note [LAPACK workspace sizes])
  Tensor ha = lapack::colmajor_copy(a), hb = lapack::colmajor_copy(b);
  const char* what = std::string_view(op) == "linalg.inv" ? "inversion" : "solve";
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    T* pb = static_cast<T*>(hb.data_ptr());
    std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
    for (int64_t i = 0; i < batch && n > 0; ++i) {
      int info = 0;
      lapack::getrf(n, n, pa + i * n * n, n, piv.data(), &info);
      lapack::check_argument_info(info, op, "getrf");
      WICK_CHECK(info == 0,
                 "{}: {}The diagonal element {} is zero, the {} could not be completed because the input matrix {} is "
                 "singular.",
                 op, lapack::batch_prefix(a, i), info, what, linalg_shape(a));
      if (k == 0) continue;
      lapack::getrs(n, k, pa + i * n * n, n, piv.data(), pb + i * int64_t{n} * k, n, &info);
      lapack::check_argument_info(info, op, "getrs");
    }
  });
  return lapack::from_colmajor(hb, b.device());
}

std::tuple<Tensor, Tensor, Tensor> lapack_det(const Tensor& a) {
  const char* op = "linalg.det";
  linalg_check_matrix(a, op, true);
  const int n = static_cast<int>(a.size(-1));
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();
  DimVector bs(a.sizes());
  bs.resize(bs.size() - 2);
  const Device host = lapack::host_of(a);
  Tensor ha = lapack::colmajor_copy(a);
  Tensor det = native::empty(bs, a.dtype(), host), sign = native::empty(bs, a.dtype(), host),
         logabs = native::empty(bs, a.dtype(), host);
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    T *pd = static_cast<T*>(det.data_ptr()), *ps = static_cast<T*>(sign.data_ptr()),
      *pl = static_cast<T*>(logabs.data_ptr());
    std::vector<int> piv(static_cast<size_t>(std::max(n, 1)));
    for (int64_t i = 0; i < batch; ++i) {
      T* m = pa + i * n * n;
      int info = 0;
      if (n > 0) lapack::getrf(n, n, m, n, piv.data(), &info);
      lapack::check_argument_info(info, op, "getrf");
      T prod = 1, perm = 1, s = 1, l = 0;
      for (int j = 0; j < n; ++j) {
        const T u = m[j * n + j];
        prod *= u;
        if (piv[static_cast<size_t>(j)] != j + 1) perm = -perm;  // a row swap
        s *= u > 0 ? T(1) : u < 0 ? T(-1) : u == 0 ? T(0) : u;   // sgn; NaN stays NaN
        l += std::log(std::abs(u));
      }
      pd[i] = perm * prod;
      s *= perm;
      ps[i] = s;
      pl[i] = l;
    }
  });
  const Device dev = a.device();
  return {lapack::to_device(det, dev), lapack::to_device(sign, dev), lapack::to_device(logabs, dev)};
}

}  // namespace wick::native

namespace wick::native {

Tensor lapack_cholesky(const Tensor& a, bool upper) {
  const char* op = "linalg.cholesky";
  linalg_check_matrix(a, op, true);
  const int n = static_cast<int>(a.size(-1));
  const int64_t batch = lapack::batch_count(a);
  lapack::lapack_on_budget();
  Tensor ha = lapack::colmajor_copy(a);
  dispatch_floating(a.dtype(), op, [&]<typename T>() {
    T* pa = static_cast<T*>(ha.data_ptr());
    for (int64_t i = 0; i < batch && n > 0; ++i) {
      T* m = pa + i * n * n;
      int info = 0;
      lapack::potrf(upper ? 'U' : 'L', n, m, n, &info);
      lapack::check_argument_info(info, op, "potrf");
      WICK_CHECK(info == 0,
                 "{}: {}The factorization could not be completed because the input {} is not positive-definite (the "
                 "leading minor of order {} is not positive-definite).",
                 op, lapack::batch_prefix(a, i), linalg_shape(a), info);
      for (int c = 0; c < n; ++c)  // zero the triangle potrf leaves untouched (column-major: m[c * n + r])
        for (int r = 0; r < n; ++r)
          if (upper ? r > c : r < c) m[c * n + r] = 0;
    }
  });
  return lapack::from_colmajor(ha, a.device());
}

}  // namespace wick::native
