#pragma once
// The 1-d convolution and pooling functions of wick::nn::functional (alias F): conv1d,
// max_pool1d, max_pool1d_with_indices, avg_pool1d, adaptive_avg_pool1d, adaptive_max_pool1d,
// adaptive_max_pool1d_with_indices, with torch.nn.functional's names, argument order and
// PyTorch 1.13's semantics. Included by
// wick/nn/functional.h; the modules are in wick/nn/modules/conv1d.h and pooling1d.h.
//
// Each runs its 2-d counterpart on a unit height: input [N, C, L] (or an unbatched [C, L]) is
// viewed as [N, C, 1, L], a conv1d weight [O, C / groups, K] as [O, C / groups, 1, K], and the
// result viewed back, so values, gradients (twice differentiable) and devices are the 2-d
// functions' (nn/src/functional_1d.cpp). The arguments are checked first, so that a bad one is
// reported in 1-d terms by the 1-d op; whatever the 2-d function still refuses (a size past
// int64, memory) is rethrown in its own class with the 1-d op's name in front.
//
// LibTorch declares these beside the 2-d ones (torch/nn/functional/conv.h, pooling.h); wick keeps
// one concept per file, and the 1-d family is one.
#include <cstdint>
#include <optional>
#include <tuple>

#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"  // PaddingMode; it includes this file at its end (both #pragma once)

namespace wick::nn::functional {

/// 1-d cross-correlation: input [N, C, L] (or [C, L]), weight [O, C / groups, K], bias [O] or
/// undefined -> [N, O, (L + 2 padding - dilation (K - 1) - 1) / stride + 1], as torch::conv1d.
/// Groups as conv2d's. A float input of the weight's dtype and device; ValueError for another
/// rank (a 4-d input is conv2d's), a weight that is not 3-d, a kernel of length 0, stride or
/// dilation below 1, negative padding, groups that do not divide the channels, or a padded
/// input shorter than the dilated kernel; TypeError for another dtype.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1,
              int64_t padding = 0, int64_t dilation = 1, int64_t groups = 1);
/// conv1d with a named padding, as torch::conv1d(..., "same"): kSame pads dilation (K - 1) in
/// all, half on each side and the odd one on the right, so the output keeps L (stride 1 only:
/// NotImplementedError otherwise, as conv2d); kValid is no padding.
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t stride, PaddingMode padding,
              int64_t dilation = 1, int64_t groups = 1);

/// Max over each window of input [N, C, L] (or [C, L]); padding is implicit -inf and at most
/// half the kernel. stride 0 (the default) means stride = kernel_size, as max_pool2d's (PyTorch's
/// stride=None; PyTorch refuses an explicit 0). An output of length 0 is a ValueError (as
/// PyTorch 1.13 when the input requires grad; without grad it returns an empty tensor).
Tensor max_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride = 0, int64_t padding = 0,
                  int64_t dilation = 1, bool ceil_mode = false);
/// max_pool1d and, for each output, the position l in [0, L) of its maximum (int64, the output's
/// shape), as torch::max_pool1d_with_indices. Ties keep the first position; NaN propagates; not
/// differentiable in the indices. A window that holds no input position (dilation past the
/// input) is a ValueError, as max_pool2d_with_indices.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, int64_t kernel_size, int64_t stride = 0,
                                                   int64_t padding = 0, int64_t dilation = 1, bool ceil_mode = false);
/// Mean over each window of input [N, C, L] (or [C, L]); padding is zeros, counted in the divisor
/// when count_include_pad; with ceil_mode the last window is clipped at L + padding, as PyTorch.
/// stride 0 (the default) means stride = kernel_size. divisor_override, when given, is every
/// window's divisor, as avg_pool2d's (0 is a ValueError). PyTorch 1.13's F.avg_pool1d has no
/// divisor_override; wick's is avg_pool2d's on the unit height, as LibTorch's AvgPool1dOptions
/// carries one.
Tensor avg_pool1d(const Tensor& input, int64_t kernel_size, int64_t stride = 0, int64_t padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
/// Mean over PyTorch's adaptive windows [floor(i L / out), ceil((i + 1) L / out)) of input
/// [N, C, L] (or [C, L]) -> [N, C, output_size]; output_size may exceed L (windows overlap).
/// output_size 0 is a ValueError (PyTorch returns an empty tensor), as adaptive_avg_pool2d's.
Tensor adaptive_avg_pool1d(const Tensor& input, int64_t output_size);
/// Max over PyTorch's adaptive windows [floor(i L / out), ceil((i + 1) L / out)) of input
/// [N, C, L] (or [C, L]) -> [N, C, output_size]; output_size may exceed L. Ties keep the first
/// maximum, a NaN wins its window (the last NaN), the gradient goes to each window's maximum, as
/// adaptive_max_pool2d on a unit height. output_size 0 is a ValueError (PyTorch returns an empty
/// tensor), as are a length of 0 and another rank; TypeError for a non-float input.
Tensor adaptive_max_pool1d(const Tensor& input, int64_t output_size);
/// adaptive_max_pool1d and, for each output, the position l in [0, L) of its maximum (int64, the
/// output's shape), as torch::adaptive_max_pool1d. Not differentiable in the indices.
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input, int64_t output_size);

}  // namespace wick::nn::functional
