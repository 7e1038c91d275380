#pragma once
// The 3-d convolution and pooling functions of wick::nn::functional (alias F): conv3d,
// max_pool3d, max_pool3d_with_indices, avg_pool3d, adaptive_avg_pool3d, adaptive_max_pool3d,
// adaptive_max_pool3d_with_indices, with torch.nn.functional's names, argument order and PyTorch
// 1.13's semantics. Included by wick/nn/functional.h; the modules are in
// wick/nn/modules/conv3d.h and pooling3d.h (conv_transpose3d is in functional_conv_transpose.h).
//
// Each is composed of its 2-d counterpart and views (nn/src/functional_3d.cpp): conv3d folds the
// output depth into the batch and the kernel depth into the channels and runs one conv2d; the
// pooling functions pool each depth slice with the 2-d function and then pool the depth with the
// same 2-d function on a [D, Ho * Wo] plane with a kernel of width 1. So values, gradients (twice
// differentiable) and devices are the 2-d functions'. The arguments are checked first, in 3-d
// terms; whatever the 2-d function still refuses (a size past int64, memory) is rethrown in its
// own class with the 3-d op's name in front.
#include <cstdint>
#include <optional>
#include <tuple>

#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"  // Int2, PaddingMode; it includes this file at its end (both #pragma once)
#include "wick/nn/int3.h"

namespace wick::nn {

namespace functional {

/// 3-d cross-correlation: input [N, C, D, H, W] (or [C, D, H, W]), weight
/// [O, C / groups, kD, kH, kW], bias [O] or undefined -> [N, O, Do, Ho, Wo] with
/// Do = (D + 2 padding.d - dilation.d (kD - 1) - 1) / stride.d + 1 (and likewise Ho, Wo), as
/// torch::conv3d. A float input of the weight's dtype and device; ValueError for another rank, a
/// weight that is not 5-d or has a zero kernel size, a stride or dilation below 1, a negative
/// padding, groups that do not divide the channels, or a padded input smaller than the dilated
/// kernel; TypeError for another dtype.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Int3 stride = 1, Int3 padding = 0,
              Int3 dilation = 1, int64_t groups = 1);
/// conv3d with a named padding, as torch::conv3d(..., "same"): kSame pads dilation (k - 1) along
/// each dim, half before and the odd one after, so the output keeps D, H, W (stride 1 only:
/// NotImplementedError otherwise, as conv2d); kValid is no padding.
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, Int3 stride, PaddingMode padding,
              Int3 dilation = 1, int64_t groups = 1);

/// Max over each window of input [N, C, D, H, W] (or [C, D, H, W]); padding is implicit -inf and
/// at most half the kernel along each dim. stride 0 (the default) means stride = kernel_size, as
/// max_pool2d's (PyTorch's stride=None). An output size of 0 is a ValueError.
Tensor max_pool3d(const Tensor& input, Int3 kernel_size, Int3 stride = 0, Int3 padding = 0, Int3 dilation = 1,
                  bool ceil_mode = false);
/// max_pool3d and, for each output, the flat position d * H * W + h * W + w of its maximum in the
/// input volume (int64, the output's shape), as torch::max_pool3d_with_indices. Ties keep the
/// first position in (d, h, w) order. Not differentiable in the indices.
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, Int3 kernel_size, Int3 stride = 0,
                                                   Int3 padding = 0, Int3 dilation = 1, bool ceil_mode = false);
/// Mean over each window of input [N, C, D, H, W] (or [C, D, H, W]); padding is zeros, counted in
/// the divisor when count_include_pad; with ceil_mode a last window is clipped at the size plus
/// padding, as PyTorch. stride 0 (the default) means stride = kernel_size. divisor_override, when
/// given, is every window's divisor (0 is a ValueError), as avg_pool2d's.
Tensor avg_pool3d(const Tensor& input, Int3 kernel_size, Int3 stride = 0, Int3 padding = 0, bool ceil_mode = false,
                  bool count_include_pad = true, std::optional<int64_t> divisor_override = std::nullopt);
/// Mean over PyTorch's adaptive windows [floor(i D / oD), ceil((i + 1) D / oD)) along each dim of
/// input [N, C, D, H, W] (or [C, D, H, W]) -> [N, C, oD, oH, oW]; a size may exceed the input's.
/// An output size below 1 or an empty spatial dim is a ValueError. LibTorch's output size may
/// leave entries out (None); wick's takes three numbers.
Tensor adaptive_avg_pool3d(const Tensor& input, Int3 output_size);
/// Max over the same adaptive windows as adaptive_avg_pool3d: input [N, C, D, H, W] (or
/// [C, D, H, W]) -> [N, C, oD, oH, oW]; a NaN in a window is its maximum (the last NaN in (d, h, w)
/// order takes the gradient), as PyTorch. An output size below 1 (PyTorch returns an empty tensor
/// for 0) or an empty spatial dim is a ValueError; wick's output size takes three numbers
/// (LibTorch's may leave entries out).
Tensor adaptive_max_pool3d(const Tensor& input, Int3 output_size);
/// adaptive_max_pool3d and, for each output, the flat position d H W + h W + w of its maximum in
/// the input volume (int64, the output's shape), as torch::adaptive_max_pool3d_with_indices. Ties
/// keep the first position in (d, h, w) order. Not differentiable in the indices.
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input, Int3 output_size);

}  // namespace functional
}  // namespace wick::nn
