#pragma once
// MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool1d (torch.nn's), on F::max_pool1d,
// F::avg_pool1d, F::adaptive_avg_pool1d and F::adaptive_max_pool1d. Each takes [N, C, L] or an
// unbatched [C, L].
//
// LibTorch declares these beside the 2-d pooling layers in torch/nn/modules/pooling.h
// (MaxPoolImpl<1, ...>); wick keeps one concept per file, and gives the 1-d layers their own
// header. wick/nn/nn.h includes both. Their options and the layer templates they instantiate are in
// pooling_options.h and pooling_nd.h.
#include "wick/nn/modules/pooling_nd.h"

namespace wick::nn {

/// F::max_pool1d with fixed geometry; prints as PyTorch's
/// "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)".
/// forward_with_indices gives the position l of each maximum (F::max_pool1d_with_indices).
class MaxPool1dImpl : public MaxPoolImpl<1, MaxPool1dImpl> {
 public:
  using MaxPoolImpl::MaxPoolImpl;
};
WICK_MODULE(MaxPool1d);

/// F::avg_pool1d with fixed geometry; prints as PyTorch's
/// "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))" (1-tuples: PyTorch stores them so).
class AvgPool1dImpl : public AvgPoolImpl<1, AvgPool1dImpl> {
 public:
  using AvgPoolImpl::AvgPoolImpl;
};
WICK_MODULE(AvgPool1d);

/// F::adaptive_avg_pool1d to a fixed output length; prints as PyTorch's
/// "AdaptiveAvgPool1d(output_size=5)". An output_size below 1 is refused when built
/// (ValueError), as F::adaptive_avg_pool1d would refuse it at every forward.
class AdaptiveAvgPool1dImpl : public AdaptiveAvgPoolImpl<1, int64_t, AdaptiveAvgPool1dImpl> {
 public:
  using AdaptiveAvgPoolImpl::AdaptiveAvgPoolImpl;
};
WICK_MODULE(AdaptiveAvgPool1d);

/// F::adaptive_max_pool1d to a fixed output length; prints as PyTorch's
/// "AdaptiveMaxPool1d(output_size=5)". forward_with_indices gives the position l of each maximum.
class AdaptiveMaxPool1dImpl : public AdaptiveMaxPoolImpl<1, int64_t, AdaptiveMaxPool1dImpl> {
 public:
  using AdaptiveMaxPoolImpl::AdaptiveMaxPoolImpl;
};
WICK_MODULE(AdaptiveMaxPool1d);

}  // namespace wick::nn
