#pragma once
// Conv3d (torch.nn.Conv3d), with padding_mode zeros, reflect, replicate or circular, as Conv2d.
//
// LibTorch declares Conv3d beside Conv2d in torch/nn/modules/conv.h; wick keeps one concept per
// file, as for Conv1d. wick/nn/nn.h includes it.
#include <optional>
#include <string>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv_options.h"  // ConvOptions<D>, ConvTransposeOptions<D> and their aliases

namespace wick::nn {

/// 3-d convolution: [N, C_in, D, H, W] (or [C_in, D, H, W]) -> [N, C_out, Do, Ho, Wo]
/// (F::conv3d). weight [C_out, C_in / groups, kD, kH, kW] ~ kaiming_uniform(a = sqrt(5)), bias ~
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = C_in / groups * kD * kH * kW, as PyTorch;
/// state_dict keys "weight" and "bias". The constructor refuses (ValueError) channels or kernel
/// sizes below 1, stride or dilation below 1, negative padding and groups that do not divide both
/// channel counts; padding=same with a stride other than 1 is a NotImplementedError. With a
/// padding_mode other than kZeros the forward is PyTorch's: F::pad(input, {w, w, h, h, d, d},
/// padding_mode) then F::conv3d with no padding (for kSame, {left, total - left} per dim); so
/// circular needs a batched input, as PyTorch 1.13. `tensor_options`: the parameters' dtype and
/// device (see LinearImpl).
class Conv3dImpl : public Cloneable<Conv3dImpl> {
 public:
  Conv3dImpl(int64_t in_channels, int64_t out_channels, Int3 kernel_size, TensorOptions tensor_options = {})
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, kernel_size), tensor_options) {}
  explicit Conv3dImpl(const Conv3dOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  /// Redraws weight and bias with PyTorch's rule (above), from the global generator.
  void reset_parameters();
  /// PyTorch's: "4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1)", then padding, dilation, groups,
  /// bias and padding_mode where they differ from the defaults.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  Int3 kernel_size() const { return options_.kernel_size(); }
  Int3 stride() const { return options_.stride(); }
  /// The numeric padding (zero with a named padding, see named_padding()).
  Int3 padding() const;
  /// kSame or kValid when the padding is named, nullopt when it is numeric.
  std::optional<PaddingMode> named_padding() const;
  PadMode padding_mode() const { return options_.padding_mode(); }
  Int3 dilation() const { return options_.dilation(); }
  int64_t groups() const { return options_.groups(); }
  const Conv3dOptions& options() const { return options_; }

 private:
  Conv3dOptions options_;
  ParamSlot weight_, bias_;
  // F::pad's pads {w, w, h, h, d, d} for a padding_mode other than kZeros, computed when built.
  std::vector<int64_t> mode_pads_;
};
WICK_MODULE(Conv3d);

}  // namespace wick::nn
