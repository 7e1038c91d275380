#pragma once
// Conv2d (torch.nn.Conv2d), with padding_mode zeros, reflect, replicate or circular.
#include <optional>
#include <utility>
#include <vector>

#include "wick/core/tensor_options.h"
#include "wick/nn/cloneable.h"
#include "wick/nn/functional.h"
#include "wick/nn/modules/conv_options.h"  // ConvOptions<D>, ConvTransposeOptions<D> and their aliases

namespace wick::nn {

/// 2-d convolution: [N, C_in, H, W] -> [N, C_out, oh, ow] (F::conv2d). weight
/// [C_out, C_in / groups, kh, kw] ~ kaiming_uniform(a = sqrt(5)), bias ~ U(-1/sqrt(fan_in),
/// 1/sqrt(fan_in)), fan_in = C_in / groups * kh * kw, as PyTorch. `tensor_options`: the
/// parameters' dtype and device (see LinearImpl). With a padding_mode other than kZeros the
/// forward is PyTorch's: F::pad(input, {w, w, h, h}, padding_mode) and then F::conv2d with no
/// padding (for kSame, {left, total - left, top, total - top} with total = dilation * (k - 1) and
/// left = total / 2; kValid pads 0). So the input has the rank F::pad's mode takes: circular
/// needs a batched [N, C, H, W] input (NotImplementedError for [C, H, W], as PyTorch 1.13), and
/// reflect a padding below the input's height and width (ValueError).
class Conv2dImpl : public Cloneable<Conv2dImpl> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, Int2 kernel_size, TensorOptions tensor_options = {})
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size), tensor_options) {}
  explicit Conv2dImpl(const Conv2dOptions& options, TensorOptions tensor_options = {});
  Tensor forward(const Tensor& input);
  void reset_parameters();
  std::string extra_repr() const override;

  const Tensor& weight() const { return param(weight_); }
  const Tensor& bias() const { return param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  Int2 kernel_size() const { return options_.kernel_size(); }
  Int2 stride() const { return options_.stride(); }
  /// The numeric padding (zero with a named padding, see named_padding()).
  Int2 padding() const;
  /// kSame or kValid when the padding is named, nullopt when it is numeric.
  std::optional<PaddingMode> named_padding() const;
  /// What the padding holds: kZeros, kReflect, kReplicate or kCircular.
  PadMode padding_mode() const { return options_.padding_mode(); }
  Int2 dilation() const { return options_.dilation(); }
  int64_t groups() const { return options_.groups(); }
  const Conv2dOptions& options() const { return options_; }

 private:
  Conv2dOptions options_;
  ParamSlot weight_, bias_;
  // F::pad's pads for a padding_mode other than kZeros, {left, right, top, bottom} (PyTorch's
  // _reversed_padding_repeated_twice), computed once when the layer is built.
  std::vector<int64_t> mode_pads_;
};
WICK_MODULE(Conv2d);

}  // namespace wick::nn
