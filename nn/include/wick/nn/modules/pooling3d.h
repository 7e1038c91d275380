#pragma once
// MaxPool3d, AvgPool3d, AdaptiveAvgPool3d, AdaptiveMaxPool3d (torch.nn's), on F::max_pool3d,
// F::avg_pool3d, F::adaptive_avg_pool3d and F::adaptive_max_pool3d. Each takes [N, C, D, H, W] or
// an unbatched [C, D, H, W].
//
// LibTorch declares these beside the 2-d pooling layers in torch/nn/modules/pooling.h; wick keeps
// one concept per file, as for the 1-d layers. wick/nn/nn.h includes it. Their options and the
// layer templates they instantiate are in pooling_options.h and pooling_nd.h.
#include "wick/nn/modules/pooling_nd.h"

namespace wick::nn {

/// F::max_pool3d with fixed geometry; prints as PyTorch's
/// "MaxPool3d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)" (a size whose
/// three entries are equal prints as one number, as PyTorch prints an int argument).
/// forward_with_indices gives the flat position d H W + h W + w of each maximum
/// (F::max_pool3d_with_indices).
class MaxPool3dImpl : public MaxPoolImpl<3, MaxPool3dImpl> {
 public:
  using MaxPoolImpl::MaxPoolImpl;
};
WICK_MODULE(MaxPool3d);

/// F::avg_pool3d with fixed geometry; prints as PyTorch's
/// "AvgPool3d(kernel_size=3, stride=3, padding=0)".
class AvgPool3dImpl : public AvgPoolImpl<3, AvgPool3dImpl> {
 public:
  using AvgPoolImpl::AvgPoolImpl;
};
WICK_MODULE(AvgPool3d);

/// F::adaptive_avg_pool3d to a fixed output size; prints as PyTorch's
/// "AdaptiveAvgPool3d(output_size=(2, 3, 4))". A size below 1 is refused when built (ValueError).
class AdaptiveAvgPool3dImpl : public AdaptiveAvgPoolImpl<3, Int3, AdaptiveAvgPool3dImpl> {
 public:
  using AdaptiveAvgPoolImpl::AdaptiveAvgPoolImpl;
};
WICK_MODULE(AdaptiveAvgPool3d);

/// F::adaptive_max_pool3d to a fixed output size; prints as PyTorch's
/// "AdaptiveMaxPool3d(output_size=(2, 3, 4))". A size below 1 is refused when built (ValueError).
/// forward_with_indices gives the flat d H W + h W + w position of each maximum.
class AdaptiveMaxPool3dImpl : public AdaptiveMaxPoolImpl<3, Int3, AdaptiveMaxPool3dImpl> {
 public:
  using AdaptiveMaxPoolImpl::AdaptiveMaxPoolImpl;
};
WICK_MODULE(AdaptiveMaxPool3d);

}  // namespace wick::nn
