#pragma once
// The default initialization of Linear, Conv1d, Conv2d, ConvTranspose1d and ConvTranspose2d
// (PyTorch's reset_parameters; a transposed convolution reads fan_in from its weight [in, out /
// groups, k...] as any other, weight.size(1) * k..., as PyTorch does).
#include "wick/core/tensor.h"

namespace wick::nn::detail {

/// weight ~ kaiming_uniform(a = sqrt(5)), i.e. U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and, when
/// defined, the bias from the same bound (0 when fan_in is 0). Defined in modules_linear.cpp.
void kaiming_default_init(const Tensor& weight, const Tensor& bias);

}  // namespace wick::nn::detail
