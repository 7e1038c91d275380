// F::normalize: input over its clamped p-norm along one dim, composed of differentiable ops
// (norm, clamp, div) as PyTorch 1.13's torch.nn.functional.normalize.
#include "wick/nn/functional_normalize.h"

#include <cmath>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/scalar_fit.h"

namespace wick::nn::functional {

Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options) {
  WICK_CHECK(input.defined(), "normalize: the input is an undefined tensor");
  WICK_CHECK_TYPE(is_floating(input.dtype()),
                  "normalize: expects a floating-point input, got {} of shape {}; convert with "
                  ".to(wick::kFloat32) first",
                  dtype_name(input.dtype()), detail::shape_str(input));
  const int64_t r = input.dim(), n = r == 0 ? 1 : r;  // a 0-d input takes dim 0 and -1
  const int64_t dim = options.dim();
  WICK_CHECK_INDEX(dim >= -n && dim < n,
                   "normalize: dim {} is out of range for an input of shape {} (expected a dim in [{}, {}])", dim,
                   detail::shape_str(input), -n, n - 1);
  WICK_CHECK(!std::isnan(options.p()),
             "normalize: p is NaN for an input of shape {}; give a real order (2, 1, inf, ...)",
             detail::shape_str(input));
  // clamp_min converts eps to the input's dtype with PyTorch's checked conversion.
  check_scalar_fits("normalize", "eps", Scalar(options.eps()), input.dtype(), input.sizes());
  const Tensor denominator = clamp(norm(input, options.p(), {dim}, true), Scalar(options.eps()), std::nullopt);
  return div(input, denominator);
}

}  // namespace wick::nn::functional
