#pragma once
// F::normalize (torch.nn.functional.normalize) with LibTorch's NormalizeFuncOptions. Included by
// wick/nn/functional.h. Composed of differentiable ops (nn/src/functional_normalize.cpp).
#include <cstdint>

#include "wick/core/tensor.h"
#include "wick/nn/arg.h"

namespace wick::nn::functional {

/// normalize's arguments, as LibTorch's NormalizeFuncOptions less `out` (wick has no out=
/// arguments: assign the result instead).
struct NormalizeFuncOptions {
  WICK_ARG(double, p) = 2.0;
  WICK_ARG(int64_t, dim) = 1;
  WICK_ARG(double, eps) = 1e-12;
};

/// input / max(norm(input, p, dim, keepdim), eps), as PyTorch 1.13 computes it (norm, then
/// clamp_min, then a broadcast divide), so its gradient is that composition's: below eps the
/// denominator is the constant eps. Every p norm takes (2, 1, inf, -inf, 0, fractional and
/// negative orders). A 0-d input takes dim 0 or -1. IndexError for a dim out of range; TypeError
/// for a non-floating input (as PyTorch's norm); ValueError for a NaN p (PyTorch returns NaN) and
/// for an eps that does not fit the dtype (Note [Scalar fits dtype]: float32 refuses 1e300).
Tensor normalize(const Tensor& input, const NormalizeFuncOptions& options = {});

}  // namespace wick::nn::functional
