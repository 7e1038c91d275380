#pragma once
// F::unfold (im2col) and F::fold (col2im) of wick::nn::functional (alias F), with
// torch.nn.functional's names, argument order and PyTorch 1.13's semantics. Included by
// wick/nn/functional.h; the modules are in wick/nn/modules/fold.h.
//
// Note [fold and unfold as index ops]
// Both are written once, on differentiable ops (nn/src/functional_fold.cpp): with the input
// zero-padded to [N, C, Hp, Wp] and flattened to [N, C, Hp * Wp], block position k = ki * kW + kj
// of block l = oi * oW + oj reads flat position (oi * sH + ki * dH) * Wp + oj * sW + kj * dW. One
// int64 index of those positions, in (k, l) order, makes unfold an index_select of the padded
// plane and fold an index_add of the blocks into a zero plane, cropped back to the padding. So
// each is the other's adjoint exactly (index_select's backward is index_add and the reverse),
// gradients and their own gradients come from those two ops, and every device that runs them
// runs fold and unfold, with no kernel of their own.
#include <cstdint>

#include "wick/autograd/functions.h"
#include "wick/nn/functional.h"  // Int2; it includes this file at its end (both #pragma once)

namespace wick::nn::functional {

/// The sliding blocks of input [N, C, H, W] (or an unbatched [C, H, W]) as columns:
/// [N, C * kH * kW, L] (or [C * kH * kW, L]), L = oH * oW blocks with
/// oH = (H + 2 padding.h - dilation.h (kH - 1) - 1) / stride.h + 1 (and oW likewise); row
/// c * kH * kW + ki * kW + kj of column oi * oW + oj holds input[c, oi * sH + ki * dH - pH,
/// oj * sW + kj * dW - pW] (0 in the padding), as torch::nn::functional::unfold. The batch may be
/// empty; ValueError for another rank, an empty channel or spatial dim, a kernel_size, dilation or
/// stride below 1, a negative padding, or a padded input smaller than the dilated kernel;
/// TypeError for a non-float input. Twice differentiable, on every device (Note [fold and unfold
/// as index ops]).
Tensor unfold(const Tensor& input, Int2 kernel_size, Int2 dilation = 1, Int2 padding = 0, Int2 stride = 1);
/// The adjoint of unfold: sums the columns of input [N, C * kH * kW, L] (or [C * kH * kW, L])
/// into [N, C, output_size.h, output_size.w] (or [C, oh, ow]), each block value added at the
/// position unfold reads it from (blocks that overlap add up; what falls in the padding is
/// dropped), as torch::nn::functional::fold. L must equal the number of blocks unfold takes from
/// an output_size plane with the same kernel_size, dilation, padding and stride, and dim -2 must
/// be a positive multiple of kH * kW (ValueError naming the sizes otherwise; so also for an
/// output_size below 1 and the geometry errors of unfold). The batch may be empty. TypeError for
/// a non-float input. Twice differentiable, on every device.
Tensor fold(const Tensor& input, Int2 output_size, Int2 kernel_size, Int2 dilation = 1, Int2 padding = 0,
            Int2 stride = 1);

}  // namespace wick::nn::functional
