#pragma once
// Conv3d (torch.nn.Conv3d), with padding_mode zeros, reflect, replicate or circular, as Conv2d.
//
// LibTorch declares Conv3d beside Conv2d in torch/nn/modules/conv.h; wick keeps one concept per
// file, as for Conv1d. wick/nn/nn.h includes it.
#include "wick/nn/modules/conv_nd.h"  // ConvNdImpl<D, Derived>, ConvOptions<D> and their aliases

namespace wick::nn {

/// 3-d convolution: [N, C_in, D, H, W] (or [C_in, D, H, W]) -> [N, C_out, Do, Ho, Wo]
/// (F::conv3d). weight [C_out, C_in / groups, kD, kH, kW], fan_in = C_in / groups * kD * kH * kW;
/// checks, initialization and print are ConvNdImpl's. With a padding_mode other than kZeros the
/// forward is F::pad(input, {w, w, h, h, d, d}, padding_mode) then F::conv3d with no padding; so
/// circular needs a batched input, as PyTorch 1.13.
class Conv3dImpl : public ConvNdImpl<3, Conv3dImpl> {
 public:
  using ConvNdImpl::ConvNdImpl;
};
WICK_MODULE(Conv3d);

}  // namespace wick::nn
