#pragma once
// Conv2d (torch.nn.Conv2d; padding_mode other than zeros is not supported).
#include <optional>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"

namespace wick::nn {

/// 2-d convolution: [N, C_in, H, W] -> [N, C_out, oh, ow] (F::conv2d). weight
/// [C_out, C_in / groups, kh, kw] ~ kaiming_uniform(a = sqrt(5)), bias ~ U(-1/sqrt(fan_in),
/// 1/sqrt(fan_in)), fan_in = C_in / groups * kh * kw, as PyTorch.
///
/// Argument order: PyTorch's Python constructor puts groups before bias; wick keeps bias 7th
/// (where every existing call passes it) and takes groups after it. LibTorch itself sets both
/// through a Conv2dOptions builder, so there is no positional C++ order to follow.
class Conv2d : public Cloneable<Conv2d> {
 public:
  Conv2d(int64_t in_channels, int64_t out_channels, Int2 kernel_size, Int2 stride = 1, Int2 padding = 0,
         Int2 dilation = 1, bool bias = true, int64_t groups = 1, TensorOptions options = {});
  /// With a named padding: kSame (output size = input size; stride must be 1) or kValid.
  Conv2d(int64_t in_channels, int64_t out_channels, Int2 kernel_size, Int2 stride, PaddingMode padding,
         Int2 dilation = 1, bool bias = true, int64_t groups = 1, TensorOptions options = {});
  Tensor forward(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  Int2 kernel_size() const { return kernel_size_; }
  Int2 stride() const { return stride_; }
  /// The numeric padding (zero with a named padding, see padding_mode()).
  Int2 padding() const { return padding_; }
  std::optional<PaddingMode> padding_mode() const { return padding_mode_; }
  Int2 dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }

 private:
  int64_t in_channels_, out_channels_, groups_;
  Int2 kernel_size_, stride_, padding_, dilation_;
  std::optional<PaddingMode> padding_mode_;
  ParamSlot weight_, bias_;
};

}  // namespace wick::nn
