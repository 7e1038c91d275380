// init::orthogonal_: a Haar-distributed (semi-)orthogonal matrix from the QR factorization of a
// normal draw (householder_qr.h).
#include <cmath>
#include <vector>

#include "householder_qr.h"
#include "init_checks.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/native.h"
#include "wick/nn/init.h"

namespace wick::nn::init {

Tensor orthogonal_(Tensor t, double gain) {
  detail::check_floating("orthogonal_", t);
  WICK_CHECK(t.dim() >= 2,
             "init.orthogonal_: needs a tensor with at least 2 dims (dim 0 gives the rows, the others are flattened "
             "into the columns), got shape {}; view a vector as [1, n] or [n, 1] first",
             detail::shape_str(t));
  WICK_CHECK(std::isfinite(gain), "init.orthogonal_: gain must be finite, got {} (shape {})", gain,
             detail::shape_str(t));
  if (t.numel() == 0) return t;
  NoGradGuard no_grad;
  const int64_t rows = t.size(0), cols = t.numel() / rows;
  const Tensor draw = native::randn({rows, cols}, kFloat64, kCPU);
  const double* g = draw.data_ptr<double>();
  // Factor the tall one of the draw and its transpose.
  const bool wide = rows < cols;
  const int64_t m = wide ? cols : rows, n = wide ? rows : cols;
  std::vector<double> a(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) a[static_cast<size_t>(wide ? j * n + i : i * n + j)] = g[i * cols + j];
  const nn::detail::ThinQR qr = nn::detail::householder_qr(a, m, n);
  // Q's column k times sign(R_kk) (and the gain): the factorization with R's diagonal positive,
  // which is unique, so the result does not depend on the reflections' sign convention.
  std::vector<double> out(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < n; ++k) {
      const double s = qr.r_diag[static_cast<size_t>(k)] < 0 ? -gain : gain;
      const double v = s * qr.q[static_cast<size_t>(i * n + k)];
      out[static_cast<size_t>(wide ? k * cols + i : i * cols + k)] = v;
    }
  native::copy_(t, native::view(native::from_blob_copy(out.data(), {rows, cols}, kFloat64, kCPU), t.sizes()));
  return t;
}

}  // namespace wick::nn::init
