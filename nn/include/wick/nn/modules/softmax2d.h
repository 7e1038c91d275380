#pragma once
// Softmax2d (torch.nn.Softmax2d): softmax over the channels at every spatial position.
#include "wick/nn/cloneable.h"

namespace wick::nn {

/// softmax over dim -3 of a [C, H, W] or [N, C, H, W] input (ValueError for other ranks, where
/// PyTorch asserts). No options, parameters or buffers; prints as "Softmax2d()".
class Softmax2dImpl : public Cloneable<Softmax2dImpl> {
 public:
  Softmax2dImpl() = default;
  Tensor forward(const Tensor& input);
};
WICK_MODULE(Softmax2d);

}  // namespace wick::nn
