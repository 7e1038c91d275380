// F::dropout and the channel dropouts F::dropout1d, F::dropout2d, F::dropout3d: the input times
// a seeded mask of 0 and 1 / (1 - p).
//
// Note [Channel dropout]
// dropoutNd zeroes whole channels (PyTorch's feature dropout). The mask has the input's sizes up
// to its channel dim and 1 after it ([N, C, 1, 1] for [N, C, H, W]; [C, 1] for an unbatched
// [C, L]), and mul broadcasts it: one Bernoulli(1 - p) draw decides a whole channel, and mul's
// gradient is the same mask, so the gradient of a kept channel is 1 / (1 - p) and of a dropped
// one 0. Each mask entry is 1 / (1 - p) rounded once to the input's dtype, so a kept element is
// x * (1 / (1 - p)), exactly what F::dropout gives. p = 1 multiplies by 0 (NaN and inf become
// NaN, as PyTorch's input * 0); eval mode, p = 0 and an empty input return the input itself,
// with no draw. The draws come from wick's counter-based generator (wick/core/generator.h): after
// manual_seed(s) the mask depends only on s and the mask's shape, the same on every device and in
// float32 and float64 (not PyTorch's stream: a mask is never PyTorch's bit for bit).
//
// Ranks, PyTorch 1.13's where it is unambiguous:
//   dropout1d  [N, C, L] or unbatched [C, L]; another rank is a ValueError (PyTorch 1.13 raises).
//   dropout2d  [N, C, H, W] only. PyTorch 1.13 reads a 3-d input as [N, C, L] (warning that a
//              later release will read it as an unbatched [C, H, W]), LibTorch's dropout2d
//              already reads it as [C, H, W]: wick refuses it, naming both remedies. Other ranks
//              PyTorch 1.13 takes with a deprecation warning ("will result in an error in a
//              future release"); wick refuses them now.
//   dropout3d  [N, C, D, H, W] or unbatched [C, D, H, W]; another rank is a ValueError (PyTorch
//              1.13 warns and reads it as unbatched).
// A bad p is a ValueError before anything else, as PyTorch checks it first; a non-float input
// is a TypeError when dropout applies (as F::dropout: eval mode returns any input).
//
// inplace multiplies the input itself (Tensor::mul_), which the graph records as PyTorch's
// feature_dropout_ (a leaf that requires grad is refused with a StateError, as PyTorch).
#include <fmt/format.h>

#include <string>

#include "shape_text.h"
#include "wick/autograd/functions.h"
#include "wick/core/error.h"
#include "wick/core/native.h"
#include "wick/nn/functional.h"

namespace wick::nn::functional {

namespace {
using detail::shape_str;

void check_p(const char* op, double p) {
  WICK_CHECK(p >= 0.0 && p <= 1.0, "{}: probability p must be in [0, 1], got {}", op, p);
}

// input * mask where mask (of `noise_shape`, broadcast to the input's) is 0 with probability p
// and 1 / (1 - p) otherwise; the caller has checked p and returned early where nothing drops.
Tensor apply_mask(const char* op, const Tensor& input, IntArrayRef noise_shape, double p, bool inplace) {
  WICK_CHECK_TYPE(input.is_floating_point(), "{}: input must be float32 or float64, got {}", op, input.dtype());
  Tensor mask;
  if (p == 1.0) {
    mask = native::zeros({}, input.dtype(), input.device());  // input * 0: NaN and inf give NaN
  } else {
    const bool whole = noise_shape == input.sizes();
    mask = native::bernoulli(whole ? input : native::empty(noise_shape, input.dtype(), input.device()), 1.0 - p);
    native::binary_(BinaryOp::Mul, mask, native::scalar_tensor(1.0 / (1.0 - p), mask.dtype(), mask.device()));
  }
  if (!inplace) return mul(input, mask);
  Tensor out = input;  // the same tensor: mul_ writes into the caller's input
  out.mul_(mask);
  return out;
}

// Channel dropout with the channel dim at `channel_dim`: the mask keeps the sizes up to it.
Tensor channel_dropout(const char* op, const Tensor& input, int64_t channel_dim, const DropoutFuncOptions& o) {
  if (!o.training() || o.p() == 0.0 || input.numel() == 0) return input;
  DimVector noise(input.sizes());
  for (size_t d = static_cast<size_t>(channel_dim) + 1; d < noise.size(); ++d) noise[d] = 1;
  return apply_mask(op, input, noise, o.p(), o.inplace());
}

void check_defined(const char* op, const Tensor& input) { WICK_CHECK(input.defined(), "{}: input is undefined", op); }
}  // namespace

Tensor dropout(const Tensor& input, double p, bool training) {
  return dropout(input, DropoutFuncOptions().p(p).training(training));
}

Tensor dropout(const Tensor& input, const DropoutFuncOptions& options) {
  check_p("dropout", options.p());
  check_defined("dropout", input);
  if (!options.training() || options.p() == 0.0) return input;
  return apply_mask("dropout", input, input.sizes(), options.p(), options.inplace());
}

Tensor dropout1d(const Tensor& input, const Dropout1dFuncOptions& options) {
  check_p("dropout1d", options.p());
  check_defined("dropout1d", input);
  const int64_t d = input.dim();
  WICK_CHECK(d == 2 || d == 3,
             "dropout1d: expected a 2-d [C, L] (unbatched) or 3-d [N, C, L] input, got shape {}; dropout1d drops "
             "whole channels of inputs with one spatial dim{}",
             shape_str(input), d == 4 ? " (dropout2d takes [N, C, H, W])" : "; dropout drops single elements");
  return channel_dropout("dropout1d", input, d == 3 ? 1 : 0, options);
}

Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options) {
  check_p("dropout2d", options.p());
  check_defined("dropout2d", input);
  const int64_t d = input.dim();
  WICK_CHECK(d != 3,
             "dropout2d: a 3-d input {} is ambiguous: PyTorch 1.13 reads it as [N, C, L] and LibTorch as an unbatched "
             "[C, H, W], so wick refuses it. For channels of [N, C, L] call dropout1d; for one [C, H, W] image "
             "call dropout2d(input.unsqueeze(0)) and squeeze(0) the result",
             shape_str(input));
  WICK_CHECK(d == 4,
             "dropout2d: expected a 4-d [N, C, H, W] input, got shape {}; dropout1d takes [N, C, L], dropout3d "
             "[N, C, D, H, W], and dropout drops single elements",
             shape_str(input));
  return channel_dropout("dropout2d", input, 1, options);
}

Tensor dropout3d(const Tensor& input, const Dropout3dFuncOptions& options) {
  check_p("dropout3d", options.p());
  check_defined("dropout3d", input);
  const int64_t d = input.dim();
  WICK_CHECK(d == 4 || d == 5,
             "dropout3d: expected a 4-d [C, D, H, W] (unbatched) or 5-d [N, C, D, H, W] input, got shape {}; "
             "dropout1d takes [N, C, L], dropout2d [N, C, H, W], and dropout drops single elements",
             shape_str(input));
  return channel_dropout("dropout3d", input, d == 5 ? 1 : 0, options);
}

}  // namespace wick::nn::functional
