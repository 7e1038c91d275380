#pragma once
// F::channel_shuffle and F::one_hot (torch.nn.functional's): rearrangements of a tensor's entries
// with no arithmetic. nn/src/functional_shuffle.cpp.
#include <cstdint>

#include "wick/core/tensor.h"

namespace wick::nn::functional {

/// ShuffleNet's channel shuffle of input [N, C, *] (at least 3 dims, as PyTorch 1.13): the C
/// channels, read as a [groups, C / groups] grid, are transposed, so output channel
/// i * groups + g is input channel g * (C / groups) + i. A composite of reshape and transpose:
/// any dtype, differentiable, every device. ValueError for fewer than 3 dims, groups <= 0 or C
/// not divisible by groups.
Tensor channel_shuffle(const Tensor& input, int64_t groups);

/// wick::one_hot (LibTorch's F::one_hot): int64 class indices to an int64 tensor with a trailing
/// dim of num_classes (-1: max(input) + 1). The errors are wick::one_hot's.
Tensor one_hot(const Tensor& tensor, int64_t num_classes = -1);

}  // namespace wick::nn::functional
