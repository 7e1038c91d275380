#pragma once
// Moving matrices between tensors and LAPACK's column-major host buffers (Note [Linalg on the
// host], wick/core/lapack.h), and the messages shared by the kernels.
#include <climits>
#include <cmath>
#include <string>

#include "wick/core/cpu_threads.h"
#include "wick/core/error.h"
#include "wick/core/lapack.h"
#include "wick/core/lapack_work.h"
#include "wick/core/native.h"

namespace wick::lapack {

/// The device LAPACK works on for `a`: its own CPU device, else cpu:0.
inline Device host_of(const Tensor& a) { return a.is_cpu() ? a.device() : kCPU; }

/// The number of matrices in a [..., r, c].
inline int64_t batch_count(const Tensor& a) {
  int64_t b = 1;
  for (int64_t i = 0; i + 2 < a.dim(); ++i) b *= a.size(i);
  return b;
}

/// A fresh contiguous host tensor [..., c, r] holding each matrix of a [..., r, c] column-major.
inline Tensor colmajor_copy(const Tensor& a) {
  DimVector s(a.sizes());
  std::swap(s[s.size() - 2], s[s.size() - 1]);
  Tensor h = native::empty(s, a.dtype(), host_of(a));
  if (h.numel() > 0) native::copy_(h, native::transpose(a, -2, -1));
  return h;
}

/// A contiguous tensor on `dev` equal to t (any strides, any device).
inline Tensor on_device(const Tensor& t, Device dev) {
  Tensor out = native::empty(t.sizes(), t.dtype(), dev);
  if (out.numel() > 0) native::copy_(out, t);
  return out;
}

/// t itself when it is on `dev`, else a copy there.
inline Tensor to_device(const Tensor& t, Device dev) { return t.device() == dev ? t : on_device(t, dev); }

/// The row-major [..., r, c] result on `dev` of a host column-major buffer [..., c, r].
inline Tensor from_colmajor(const Tensor& h, Device dev) { return on_device(native::transpose(h, -2, -1), dev); }

/// "(Batch element 3): " when `a` has batch dims, else "" (PyTorch's prefix).
inline std::string batch_prefix(const Tensor& a, int64_t i) {
  return a.dim() > 2 ? fmt::format("(Batch element {}): ", i) : std::string();
}

/// Refuses matrices LAPACK's 32-bit integers cannot index.
inline void check_int_sizes(const Tensor& a, const char* op) {
  const int64_t m = a.size(-2), n = a.size(-1);
  WICK_CHECK(m <= INT_MAX && n <= INT_MAX && m * n <= INT_MAX,
             "{}: the input {} has matrices of {} x {}; LAPACK's 32-bit indices reach {} elements per matrix", op,
             native::linalg_shape(a), m, n, INT_MAX);
}

/// A negative info is an argument wick passed wrongly: a bug, reported rather than ignored.
inline void check_argument_info(int info, const char* op, const char* routine) {
  WICK_CHECK_STATE(info >= 0, "{}: LAPACK's {} rejected argument {} (a bug in wick; please report it)", op, routine,
                   -info);
}

/// Refuses a matrix whose LAPACK `routine` needs a workspace of `need` elements past INT_MAX
/// (Note [LAPACK workspace sizes], wick/core/lapack_work.h), before anything is allocated.
inline void check_workspace(int64_t need, const Tensor& a, const char* op, const char* routine) {
  WICK_CHECK(need <= INT_MAX,
             "{}: the input {} needs a LAPACK {} workspace of {} elements per matrix, past the {} that LAPACK's "
             "32-bit sizes reach; give smaller matrices",
             op, native::linalg_shape(a), routine, need, INT_MAX);
}

/// Runs OpenBLAS single-threaded when the current CPU device has a thread budget, as GEMMs do
/// (Note [GEMMs on wick's threads]): LAPACK's blocked routines call OpenBLAS's threaded BLAS, and
/// its own pool next to wick's would oversubscribe the budget's cores. Without a budget OpenBLAS
/// keeps its thread count. A factorisation is not cut into blocks on wick's threads: each matrix
/// is one LAPACK call on the calling thread.
inline void lapack_on_budget() { (void)blas_on_budget(); }

/// Refuses a matrix of `batch` column-major matrices of `per` elements that holds NaN or inf.
template <typename T>
void check_finite(const T* p, int64_t per, int64_t batch, const Tensor& a, const char* op, const char* what) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < per; ++i)
      WICK_CHECK(std::isfinite(p[b * per + i]),
                 "{}: {}the input {} holds NaN or infinity; {} of a non-finite matrix is undefined (PyTorch 1.13 "
                 "reports that its algorithm failed to converge); check the input with isfinite() first",
                 op, batch_prefix(a, b), native::linalg_shape(a), what);
}

}  // namespace wick::lapack
