#pragma once
// ConvTranspose1d, ConvTranspose2d and ConvTranspose3d (torch.nn's), the layers around
// F::conv_transpose1d / 2d / 3d (wick/nn/functional_conv_transpose.h).
//
// LibTorch declares them in torch/nn/modules/conv.h beside the convolutions; wick keeps the
// transposed convolutions, one concept, in their own header. wick/nn/nn.h includes it.
#include <optional>
#include <string>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv_options.h"  // ConvOptions<D>, ConvTransposeOptions<D> and their aliases

namespace wick::nn {

/// 2-d transposed convolution: [N, C_in, H, W] (or [C_in, H, W]) -> [N, C_out, H_out, W_out]
/// (F::conv_transpose2d). weight [C_in, C_out / groups, kh, kw] (PyTorch's layout, input channels
/// first) ~ kaiming_uniform(a = sqrt(5)) and bias [C_out] ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
/// where, as in PyTorch, fan_in is computed from the weight as for any other: weight.size(1) *
/// kh * kw = C_out / groups * kh * kw. state_dict keys "weight" and "bias". The constructor
/// refuses (ValueError) channels or a kernel_size below 1, stride or dilation below 1, negative
/// padding or output_padding, an output_padding not below the stride or the dilation on each
/// axis, groups that do not divide both channel counts, and a padding_mode other than kZeros.
/// `tensor_options`: the parameters' dtype and device (see LinearImpl).
class ConvTranspose2dImpl : public Cloneable<ConvTranspose2dImpl> {
 public:
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, Int2 kernel_size, TensorOptions tensor_options = {})
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size), tensor_options) {}
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options, TensorOptions tensor_options = {});
  /// The transposed convolution with the layer's output_padding; with `output_size` (the spatial
  /// sizes {H_out, W_out}, or the whole output shape with its channel and, for a batched input,
  /// batch dims), the output_padding that gives that size instead, as PyTorch's forward(input,
  /// output_size): a size outside [minimum, minimum + stride - 1], where the minimum is the size
  /// with no output_padding, is a ValueError naming the valid range.
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  /// forward_value({input}) or ({input, output_size}), output_size None or a list of ints.
  Value forward_value(const std::vector<Value>& args) override;
  /// Redraws weight and bias with PyTorch's rule (above), from the global generator.
  void reset_parameters();
  /// PyTorch's: "4, 6, kernel_size=(3, 3), stride=(1, 1)", then padding, dilation,
  /// output_padding, groups and bias where they differ from the defaults.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  Int2 kernel_size() const { return options_.kernel_size(); }
  Int2 stride() const { return options_.stride(); }
  Int2 padding() const { return options_.padding(); }
  Int2 output_padding() const { return options_.output_padding(); }
  int64_t groups() const { return options_.groups(); }
  Int2 dilation() const { return options_.dilation(); }
  PadMode padding_mode() const { return options_.padding_mode(); }
  const ConvTranspose2dOptions& options() const { return options_; }

 private:
  ConvTranspose2dOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(ConvTranspose2d);

/// 1-d transposed convolution: [N, C_in, L] (or [C_in, L]) -> [N, C_out, L_out]
/// (F::conv_transpose1d). weight [C_in, C_out / groups, kernel_size], bias [C_out], initialized
/// and checked as ConvTranspose2d's (fan_in = C_out / groups * kernel_size).
class ConvTranspose1dImpl : public Cloneable<ConvTranspose1dImpl> {
 public:
  ConvTranspose1dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size, TensorOptions tensor_options = {})
      : ConvTranspose1dImpl(ConvTranspose1dOptions(in_channels, out_channels, kernel_size), tensor_options) {}
  explicit ConvTranspose1dImpl(const ConvTranspose1dOptions& options, TensorOptions tensor_options = {});
  /// As ConvTranspose2d's: `output_size` is {L_out}, or the whole output shape.
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  /// forward_value({input}) or ({input, output_size}), output_size None or a list of ints.
  Value forward_value(const std::vector<Value>& args) override;
  void reset_parameters();
  /// PyTorch's: "4, 6, kernel_size=(3,), stride=(1,)", then padding, dilation, output_padding,
  /// groups and bias where they differ from the defaults.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  int64_t kernel_size() const { return options_.kernel_size(); }
  int64_t stride() const { return options_.stride(); }
  int64_t padding() const { return options_.padding(); }
  int64_t output_padding() const { return options_.output_padding(); }
  int64_t groups() const { return options_.groups(); }
  int64_t dilation() const { return options_.dilation(); }
  PadMode padding_mode() const { return options_.padding_mode(); }
  const ConvTranspose1dOptions& options() const { return options_; }

 private:
  ConvTranspose1dOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(ConvTranspose1d);

/// 3-d transposed convolution: [N, C_in, D, H, W] (or [C_in, D, H, W]) -> [N, C_out, D_out, H_out,
/// W_out] (F::conv_transpose3d). weight [C_in, C_out / groups, kd, kh, kw], bias [C_out],
/// initialized and checked as ConvTranspose2d's (fan_in = C_out / groups * kd * kh * kw).
class ConvTranspose3dImpl : public Cloneable<ConvTranspose3dImpl> {
 public:
  ConvTranspose3dImpl(int64_t in_channels, int64_t out_channels, Int3 kernel_size, TensorOptions tensor_options = {})
      : ConvTranspose3dImpl(ConvTranspose3dOptions(in_channels, out_channels, kernel_size), tensor_options) {}
  explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& options, TensorOptions tensor_options = {});
  /// As ConvTranspose2d's: `output_size` is {D_out, H_out, W_out}, or the whole output shape.
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  /// forward_value({input}) or ({input, output_size}), output_size None or a list of ints.
  Value forward_value(const std::vector<Value>& args) override;
  void reset_parameters();
  /// PyTorch's: "4, 6, kernel_size=(3, 3, 3), stride=(1, 1, 1)", then padding, dilation,
  /// output_padding, groups and bias where they differ from the defaults.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  Int3 kernel_size() const { return options_.kernel_size(); }
  Int3 stride() const { return options_.stride(); }
  Int3 padding() const { return options_.padding(); }
  Int3 output_padding() const { return options_.output_padding(); }
  int64_t groups() const { return options_.groups(); }
  Int3 dilation() const { return options_.dilation(); }
  PadMode padding_mode() const { return options_.padding_mode(); }
  const ConvTranspose3dOptions& options() const { return options_; }

 private:
  ConvTranspose3dOptions options_;
  ParamSlot weight_, bias_;
};
WICK_MODULE(ConvTranspose3d);

}  // namespace wick::nn
