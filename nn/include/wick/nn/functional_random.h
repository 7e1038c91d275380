#pragma once
// F::alpha_dropout, F::feature_alpha_dropout and F::gumbel_softmax (torch.nn.functional's): the
// random functions that draw from wick's generator (wick::manual_seed makes them reproducible,
// the same on every device; never PyTorch's stream). nn/src/functional_random.cpp.
#include <cstdint>

#include "wick/core/tensor.h"
#include "wick/nn/arg.h"

namespace wick::nn::functional {

/// The options of F::alpha_dropout and F::feature_alpha_dropout, as LibTorch's
/// AlphaDropoutFuncOptions: `F::AlphaDropoutFuncOptions().p(0.2).training(true)`.
struct AlphaDropoutFuncOptions {
  /// The probability of dropping an element (alpha_dropout) or a channel, in [0, 1].
  WICK_ARG(double, p) = 0.5;
  /// false (the default, as LibTorch's) returns the input itself.
  WICK_ARG(bool, training) = false;
  /// Write the result into the input (mul_ then add_) and return it.
  WICK_ARG(bool, inplace) = false;
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;

/// Alpha dropout (Note [Alpha dropout], nn/src/functional_random.cpp), for SELU networks: in
/// training each element is kept with probability 1 - p and becomes a * x + a * alpha' * p, or
/// dropped and becomes a * alpha' * (p - 1), with alpha' = 1.7580993408473766 (SELU's
/// scale * alpha) and a = ((1 - p) * (1 + p * alpha'^2))^-1/2, so a zero-mean unit-variance input
/// keeps its mean and variance. The gradient is a on kept elements and 0 on dropped ones. Not
/// training, p = 0 or an empty input: the input itself; p = 1: input * 0 (as PyTorch 1.13).
/// ValueError for p outside [0, 1]; TypeError for a non-float input when it applies.
Tensor alpha_dropout(const Tensor& input, const AlphaDropoutFuncOptions& options = {});
/// alpha_dropout(input, p, training) with the other options at their defaults.
Tensor alpha_dropout(const Tensor& input, double p, bool training, bool inplace = false);
/// alpha_dropout with one draw per channel of input [N, C, *] (the mask is [N, C, 1, ...]): at
/// least 2 dims (ValueError otherwise), dim 0 is always the batch, as PyTorch 1.13.
Tensor feature_alpha_dropout(const Tensor& input, const FeatureAlphaDropoutFuncOptions& options = {});

/// F::gumbel_softmax's options, as LibTorch's GumbelSoftmaxFuncOptions.
struct GumbelSoftmaxFuncOptions {
  /// The temperature, > 0.
  WICK_ARG(double, tau) = 1.0;
  /// Return the straight-through one-hot of the soft sample's argmax.
  WICK_ARG(bool, hard) = false;
  WICK_ARG(int64_t, dim) = -1;
};

/// softmax((logits + g) / tau, dim) with g = -log(-log(U)), U uniform in (0, 1) from wick's
/// generator, one draw per element (the soft sample y). hard: one_hot(argmax(y, dim)) - y.detach()
/// + y, whose values are the one-hot and whose gradient is the soft sample's (PyTorch's
/// straight-through estimator; ties in y go to the first index). Float input only (TypeError);
/// ValueError for tau <= 0 or a 0-dim / out-of-range dim.
Tensor gumbel_softmax(const Tensor& logits, const GumbelSoftmaxFuncOptions& options = {});

}  // namespace wick::nn::functional
