// F::alpha_dropout, F::feature_alpha_dropout and F::gumbel_softmax.
//
// Note [Alpha dropout]
// PyTorch 1.13's formula (at::native _dropout_impl, alpha_dropout = true): with a Bernoulli(1 - p)
// mask m (0 or 1; one draw per element, or per [N, C] channel for the feature variant, broadcast
// as channel dropout's, Note [Channel dropout]), alpha' = 1.7580993408473766 and
// a = 1 / sqrt((alpha'^2 * p + 1) * (1 - p)),
//   b   = (m - 1) * (alpha' * a) + alpha' * a * p      (a constant: no gradient)
//   out = input * (m * a) + b
// each step rounded in the input's dtype in PyTorch's order. Kept elements give a * x +
// alpha' * a * p, dropped ones alpha' * a * (p - 1); the gradient is m * a. p = 1 returns
// input * 0 (NaN and inf become NaN), not the affine map, exactly as PyTorch 1.13; eval mode,
// p = 0 and an empty input return the input itself with no draw. The mask comes from wick's
// generator, so it is never PyTorch's bit for bit.
#include "wick/nn/functional_random.h"

#include <cmath>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/native.h"

namespace wick::nn::functional {

namespace {
constexpr double kSeluAlpha = 1.7580993408473766;  // SELU's scale * alpha

void check_p(const char* op, double p) {
  WICK_CHECK(p >= 0.0 && p <= 1.0, "{}: probability p must be in [0, 1], got {}", op, p);
}

Tensor alpha_impl(const char* op, const Tensor& input, bool feature, const AlphaDropoutFuncOptions& o) {
  check_p(op, o.p());
  WICK_CHECK(input.defined(), "{}: input is undefined", op);
  if (feature)
    WICK_CHECK(input.dim() >= 2, "{}: expects an input of at least 2 dims [N, C, *], got shape {}", op,
               detail::shape_str(input));
  if (!o.training() || o.p() == 0.0 || input.numel() == 0) return input;
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  const double p = o.p();
  Tensor scale, shift;
  if (p == 1.0) {
    scale = native::zeros({}, input.dtype(), input.device());
  } else {
    DimVector noise_shape(input.sizes());
    if (feature)
      for (size_t d = 2; d < noise_shape.size(); ++d) noise_shape[d] = 1;
    const Tensor m = native::bernoulli(native::empty(noise_shape, input.dtype(), input.device()), 1.0 - p);
    const double a = 1.0 / std::sqrt((kSeluAlpha * kSeluAlpha * p + 1.0) * (1.0 - p));
    shift = ((m - 1.0) * (kSeluAlpha * a) + kSeluAlpha * a * p).detach();
    scale = (m * a).detach();
  }
  if (!o.inplace()) return shift.defined() ? mul(input, scale) + shift : mul(input, scale);
  Tensor out = input;  // the same tensor: the caller's input is written
  out.mul_(scale);
  if (shift.defined()) out.add_(shift);
  return out;
}
}  // namespace

Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options) {
  return alpha_impl("alpha_dropout", input, false, options);
}

Tensor alpha_dropout(const Tensor& input, double p, bool training, bool inplace) {
  return alpha_impl("alpha_dropout", input, false, AlphaDropoutFuncOptions().p(p).training(training).inplace(inplace));
}

Tensor feature_alpha_dropout(const Tensor& input, const FeatureAlphaDropoutFuncOptions& options) {
  return alpha_impl("feature_alpha_dropout", input, true, options);
}

Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options) {
  WICK_CHECK(logits.defined(), "gumbel_softmax: logits is undefined");
  WICK_CHECK_TYPE(logits.is_floating_point(), "gumbel_softmax: logits must be float32 or float64, got {}",
                  logits.dtype());
  WICK_CHECK(options.tau() > 0.0, "gumbel_softmax: the temperature tau must be > 0, got {}", options.tau());
  const int64_t n = logits.dim();
  WICK_CHECK(n > 0, "gumbel_softmax: logits must have at least 1 dim, got a 0-dim tensor");
  WICK_CHECK(options.dim() >= -n && options.dim() < n, "gumbel_softmax: dim {} is out of range for logits of shape {}",
             options.dim(), detail::shape_str(logits));
  const int64_t dim = options.dim() < 0 ? options.dim() + n : options.dim();
  // Gumbel(0, 1) noise: -log(-log(U)). U = 0 would give -inf: a draw of exactly 0 is moved to
  // the smallest positive normal number (U = 1 gives +inf, which the softmax turns into 1).
  Tensor u = native::rand(logits.sizes(), logits.dtype(), logits.device());
  const double tiny = logits.dtype() == kFloat32 ? 1.1754943508222875e-38 : 2.2250738585072014e-308;
  const Tensor g = clamp(u, Scalar(tiny), std::nullopt).log().neg().log().neg().detach();
  const Tensor y = softmax((logits + g) / options.tau(), dim);
  if (!options.hard()) return y;
  const Tensor index = y.detach().argmax(dim, /*keepdim=*/true);
  const Tensor hard = native::scatter_add(native::zeros(logits.sizes(), logits.dtype(), logits.device()), dim, index,
                                          native::ones(index.sizes(), logits.dtype(), logits.device()));
  return hard - y.detach() + y;
}

}  // namespace wick::nn::functional
