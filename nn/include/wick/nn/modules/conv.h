#pragma once
// Conv2d (torch.nn.Conv2d), with padding_mode zeros, reflect, replicate or circular.
#include "wick/nn/modules/conv_nd.h"  // ConvNdImpl<D, Derived>, ConvOptions<D> and their aliases

namespace wick::nn {

/// 2-d convolution: [N, C_in, H, W] (or [C_in, H, W]) -> [N, C_out, oh, ow] (F::conv2d). weight
/// [C_out, C_in / groups, kh, kw], fan_in = C_in / groups * kh * kw; checks, initialization and
/// print are ConvNdImpl's. With a padding_mode other than kZeros the forward is F::pad(input, {w,
/// w, h, h}, padding_mode) and then F::conv2d with no padding, so circular needs a batched
/// [N, C, H, W] input (NotImplementedError for [C, H, W], as PyTorch 1.13), and reflect a padding
/// below the input's height and width (ValueError).
class Conv2dImpl : public ConvNdImpl<2, Conv2dImpl> {
 public:
  using ConvNdImpl::ConvNdImpl;
};
WICK_MODULE(Conv2d);

}  // namespace wick::nn
