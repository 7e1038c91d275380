// cdist: the differences of every pair of rows, [B..., P, R, M], then the p-norm over M (norm's
// gradients are _cdist_backward's: 0 where the distance is 0, 0 at a zero difference for p < 1,
// sign for p = 1, 0 for p = 0), except p = inf, whose node gives each difference that ties the
// largest magnitude the whole gradient, as _cdist_backward (amax would share it among the ties).
#include <cmath>
#include <limits>

#include "op_helpers.h"
#include "wick/autograd/cdist.h"
#include "wick/core/error.h"

namespace wick {

using namespace detail;

namespace {

// max |diff| over the last dim; backward g * sign(diff) where |diff| equals the distance.
Tensor inf_distance(const Tensor& diff) {
  Tensor out = native::amax(native::unary(UnaryOp::Abs, diff), {-1}, false);
  if (needs_grad({&diff})) {
    record_function("CdistBackward", {diff}, {out},
                    [](const VL& g, const VL& s) -> VL {
                      const Tensor& d = s[0];
                      const Tensor ties = eq(abs(d), unsqueeze(s[1], -1));
                      return {where(ties, mul(unsqueeze(g[0], -1), sign(d)), 0.0)};
                    },
                    {diff}, {out});
  }
  return out;
}
}  // namespace

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  WICK_CHECK(x1.defined() && x2.defined(), "cdist: an input is an undefined tensor");
  WICK_CHECK(x1.dim() >= 2 && x2.dim() >= 2,
             "cdist: expects x1 [..., P, M] and x2 [..., R, M] with at least 2 dims, got {} and {}", shape_str(x1),
             shape_str(x2));
  WICK_CHECK_TYPE(is_floating(x1.dtype()) && x2.dtype() == x1.dtype(),
                  "cdist: expects floating-point inputs of one dtype, got {} and {}", dtype_name(x1.dtype()),
                  dtype_name(x2.dtype()));
  native::check_same_device("cdist", {&x1, &x2});
  WICK_CHECK(x1.size(-1) == x2.size(-1), "cdist: x1 {} and x2 {} have {} and {} columns; give them the same number",
             shape_str(x1), shape_str(x2), x1.size(-1), x2.size(-1));
  WICK_CHECK(p >= 0, "cdist: p is {} for x1 {} and x2 {}; give p >= 0 (0, 1, 2, inf, ...)", p, shape_str(x1),
             shape_str(x2));
  WICK_CHECK(!compute_mode || (*compute_mode >= 0 && *compute_mode <= 2),
             "cdist: compute_mode {} is none of 0 (use_mm_for_euclid_dist_if_necessary), 1 (use_mm_for_euclid_dist) "
             "and 2 (donot_use_mm_for_euclid_dist)",
             compute_mode.value_or(0));
  const IntArrayRef b1(x1.sizes().data(), static_cast<size_t>(x1.dim() - 2));
  const IntArrayRef b2(x2.sizes().data(), static_cast<size_t>(x2.dim() - 2));
  DimVector s1 = native::broadcast_shapes(b1, b2, "cdist"), s2 = s1;
  const int64_t m = x1.size(-1);
  s1.push_back(x1.size(-2));
  s1.push_back(m);
  s2.push_back(x2.size(-2));
  s2.push_back(m);
  const Tensor diff = sub(unsqueeze(expand(x1, s1), -2), unsqueeze(expand(x2, s2), -3));  // [B..., P, R, M]
  if (m == 0) return sum(diff, {-1});
  if (p == std::numeric_limits<double>::infinity()) return inf_distance(diff);
  return norm(diff, p, {-1});
}

}  // namespace wick
