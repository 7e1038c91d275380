#pragma once
// ConvTranspose1d, ConvTranspose2d and ConvTranspose3d (torch.nn's), the layers around
// F::conv_transpose1d / 2d / 3d (wick/nn/functional_conv_transpose.h), and
// ConvTransposeNdImpl<D, Derived>, the layer the three share, written once over D = 1, 2 or 3
// spatial axes (LibTorch's ConvTransposeNdImpl; Note [N-d layer templates] in conv_nd.h).
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

/// A D-d transposed convolution over F::conv_transpose1d / 2d / 3d; Derived is the layer. weight
/// [C_in, C_out / groups, k...] (PyTorch's layout, input channels first) ~ kaiming_uniform(a =
/// sqrt(5)) and bias [C_out] ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)), where, as in PyTorch, fan_in is
/// computed from the weight as for any other: weight.size(1) * the kernel's sizes = C_out / groups
/// * the kernel's sizes. state_dict keys "weight" and "bias".
template <size_t D, class Derived>
class ConvTransposeNdImpl : public Cloneable<Derived> {
 public:
  using size_type = conv_size_t<D>;

  ConvTransposeNdImpl(int64_t in_channels, int64_t out_channels, size_type kernel_size,
                      TensorOptions tensor_options = {})
      : ConvTransposeNdImpl(ConvTransposeOptions<D>(in_channels, out_channels, kernel_size), tensor_options) {}
  /// Refuses (ValueError) channels or a kernel_size below 1, stride or dilation below 1, negative
  /// padding or output_padding, an output_padding not below the stride or the dilation on each
  /// axis, groups that do not divide both channel counts, and a padding_mode other than kZeros.
  /// `tensor_options`: the parameters' dtype and device (see LinearImpl).
  explicit ConvTransposeNdImpl(const ConvTransposeOptions<D>& options, TensorOptions tensor_options = {});
  /// The transposed convolution with the layer's output_padding; with `output_size` (the D
  /// spatial sizes, or the whole output shape with its channel and, for a batched input, batch
  /// dims), the output_padding that gives that size instead, as PyTorch's forward(input,
  /// output_size): a size outside [minimum, minimum + stride - 1], where the minimum is the size
  /// with no output_padding, is a ValueError naming the valid range.
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);
  /// forward_value({input}) or ({input, output_size}), output_size None or a list of ints.
  Value forward_value(const std::vector<Value>& args) override;
  /// Redraws weight and bias with PyTorch's rule (above), from the global generator.
  void reset_parameters();
  /// PyTorch's: "4, 6, kernel_size=(3, 3), stride=(1, 1)" ("(3,)" for one axis), then padding,
  /// dilation, output_padding, groups and bias where they differ from the defaults.
  std::string extra_repr() const override;

  const Tensor& weight() const { return this->param(weight_); }
  const Tensor& bias() const { return this->param(bias_); }
  int64_t in_channels() const { return options_.in_channels(); }
  int64_t out_channels() const { return options_.out_channels(); }
  size_type kernel_size() const { return options_.kernel_size(); }
  size_type stride() const { return options_.stride(); }
  size_type padding() const { return options_.padding(); }
  size_type output_padding() const { return options_.output_padding(); }
  int64_t groups() const { return options_.groups(); }
  size_type dilation() const { return options_.dilation(); }
  PadMode padding_mode() const { return options_.padding_mode(); }
  const ConvTransposeOptions<D>& options() const { return options_; }

 private:
  ConvTransposeOptions<D> options_;
  ParamSlot weight_, bias_;
};

/// 2-d transposed convolution: [N, C_in, H, W] (or [C_in, H, W]) -> [N, C_out, H_out, W_out]
/// (F::conv_transpose2d). weight [C_in, C_out / groups, kh, kw], fan_in = C_out / groups * kh *
/// kw; forward's `output_size` is {H_out, W_out}, or the whole output shape.
class ConvTranspose2dImpl : public ConvTransposeNdImpl<2, ConvTranspose2dImpl> {
 public:
  using ConvTransposeNdImpl::ConvTransposeNdImpl;
};
WICK_MODULE(ConvTranspose2d);

/// 1-d transposed convolution: [N, C_in, L] (or [C_in, L]) -> [N, C_out, L_out]
/// (F::conv_transpose1d). weight [C_in, C_out / groups, kernel_size], bias [C_out], initialized
/// and checked as ConvTranspose2d's (fan_in = C_out / groups * kernel_size); forward's
/// `output_size` is {L_out}, or the whole output shape.
class ConvTranspose1dImpl : public ConvTransposeNdImpl<1, ConvTranspose1dImpl> {
 public:
  using ConvTransposeNdImpl::ConvTransposeNdImpl;
};
WICK_MODULE(ConvTranspose1d);

/// 3-d transposed convolution: [N, C_in, D, H, W] (or [C_in, D, H, W]) -> [N, C_out, D_out, H_out,
/// W_out] (F::conv_transpose3d). weight [C_in, C_out / groups, kd, kh, kw], bias [C_out],
/// initialized and checked as ConvTranspose2d's (fan_in = C_out / groups * kd * kh * kw); forward's
/// `output_size` is {D_out, H_out, W_out}, or the whole output shape.
class ConvTranspose3dImpl : public ConvTransposeNdImpl<3, ConvTranspose3dImpl> {
 public:
  using ConvTransposeNdImpl::ConvTransposeNdImpl;
};
WICK_MODULE(ConvTranspose3d);

}  // namespace wick::nn
