#pragma once
// The transposed convolutions of wick::nn::functional (alias F): conv_transpose2d,
// conv_transpose1d and conv_transpose3d, with torch.nn.functional's names, argument order (groups before dilation, as
// PyTorch's) and PyTorch 1.13's semantics. Included by wick/nn/functional.h; the layers are in
// wick/nn/modules/conv_transpose.h.
//
// A transposed convolution is the gradient of a convolution with respect to its input: each
// input position scatters weight * value over a window of the output. conv_transpose2d is that
// gradient function of conv2d, so its backward is conv2d itself (and conv2d's weight gradient),
// it is differentiable twice, and it runs on every device conv2d runs on (Note [Transposed
// convolution] in nn/src/functional_conv_transpose.cpp). conv_transpose1d runs it on a unit
// height, as conv1d runs conv2d; conv_transpose3d is two conv_transpose2d passes (Note [3-d
// transposed convolution]).
//
// These take torch.nn.functional's positional arguments; the overloads taking LibTorch's
// ConvTranspose1d/2d/3dFuncOptions are in wick/nn/functional_options_conv_norm.h.
#include <cstdint>

#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"  // Int2; it includes this file at its end (both #pragma once)
#include "wick/nn/int3.h"

namespace wick::nn::functional {

/// 2-d transposed convolution: input [N, C_in, H, W] (or unbatched [C_in, H, W]), weight
/// [C_in, C_out / groups, kh, kw] (PyTorch's layout: input channels first), bias [C_out] or
/// undefined -> [N, C_out, H_out, W_out] with
///   H_out = (H - 1) stride - 2 padding + dilation (kh - 1) + output_padding + 1
/// (and W_out likewise). Input channel block j (C_in / groups channels) feeds only output block j.
/// `padding` removes that many rows and columns from each side of the full output;
/// `output_padding` adds rows and columns at the bottom and right (to pick one of the output
/// sizes that a strided conv2d maps onto one input size), and must be below the stride or below
/// the dilation on each axis, as PyTorch requires. A float input of the weight's dtype and device.
/// ValueError for a wrong rank, a weight that is not 4-d or has no elements, a channel mismatch,
/// groups below 1 or not dividing C_in, stride or dilation below 1, negative padding or
/// output_padding, an empty height or width (an empty batch is fine), or an output size below 1;
/// TypeError for another dtype.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Int2 stride = 1,
                        Int2 padding = 0, Int2 output_padding = 0, int64_t groups = 1, Int2 dilation = 1);

/// 1-d transposed convolution: input [N, C_in, L] (or [C_in, L]), weight [C_in, C_out / groups, K],
/// bias [C_out] or undefined -> [N, C_out, (L - 1) stride - 2 padding + dilation (K - 1) +
/// output_padding + 1], as torch::conv_transpose1d; the rules are conv_transpose2d's along one
/// axis, checked and reported in 1-d terms.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, int64_t stride = 1,
                        int64_t padding = 0, int64_t output_padding = 0, int64_t groups = 1, int64_t dilation = 1);

/// 3-d transposed convolution: input [N, C_in, D, H, W] (or [C_in, D, H, W]), weight
/// [C_in, C_out / groups, kd, kh, kw], bias [C_out] or undefined -> [N, C_out, D_out, H_out, W_out]
/// with D_out = (D - 1) stride.d - 2 padding.d + dilation.d (kd - 1) + output_padding.d + 1 (H_out
/// and W_out likewise), as torch::conv_transpose3d; the rules and errors are conv_transpose2d's
/// along three axes, checked and reported in 3-d terms. Composed of two conv_transpose2d passes,
/// so differentiable to any order on every device (nn/src/functional_conv_transpose.cpp).
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, Int3 stride = 1,
                        Int3 padding = 0, Int3 output_padding = 0, int64_t groups = 1, Int3 dilation = 1);

}  // namespace wick::nn::functional
