#pragma once
// relu and silu with their options, and the activations beyond relu, gelu, tanh, sigmoid,
// softmax, log_softmax and silu, with torch.nn.functional's names and semantics and LibTorch's
// options structs:
// `F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2))`. The options structs serve
// the layers too (LeakyReLU(LeakyReLUOptions(0.2)), wick/nn/modules/activation.h); as in LibTorch
// F::XFuncOptions is XOptions.
//
// Each function is a composite of differentiable ops (where, clamp, expm1, log1p, ...), so it is
// differentiable twice and runs on every device (Note [Activation composites],
// nn/src/functional_activation.cpp). The input must be float32 or float64 (TypeError otherwise).
// Gradients at the kinks are PyTorch 1.13's: leaky_relu, elu, selu, celu and prelu take the
// negative side's slope at 0; hardtanh, relu6 and hardsigmoid give 0 at their bounds; threshold 0
// at x == threshold; hardswish -1/2 at -3 and 1 at 3.
//
// inplace (where PyTorch has it) writes the result into the input and returns the input, as
// PyTorch: recorded in the graph (the input's history is rebased, Note [In-place ops]) and
// refused with a StateError on a leaf that requires grad. The result is computed out of place
// first and then copied, so inplace saves no memory; in exchange it works with every option,
// where PyTorch's in-place leaky_relu_ and elu_ refuse backward for a negative slope or alpha.
#include <cstdint>

#include "wick/core/tensor.h"
#include "wick/nn/arg.h"

namespace wick::nn {

/// ReLU's options, as LibTorch: `ReLUOptions(true)` or `ReLUOptions().inplace(true)` is in place
/// (Tensor::relu_: any dtype, as PyTorch's relu_).
struct ReLUOptions {
  /* implicit */ ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  WICK_ARG(bool, inplace);
};

/// SiLU's options: PyTorch's `inplace` argument (LibTorch's SiLU and F::silu have none).
struct SiLUOptions {
  /* implicit */ SiLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  WICK_ARG(bool, inplace);
};

/// LeakyReLU's options: x for x > 0, negative_slope * x otherwise.
struct LeakyReLUOptions {
  WICK_ARG(double, negative_slope) = 1e-2;
  WICK_ARG(bool, inplace) = false;
};

/// ELU's options: x for x > 0, alpha * (exp(x) - 1) otherwise.
struct ELUOptions {
  WICK_ARG(double, alpha) = 1.0;
  WICK_ARG(bool, inplace) = false;
};

/// SELU's options: `SELUOptions(true)` is in place, as LibTorch.
struct SELUOptions {
  /* implicit */ SELUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  WICK_ARG(bool, inplace);
};

/// CELU's options: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); alpha must not be 0.
struct CELUOptions {
  WICK_ARG(double, alpha) = 1.0;
  WICK_ARG(bool, inplace) = false;
};

/// Softplus's options: log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold.
struct SoftplusOptions {
  WICK_ARG(double, beta) = 1.0;
  WICK_ARG(double, threshold) = 20.0;
};

/// Hardtanh's options: x clamped to [min_val, max_val].
struct HardtanhOptions {
  WICK_ARG(double, min_val) = -1.0;
  WICK_ARG(double, max_val) = 1.0;
  WICK_ARG(bool, inplace) = false;
};

/// ReLU6's options: `ReLU6Options(true)` is in place, as LibTorch.
struct ReLU6Options {
  /* implicit */ ReLU6Options(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  WICK_ARG(bool, inplace);
};

/// Hardsigmoid's, Hardswish's and Mish's options (PyTorch's `inplace` argument; LibTorch has no
/// such structs): `F::hardswish(x, true)` is in place.
struct HardsigmoidOptions {
  /* implicit */ HardsigmoidOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  WICK_ARG(bool, inplace);
};
struct HardswishOptions {
  /* implicit */ HardswishOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  WICK_ARG(bool, inplace);
};
struct MishOptions {
  /* implicit */ MishOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  WICK_ARG(bool, inplace);
};

/// Threshold's options: x where x > threshold, value otherwise.
struct ThresholdOptions {
  ThresholdOptions(double threshold, double value) : threshold_(threshold), value_(value) {}
  WICK_ARG(double, threshold);
  WICK_ARG(double, value);
  WICK_ARG(bool, inplace) = false;
};

/// GLU's options: the dim halved (`GLUOptions(0)` or just `0`).
struct GLUOptions {
  /* implicit */ GLUOptions(int64_t dim = -1) : dim_(dim) {}  // NOLINT
  WICK_ARG(int64_t, dim);
};

/// Softmin's and LogSoftmax's options: the dim (`SoftminOptions(1)` or just `1`).
struct SoftminOptions {
  /* implicit */ SoftminOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  WICK_ARG(int64_t, dim);
};
struct LogSoftmaxOptions {
  /* implicit */ LogSoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT
  WICK_ARG(int64_t, dim);
};

/// PReLU's options: the number of learned slopes (1, or the input's channel count) and their
/// initial value.
struct PReLUOptions {
  WICK_ARG(int64_t, num_parameters) = 1;
  WICK_ARG(double, init) = 0.25;
};

namespace functional {

using ReLUFuncOptions = ReLUOptions;
using SiLUFuncOptions = SiLUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using CELUFuncOptions = CELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using HardtanhFuncOptions = HardtanhOptions;
using ReLU6FuncOptions = ReLU6Options;
using HardsigmoidFuncOptions = HardsigmoidOptions;
using HardswishFuncOptions = HardswishOptions;
using MishFuncOptions = MishOptions;
using ThresholdFuncOptions = ThresholdOptions;
using GLUFuncOptions = GLUOptions;
using SoftminFuncOptions = SoftminOptions;

/// max(x, 0), as wick::relu (NaN kept); inplace writes it into the input with Tensor::relu_ and
/// returns the input (any dtype, as PyTorch's relu_).
Tensor relu(const Tensor& input, const ReLUFuncOptions& options = {});
/// x * sigmoid(x) (torch.nn.functional.silu); inplace as the others (float32 or float64 only).
Tensor silu(const Tensor& input, const SiLUFuncOptions& options = {});
/// x > 0 ? x : negative_slope * x; the gradient at 0 is negative_slope.
Tensor leaky_relu(const Tensor& input, const LeakyReLUFuncOptions& options = {});
/// x > 0 ? x : alpha * expm1(x) (PyTorch 1.13 computes exp(x) - 1, less accurate near 0); the
/// gradient at 0 is alpha.
Tensor elu(const Tensor& input, const ELUFuncOptions& options = {});
/// scale * elu(x, alpha) with PyTorch's alpha = 1.6732632423543772 and scale = 1.0507009873554805.
Tensor selu(const Tensor& input, const SELUFuncOptions& options = {});
/// x > 0 ? x : alpha * expm1(x / alpha); the gradient at 0 is 1. alpha == 0 is a ValueError (as
/// PyTorch's "alpha cannot be 0 for CELU").
Tensor celu(const Tensor& input, const CELUFuncOptions& options = {});
/// beta * x > threshold ? x : log1p(exp(beta * x)) / beta, PyTorch's rule (no overflow for large
/// x; at beta * x == threshold the log1p side). beta must not be 0 (ValueError).
Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {});
/// x clamped to [min_val, max_val], with gradient 1 strictly inside and 0 at and beyond the
/// bounds (PyTorch's, unlike clamp's 1 at the bounds). min_val > max_val is a ValueError (PyTorch
/// 1.13's function returns max_val everywhere then).
Tensor hardtanh(const Tensor& input, const HardtanhFuncOptions& options = {});
/// hardtanh(x, 0, 6).
Tensor relu6(const Tensor& input, const ReLU6FuncOptions& options = {});
/// clamp(x + 3, 0, 6) / 6, gradient 1/6 strictly inside (-3, 3) and 0 elsewhere. (PyTorch 1.13's
/// CPU kernel returns float32's 1/6, 0.1666666716, as the float64 gradient; wick 1/6.)
Tensor hardsigmoid(const Tensor& input, const HardsigmoidFuncOptions& options = {});
/// x * clamp(x + 3, 0, 6) / 6; gradient 0 below -3, x / 3 + 1/2 on [-3, 3), 1 from 3 on (at 3
/// PyTorch 1.13 gives 1 in its vectorized loop and 1.5 in its scalar tail, i.e. for the last
/// elements of a tensor).
Tensor hardswish(const Tensor& input, const HardswishFuncOptions& options = {});
/// x * tanh(softplus(x)) (softplus with its default threshold, so no overflow).
Tensor mish(const Tensor& input, const MishFuncOptions& options = {});
/// x / (1 + |x|).
Tensor softsign(const Tensor& input);
/// x - tanh(x).
Tensor tanhshrink(const Tensor& input);
/// x > threshold ? x : value; gradient 0 at and below the threshold.
Tensor threshold(const Tensor& input, const ThresholdFuncOptions& options);
/// a * sigmoid(b) where a and b are the halves of input along dim. The size of dim must be even
/// and the input not 0-d (ValueError); a bad dim is an IndexError.
Tensor glu(const Tensor& input, const GLUFuncOptions& options = {});
/// log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|)), written so that neither side overflows and
/// both derivatives are smooth at 0.
Tensor logsigmoid(const Tensor& input);
/// softmax(-x, dim). As F::softmax, the dim is required (PyTorch's implicit dim is deprecated).
Tensor softmin(const Tensor& input, const SoftminFuncOptions& options);
/// x > 0 ? x : weight * x, with weight 0-d or 1-d of 1 element (shared) or of C elements, one per
/// channel (dim 1 of an input of 2 or more dims; an input of 0 or 1 dims has one channel), as
/// PyTorch 1.13. weight has the input's dtype (TypeError) and device (ValueError). The gradients
/// at x == 0 are those of the negative side (weight for x, x for weight).
Tensor prelu(const Tensor& input, const Tensor& weight);

}  // namespace functional

}  // namespace wick::nn
