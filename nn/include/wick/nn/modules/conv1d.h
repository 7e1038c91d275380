#pragma once
// Conv1d (torch.nn.Conv1d), with padding_mode zeros, reflect, replicate or circular, as Conv2d.
//
// LibTorch declares Conv1d beside Conv2d in torch/nn/modules/conv.h (ConvNdImpl<1, ...>); wick
// keeps one concept per file, and gives the 1-d layers their own headers, so that a change to one
// convolution does not touch the other. wick/nn/nn.h includes both.
#include "wick/nn/modules/conv_nd.h"  // ConvNdImpl<D, Derived>, ConvOptions<D> and their aliases

namespace wick::nn {

/// 1-d convolution: [N, C_in, L] (or [C_in, L]) -> [N, C_out, L_out] (F::conv1d). weight
/// [C_out, C_in / groups, kernel_size], fan_in = C_in / groups * kernel_size; checks,
/// initialization and print are ConvNdImpl's ("4, 6, kernel_size=(3,), stride=(1,)"). PyTorch
/// builds a layer with 0 channels or a kernel of 0 (and fails at forward); wick refuses it when
/// built, as Conv2d does. With a padding_mode other than kZeros the forward is F::pad(input, {p,
/// p}, padding_mode) and then F::conv1d with no padding, so circular needs a batched [N, C, L]
/// input (NotImplementedError for [C, L], as PyTorch 1.13 refuses it too) and reflect a padding
/// below the input's length (ValueError).
class Conv1dImpl : public ConvNdImpl<1, Conv1dImpl> {
 public:
  using ConvNdImpl::ConvNdImpl;
};
WICK_MODULE(Conv1d);

}  // namespace wick::nn
