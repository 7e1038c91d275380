// F::relu, silu, leaky_relu, elu, selu, celu, softplus, hardtanh, relu6, hardsigmoid, hardswish, mish,
// softsign, tanhshrink, threshold, glu, logsigmoid, softmin and prelu.
//
// Note [Activation composites]
// Each activation is written once, as a composite of differentiable ops, so autograd, double
// backward and every device come with no kernel of its own. Three rules keep the composites
// exact where PyTorch's fused kernels are:
//   - A piecewise function is where(cond, a, b) with PyTorch's comparison (x > 0, x <= threshold,
//     ...), so the gradient at a kink is the side PyTorch picks. Where PyTorch's gradient is 0 at
//     the bounds (hardtanh, relu6, hardsigmoid: open intervals) the outer side is a constant
//     (native::clamp, no graph), since clamp's own gradient is 1 at its bounds.
//   - A side that would overflow where it is not taken (expm1(x) of a large x in elu, exp(beta x)
//     in softplus, exp(-x) in logsigmoid) gets its input clamped into its own half-line first:
//     where() gives the untaken side a zero gradient, and 0 * inf would be NaN. The clamp passes
//     the gradient at its bound, which is where the kink's side is taken.
//   - NaN propagates as in PyTorch: every comparison with NaN is false, and each where puts the
//     branch that keeps x (or its clamp) on the false side (threshold: x <= t ? value : x).
// inplace computes the result on a snapshot (a differentiable clone of the input, so that the
// nodes save the clone and not the tensor about to be overwritten) and copies it into the input
// with Tensor::copy_, which records the write and rebases the input's history (Note [In-place
// ops]). PyTorch's in-place kernels save their result instead, which is why PyTorch refuses
// backward through leaky_relu_ with a negative slope and elu_ with a negative alpha; wick takes
// both.
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <utility>

#include "activation_inplace.h"
#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/autograd/grad_mode.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/core/scalar_fit.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

using detail::check_activation_input;

namespace {
// A parameter the op converts to the input's dtype must fit it, checked before anything is
// written (Note [Scalar fits dtype]); an undefined input is check_activation_input's to refuse.
void check_param_fits(const char* op, const char* name, double v, const Tensor& input) {
  if (input.defined()) check_scalar_fits(op, name, v, input.dtype(), input.sizes());
}
}  // namespace

// fn(input), or with inplace fn's result written into the input (activation_inplace.h).
template <typename Fn>
Tensor apply(const char* op, const Tensor& input, bool inplace, Fn&& fn) {
  return detail::apply_activation(op, input, inplace, std::forward<Fn>(fn));
}

// x > 0 ? scale * x : alpha * scale * expm1(input_scale * x): PyTorch's elu kernel, which serves
// elu, selu and celu. PyTorch 1.13 computes exp(.) - 1; expm1 is exact near 0.
Tensor elu_composite(const Tensor& x, double alpha, double scale, double input_scale) {
  Tensor negative_side = clamp(x, std::nullopt, Scalar(0.0));  // expm1 never sees a large x
  if (input_scale != 1.0) negative_side = negative_side * input_scale;
  const Tensor negative = expm1(negative_side) * (alpha * scale);
  return where(x.gt(0), scale == 1.0 ? x : x * scale, negative);
}

Tensor softplus_composite(const Tensor& x, double beta, double threshold) {
  const Tensor bx = beta == 1.0 ? x : x * beta;
  Tensor soft = log1p(exp(clamp(bx, std::nullopt, Scalar(threshold))));
  if (beta != 1.0) soft = soft / beta;
  return where(bx.gt(threshold), x, soft);
}

// x on the open interval (lo, hi), the clamped value (no gradient) elsewhere.
Tensor hardtanh_composite(const Tensor& x, double lo, double hi) {
  const Tensor inside = logical_and(x.gt(lo), x.lt(hi));
  return where(inside, x, native::clamp(x, Scalar(lo), Scalar(hi)));
}
}  // namespace

Tensor relu(const Tensor& input, const ReLUFuncOptions& options) {
  if (!options.inplace()) return wick::relu(input);
  Tensor out = input;  // the same tensor
  return out.relu_();
}

Tensor silu(const Tensor& input, const SiLUFuncOptions& options) {
  if (!options.inplace()) return wick::silu(input);
  return apply("silu", input, true, [](const Tensor& x) { return wick::silu(x); });
}

Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options) {
  const double slope = options.negative_slope();
  check_param_fits("leaky_relu", "negative_slope", slope, input);
  return apply("leaky_relu", input, options.inplace(), [&](const Tensor& x) { return where(x.gt(0), x, x * slope); });
}

Tensor elu(const Tensor& input, const ELUFuncOptions& options) {
  check_activation_input("elu", input);  // a TypeError for an integer input comes first
  check_param_fits("elu", "alpha", options.alpha(), input);
  return apply("elu", input, options.inplace(),
               [&](const Tensor& x) { return elu_composite(x, options.alpha(), 1.0, 1.0); });
}

Tensor selu(const Tensor& input, const SELUFuncOptions& options) {
  // PyTorch's constants (torch/nn/functional.py, ATen's SELU_ALPHA and SELU_SCALE).
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return apply("selu", input, options.inplace(),
               [&](const Tensor& x) { return elu_composite(x, kAlpha, kScale, 1.0); });
}

Tensor celu(const Tensor& input, const CELUFuncOptions& options) {
  const double alpha = options.alpha();
  WICK_CHECK(alpha != 0.0, "celu: alpha cannot be 0 (it divides x); got alpha 0 for an input of shape {}",
             input.defined() ? shape_str(input) : "undefined");
  check_activation_input("celu", input);
  check_param_fits("celu", "alpha", alpha, input);
  return apply("celu", input, options.inplace(),
               [&](const Tensor& x) { return elu_composite(x, alpha, 1.0, 1.0 / alpha); });
}

Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options) {
  WICK_CHECK(options.beta() != 0.0, "softplus: beta cannot be 0 (the result is divided by it), got 0 for shape {}",
             input.defined() ? shape_str(input) : "undefined");
  check_activation_input("softplus", input);
  check_param_fits("softplus", "beta", options.beta(), input);
  check_param_fits("softplus", "threshold", options.threshold(), input);
  return softplus_composite(input, options.beta(), options.threshold());
}

Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options) {
  const double lo = options.min_val(), hi = options.max_val();
  WICK_CHECK(lo <= hi, "hardtanh: min_val ({}) must not exceed max_val ({}); swap them", lo, hi);
  check_param_fits("hardtanh", "min_val", lo, input);
  check_param_fits("hardtanh", "max_val", hi, input);
  return apply("hardtanh", input, options.inplace(), [&](const Tensor& x) { return hardtanh_composite(x, lo, hi); });
}

Tensor relu6(const Tensor& input, const ReLU6FuncOptions& options) {
  return apply("relu6", input, options.inplace(), [](const Tensor& x) { return hardtanh_composite(x, 0.0, 6.0); });
}

Tensor hardsigmoid(const Tensor& input, const HardsigmoidFuncOptions& options) {
  return apply("hardsigmoid", input, options.inplace(), [](const Tensor& x) {
    const Tensor y = (x + 3) / 6;  // PyTorch's order: clamp(x + 3, 0, 6) / 6
    return where(logical_and(x.gt(-3), x.lt(3)), y, native::clamp(y, Scalar(0.0), Scalar(1.0)));
  });
}

Tensor hardswish(const Tensor& input, const HardswishFuncOptions& options) {
  return apply("hardswish", input, options.inplace(), [](const Tensor& x) {
    // PyTorch's backward: 0 for x < -3, x / 3 + 1/2 for -3 <= x < 3, 1 from 3 on. (At x == 3
    // PyTorch 1.13's vectorized loop gives 1 and its scalar tail 3 / 3 + 1/2: wick takes the
    // loop's, which every element but the last few of a tensor gets.)
    return where(x.lt(-3), Scalar(0.0), where(x.lt(3), x * (x + 3) / 6, x));
  });
}

Tensor mish(const Tensor& input, const MishFuncOptions& options) {
  return apply("mish", input, options.inplace(),
               [](const Tensor& x) { return x * wick::tanh(softplus_composite(x, 1.0, 20.0)); });
}

Tensor softsign(const Tensor& input) {
  check_activation_input("softsign", input);
  return input / (abs(input) + 1);
}

Tensor tanhshrink(const Tensor& input) {
  check_activation_input("tanhshrink", input);
  return input - wick::tanh(input);
}

Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options) {
  const double t = options.threshold(), value = options.value();
  check_param_fits("threshold", "threshold", t, input);
  check_param_fits("threshold", "value", value, input);
  return apply("threshold", input, options.inplace(),
               [&](const Tensor& x) { return where(x.le(t), Scalar(value), x); });
}

Tensor glu(const Tensor& input, const GLUFuncOptions& options) {
  check_activation_input("glu", input);
  WICK_CHECK(
      input.dim() > 0,
      "glu: the input is 0-d, and glu halves a dim into values and gates; give it at least one dim of even size");
  const int64_t dim = native::wrap_dim(options.dim(), input.dim(), "glu");
  const int64_t size = input.size(dim);
  WICK_CHECK(size % 2 == 0,
             "glu: dim {} of the input {} has odd size {}; it is halved into values and gates, so it must be even",
             options.dim(), shape_str(input), size);
  return narrow(input, dim, 0, size / 2) * wick::sigmoid(narrow(input, dim, size / 2, size / 2));
}

Tensor logsigmoid(const Tensor& input) {
  check_activation_input("logsigmoid", input);
  // x < 0: x - log1p(exp(x)); x >= 0: -log1p(exp(-x)). Each side's exp sees only its own half-line.
  const Tensor neg = clamp(input, std::nullopt, Scalar(0.0));
  const Tensor pos = clamp(input, Scalar(0.0), std::nullopt);
  return where(input.lt(0), neg - log1p(exp(neg)), -log1p(exp(-pos)));
}

Tensor softmin(const Tensor& input, const SoftminFuncOptions& options) {
  check_activation_input("softmin", input);
  return wick::softmax(-input, options.dim());
}

Tensor prelu(const Tensor& input, const Tensor& weight) {
  check_activation_input("prelu", input);
  WICK_CHECK(weight.defined(), "prelu: weight is undefined; pass one slope or one per channel");
  WICK_CHECK_TYPE(weight.dtype() == input.dtype(), "prelu: weight is {} but the input is {}; convert one of them",
                  weight.dtype(), input.dtype());
  WICK_CHECK(weight.device() == input.device(), "prelu: weight is on {} but the input is on {}; move one of them",
             weight.device(), input.device());
  WICK_CHECK(weight.dim() <= 1, "prelu: weight must be 0-d or 1-d (one slope, or one per channel), got shape {}",
             shape_str(weight));
  const int64_t channels = input.dim() >= 2 ? input.size(1) : 1;
  WICK_CHECK(weight.numel() == 1 || weight.numel() == channels,
             "prelu: weight {} has {} slopes but the input {} has {} channel(s) (dim 1 of an input of 2 or more "
             "dims, else 1); give 1 slope or {} (PReLUOptions().num_parameters({}))",
             shape_str(weight), weight.numel(), shape_str(input), channels, channels, channels);
  Tensor w;
  if (weight.numel() == 1) {
    w = reshape(weight, {});
  } else {
    DimVector shape(static_cast<size_t>(input.dim() - 1), 1);
    shape[0] = channels;
    w = reshape(weight, shape);  // [C, 1, ..., 1] against [N, C, *]
  }
  const Tensor positive = input.gt(0);
  // The negative side multiplies a copy of x that is 0 where x > 0, so a large or infinite x
  // never reaches the weight's gradient (0 * inf).
  return where(positive, input, w * where(positive, Scalar(0.0), input));
}

}  // namespace wick::nn::functional
