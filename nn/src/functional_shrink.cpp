// F::hardshrink, F::softshrink and F::rrelu: composites under Note [Activation composites]
// (functional_activation.cpp). PyTorch 1.13's kernels (aten/src/ATen/native/cpu/Activation.cpp,
// RreluWithNoise in Activation.cpp) fix the branches:
//   hardshrink  (x >= -l && x <= l) ? 0 : x; its backward passes the gradient only where
//               x > l or x < -l, so NaN gets 0. Written where(outside, x, constant), the constant
//               (no graph) being 0 inside and NaN at NaN, as hardtanh's outer side.
//   softshrink  x > l ? x - l : (x < -l ? x + l : 0); NaN falls to 0, with gradient 0.
//   rrelu       training: x <= 0 ? r x : x with r ~ U(lower, upper) per element (a draw for every
//               element, from wick's counter-based generator); the gradient is r, at x == 0 too.
//               Eval: leaky_relu with slope (lower + upper) / 2, F::leaky_relu itself.
#include "wick/nn/functional_shrink.h"

#include <fmt/format.h>

#include <optional>

#include "activation_inplace.h"
#include "wick/core/native.h"
#include "wick/core/scalar_fit.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
// lambda, lower and upper are converted to the input's dtype: they must fit it (Note [Scalar fits
// dtype]), checked after check_activation_input and before anything is written.
void check_param_fits(const char* op, const char* name, double v, const Tensor& input) {
  check_scalar_fits(op, name, v, input.dtype(), input.sizes());
}
}  // namespace

Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options) {
  const double l = options.lambda();
  detail::check_activation_input("hardshrink", input);
  check_param_fits("hardshrink", "lambda", l, input);
  const Tensor outside = logical_or(input.gt(l), input.lt(-l));
  const Tensor inside = logical_and(input.ge(-l), input.le(l));
  const Tensor rest = native::where(inside, native::scalar_tensor(0.0, input.dtype(), input.device()), input);
  return where(outside, input, rest);
}

Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options) {
  const double l = options.lambda();
  WICK_CHECK(l >= 0.0, "softshrink: lambda must be >= 0, got {} (input of shape {})", l, detail::shape_str(input));
  detail::check_activation_input("softshrink", input);
  check_param_fits("softshrink", "lambda", l, input);
  return where(input.gt(l), input - l, where(input.lt(-l), input + l, Scalar(0.0)));
}

Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options) {
  const double lower = options.lower(), upper = options.upper();
  WICK_CHECK(lower <= upper, "rrelu: lower ({}) must not exceed upper ({}) (input of shape {})", lower, upper,
             detail::shape_str(input));
  detail::check_activation_input("rrelu", input);
  check_param_fits("rrelu", "lower", lower, input);
  check_param_fits("rrelu", "upper", upper, input);
  if (!options.training()) {
    return leaky_relu(input, LeakyReLUFuncOptions().negative_slope((lower + upper) / 2).inplace(options.inplace()));
  }
  return detail::apply_activation("rrelu", input, options.inplace(), [&](const Tensor& x) {
    Tensor slope = native::rand(x.sizes(), x.dtype(), x.device());
    slope = native::binary(BinaryOp::Add, native::binary(BinaryOp::Mul, slope, Scalar(upper - lower)), Scalar(lower));
    return where(x.le(0), mul(x, slope), x);
  });
}

}  // namespace wick::nn::functional
