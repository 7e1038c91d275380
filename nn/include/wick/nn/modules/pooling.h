#pragma once
// MaxPool2d, AvgPool2d, AdaptiveAvgPool2d (torch.nn's).
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// F::max_pool2d with fixed geometry; stride 0 (default) means stride = kernel_size.
class MaxPool2d : public Cloneable<MaxPool2d> {
 public:
  explicit MaxPool2d(Int2 kernel_size, Int2 stride = 0, Int2 padding = 0, Int2 dilation = 1, bool ceil_mode = false);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

 private:
  Int2 kernel_size_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

/// F::avg_pool2d with fixed geometry; stride 0 (default) means stride = kernel_size.
class AvgPool2d : public Cloneable<AvgPool2d> {
 public:
  explicit AvgPool2d(Int2 kernel_size, Int2 stride = 0, Int2 padding = 0, bool ceil_mode = false,
                     bool count_include_pad = true);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

 private:
  Int2 kernel_size_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
};

/// F::adaptive_avg_pool2d to a fixed output size.
class AdaptiveAvgPool2d : public Cloneable<AdaptiveAvgPool2d> {
 public:
  explicit AdaptiveAvgPool2d(Int2 output_size);
  Tensor forward(const Tensor& input);
  std::string extra_repr() const override;

 private:
  Int2 output_size_;
};

}  // namespace wick::nn
