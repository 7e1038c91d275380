#pragma once
// Hardshrink, Softshrink and RReLU of torch.nn.functional, with LibTorch's options structs
// (`F::softshrink(x, 0.3)`, `F::rrelu(x, F::RReLUFuncOptions().lower(0.1).training(true))`), which
// serve the layers too (wick/nn/modules/shrink.h). Composites of differentiable ops, as the other
// activations (Note [Activation composites], nn/src/functional_activation.cpp): differentiable
// twice, on every device; the input must be float32 or float64 (TypeError otherwise).
// nn/src/functional_shrink.cpp.
#include "wick/core/tensor.h"
#include "wick/nn/arg.h"

namespace wick::nn {

/// Hardshrink's options: `HardshrinkOptions(0.3)` or just `0.3`.
struct HardshrinkOptions {
  /* implicit */ HardshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  WICK_ARG(double, lambda);
};

/// Softshrink's options: `SoftshrinkOptions(0.3)` or just `0.3`; lambda must be >= 0.
struct SoftshrinkOptions {
  /* implicit */ SoftshrinkOptions(double lambda = 0.5) : lambda_(lambda) {}  // NOLINT
  WICK_ARG(double, lambda);
};

/// RReLU's options: the negative slope is drawn from U(lower, upper) in training; lower <= upper.
struct RReLUOptions {
  WICK_ARG(double, lower) = 1.0 / 8.0;
  WICK_ARG(double, upper) = 1.0 / 3.0;
  WICK_ARG(bool, inplace) = false;
};

namespace functional {

using HardshrinkFuncOptions = HardshrinkOptions;
using SoftshrinkFuncOptions = SoftshrinkOptions;

/// F::rrelu's options, as LibTorch's: RReLUOptions and training (false by default, as
/// torch.nn.functional.rrelu).
struct RReLUFuncOptions {
  WICK_ARG(double, lower) = 1.0 / 8.0;
  WICK_ARG(double, upper) = 1.0 / 3.0;
  WICK_ARG(bool, training) = false;
  WICK_ARG(bool, inplace) = false;
};

/// 0 where -lambda <= x <= lambda, x elsewhere (NaN stays NaN). The gradient is 1 outside the
/// closed interval and 0 on it and at NaN, as PyTorch 1.13. Any lambda (a negative one keeps
/// every x, as PyTorch).
Tensor hardshrink(const Tensor& input, const HardshrinkFuncOptions& options = {});
/// x - lambda for x > lambda, x + lambda for x < -lambda, 0 elsewhere; the gradient is 1 outside
/// the closed interval and 0 on it. NaN gives 0 with gradient 0, as PyTorch 1.13's CPU kernel.
/// lambda < 0 is a ValueError (PyTorch: "lambda must be greater or equal to 0").
Tensor softshrink(const Tensor& input, const SoftshrinkFuncOptions& options = {});
/// Randomized leaky ReLU: in training x for x > 0 and r * x for x <= 0, one slope r per element
/// drawn from U(lower, upper) by wick's generator (wick::manual_seed makes it reproducible, the
/// same on every device; not PyTorch's stream), the gradient r there (at x == 0 too, as
/// PyTorch); in eval leaky_relu with the fixed slope (lower + upper) / 2. lower > upper is a
/// ValueError (as PyTorch). inplace writes the result into the input and returns it (Note
/// [Activation composites]).
Tensor rrelu(const Tensor& input, const RReLUFuncOptions& options = {});

}  // namespace functional

}  // namespace wick::nn
