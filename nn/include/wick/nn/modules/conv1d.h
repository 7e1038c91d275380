#pragma once
// Conv1d (torch.nn.Conv1d), with padding_mode zeros, reflect, replicate or circular, as Conv2d.
//
// LibTorch declares Conv1d beside Conv2d in torch/nn/modules/conv.h (ConvNdImpl<1, ...>); wick
// keeps one concept per file, and gives the 1-d layers their own headers, so that a change to one
// convolution does not touch the other. wick/nn/nn.h includes both.
#include <optional>
#include <string>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv_options.h"  // ConvOptions<D>, ConvTransposeOptions<D> and their aliases

namespace wick::nn {

/// 1-d convolution: [N, C_in, L] (or [C_in, L]) -> [N, C_out, L_out] (F::conv1d). weight
/// [C_out, C_in / groups, kernel_size] ~ kaiming_uniform(a = sqrt(5)), bias ~
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = C_in / groups * kernel_size, as PyTorch; state_dict
/// keys "weight" and "bias". The constructor refuses (ValueError) channels or a kernel_size below
/// 1, stride or dilation below 1, negative padding, and groups that do not divide both channel
/// counts; padding=same with a stride other than 1 is a NotImplementedError, as Conv2d's. PyTorch
/// builds a layer with 0 channels or a kernel of 0 (and fails at forward); wick refuses it when
/// built, as Conv2d does. `tensor_options`: the parameters' dtype and device (see LinearImpl).
/// With a padding_mode other than kZeros the forward is PyTorch's, as Conv2d's: F::pad(input,
/// {p, p}, padding_mode) and then F::conv1d with no padding (for kSame, {left, total - left} with
/// total = dilation * (kernel_size - 1) and left = total / 2; kValid pads 0). So circular needs a
/// batched [N, C, L] input (NotImplementedError for [C, L], as PyTorch 1.13 refuses it too) and
/// reflect a padding below the input's length (ValueError).
class Conv1dImpl : public Cloneable<Conv1dImpl> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size, TensorOptions tensor_options = {})
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size), tensor_options) {}
  explicit Conv1dImpl(const Conv1dOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  /// Redraws weight and bias with PyTorch's rule (above), from the global generator.
  void reset_parameters();
  /// PyTorch's: "4, 6, kernel_size=(3,), stride=(1,)", then padding, dilation, groups and bias
  /// where they differ from the defaults.
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  int64_t kernel_size() const { return options_.kernel_size(); }
  int64_t stride() const { return options_.stride(); }
  /// The numeric padding (zero with a named padding, see named_padding()).
  int64_t padding() const;
  /// kSame or kValid when the padding is named, nullopt when it is numeric (as Conv2d's).
  std::optional<PaddingMode> named_padding() const;
  /// What the padding holds: kZeros, kReflect, kReplicate or kCircular.
  PadMode padding_mode() const { return options_.padding_mode(); }
  int64_t dilation() const { return options_.dilation(); }
  int64_t groups() const { return options_.groups(); }
  const Conv1dOptions& options() const { return options_; }

 private:
  Conv1dOptions options_;
  ParamSlot weight_, bias_;
  // F::pad's pads {left, right} for a padding_mode other than kZeros (PyTorch's
  // _reversed_padding_repeated_twice), computed once when the layer is built.
  std::vector<int64_t> mode_pads_;
};
WICK_MODULE(Conv1d);

}  // namespace wick::nn
