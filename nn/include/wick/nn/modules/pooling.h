#pragma once
// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, AdaptiveMaxPool2d (torch.nn's), on F::max_pool2d,
// F::avg_pool2d, F::adaptive_avg_pool2d and F::adaptive_max_pool2d. Each takes [N, C, H, W] or an
// unbatched [C, H, W]. Their options and the layer templates they instantiate are in
// pooling_options.h and pooling_nd.h (Note [N-d layer templates] in conv_nd.h).
#include "wick/nn/modules/pooling_nd.h"

namespace wick::nn {

/// F::max_pool2d with fixed geometry; forward_with_indices gives the flat h * W + w position of
/// each maximum (F::max_pool2d_with_indices). A stride with a zero is refused when built; a
/// negative one is left to F::max_pool2d.
class MaxPool2dImpl : public MaxPoolImpl<2, MaxPool2dImpl> {
 public:
  using MaxPoolImpl::MaxPoolImpl;
};
WICK_MODULE(MaxPool2d);

/// F::avg_pool2d with fixed geometry; prints as PyTorch's "AvgPool2d(kernel_size=3, stride=3,
/// padding=0)". A stride with a zero is refused when built; a negative one is left to
/// F::avg_pool2d.
class AvgPool2dImpl : public AvgPoolImpl<2, AvgPool2dImpl> {
 public:
  using AvgPoolImpl::AvgPoolImpl;
};
WICK_MODULE(AvgPool2d);

/// F::adaptive_avg_pool2d to a fixed output size; an output_size below 1 is left to
/// F::adaptive_avg_pool2d (ValueError at forward).
class AdaptiveAvgPool2dImpl : public AdaptiveAvgPoolImpl<2, Int2, AdaptiveAvgPool2dImpl> {
 public:
  using AdaptiveAvgPoolImpl::AdaptiveAvgPoolImpl;
};
WICK_MODULE(AdaptiveAvgPool2d);

/// F::adaptive_max_pool2d to a fixed output size, an entry of which may be std::nullopt to keep
/// the input's size; prints as PyTorch's "AdaptiveMaxPool2d(output_size=(None, 3))", and "3" when
/// both sizes are 3. forward_with_indices gives the flat h * W + w position of each maximum.
class AdaptiveMaxPool2dImpl : public AdaptiveMaxPoolImpl<2, OptionalInt2, AdaptiveMaxPool2dImpl> {
 public:
  using AdaptiveMaxPoolImpl::AdaptiveMaxPoolImpl;
};
WICK_MODULE(AdaptiveMaxPool2d);

}  // namespace wick::nn
